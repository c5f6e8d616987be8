"""The use cases of a game: create it, take orders, pass deadlines.

Each use case runs in one unit of work: the events, the outbox letters and
(for mail) the inbox row change together or not at all. A stale writer
(another process appended first) is retried from a fresh state.
"""

from __future__ import annotations

import re
import secrets as secrets_module
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from sqlalchemy import Engine

from pbem.mail.tokens import bot_address, game_address, moderator_secret
from pbem.orders.language import Actor, Orders, Written, parse_orders
from pbem.orders.moderator import Confirm, rollback_text
from pbem.rules import engine as rules
from pbem.rules import table
from pbem.rules.core.commands import (
    QueueOrders,
    ReplacePlayer,
    RevealSeed,
    RollBack,
)
from pbem.rules.core.draws import Draws, commitment
from pbem.rules.core.rejection import NotYourTurn, Rejection
from pbem.rules.core.state import GameState, Player
from pbem.rules.ruleset.options import OptionError, validate_options
from pbem.rules.view import question_gist
from pbem.store.unit_of_work import UnitOfWork

from . import intent
from .batch import (
    Batch,
    GameError,
    letters_for,
    open_game,
    retrying,
    sync_nations,
)
from .choices import what_became
from .letters import Letters
from .moderation import deadline_on_resume, resend_prompts
from .moderation import tell as tell_moderated
from .moderation import welcome as welcome_moderator
from .observers import tell_observers
from .origins import Letter, Said
from .pictures import board_picture
from .press_replies import PressReply, as_press, sent_press
from .projector import load_state
from .links import letter_link
from .queries import answer as queries_answer
from .rollback import PREVIEW_HEADLINE, PREVIEW_SUBJECT, after_rollback, preview, previewed, rolled_back
from .screening import absences_ahead, newcomers_allowed, press_allowed
from .seats import hand_over
from .settings import Settings
from .steps import after_change, announce, play_kept, reveal_at_end, set_deadline

__all__ = ["GameError", "NewPlayer", "Receipt", "create_game", "parse_player", "submit", "take_orders"]

GAME_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
#: How `parse_player` marks a seat for the server's bot ("bot:planner" on the command line): never an address.
BOT_PREFIX = "bot:"
#: Options the service itself reads; every other option belongs to the rules.
SERVICE_OPTIONS = {"deadline-hours", "reminder-hours", "press", "missed-limit", "absence", "absence-days", intent.ERRORS_OPTION}
#: What press a game allows: signed, anonymous ("grey"), or none.
PRESS_KINDS = ("on", "grey", "off")
NOTHING_NEEDED = "Nothing more is needed from you now."
# -- creating a game ---------------------------------------------------------


@dataclass(frozen=True)
class NewPlayer:
    name: str
    email: str
    nation: str | None = None


def parse_player(spec: str) -> NewPlayer:
    """NAME:EMAIL[:NATION], or bot:STRATEGY[:NATION] for a seat the server's bot plays, as on the command line."""
    parts = [p.strip() for p in spec.split(":")]
    if parts[0].lower() == "bot" and len(parts) in (2, 3):
        if parts[1].lower() not in table.BOT_STRATEGIES:
            raise GameError(f"a bot plays as {', '.join(table.BOT_STRATEGIES)}, not {parts[1]!r}")
        return NewPlayer("", f"{BOT_PREFIX}{parts[1].lower()}", parts[2] if len(parts) == 3 and parts[2] else None)
    if len(parts) not in (2, 3) or not parts[0] or "@" not in parts[1]:
        raise GameError(f"a player is NAME:EMAIL or NAME:EMAIL:NATION, not {spec!r}")
    return NewPlayer(parts[0], parts[1], parts[2] if len(parts) == 3 and parts[2] else None)


def create_game(
    db: Engine,
    settings: Settings,
    game_id: str,
    players: Sequence[NewPlayer],
    *,
    options: dict[str, str] | None = None,
    seed: str | None = None,
    moderator_email: str | None = None,
    now: datetime,
) -> GameState:
    game_id = game_id.strip().lower()
    if not GAME_ID.match(game_id):
        raise GameError("a game name is 1-40 lower-case letters, digits and dashes, starting with a letter or digit")
    options = dict(options or {})
    service = {k: options.pop(k) for k in list(options) if k in SERVICE_OPTIONS or k.startswith("deadline-hours-")}
    for key, value in service.items():
        if key.startswith("deadline-hours") and not (value.isdigit() and int(value) > 0):
            raise GameError(f"{key} takes a whole number of hours")
        if key.startswith("deadline-hours-") and key.removeprefix("deadline-hours-") not in rules.PHASES:
            raise GameError(f"{key}: no phase called {key.removeprefix('deadline-hours-')!r}; one of " + ", ".join(rules.PHASES))
    if "press" in service and service["press"] not in PRESS_KINDS:
        raise GameError("press takes one of: " + ", ".join(PRESS_KINDS))
    if "absence" in service and service["absence"] not in ("extend", "defaults"):
        raise GameError("absence takes extend (deadlines wait for an absent player) or defaults")
    if service.get(intent.ERRORS_OPTION, "step") not in intent.ERRORS_POLICIES:
        raise GameError("errors takes step (a refused line holds the orders that close a step) or hold (the whole message)")
    if "absence-days" in service and not service["absence-days"].isdigit():
        raise GameError("absence-days takes a whole number of days")
    if "missed-limit" in service and not service["missed-limit"].isdigit():
        raise GameError("missed-limit takes a whole number (0: the moderator is never asked)")
    if "reminder-hours" in service and not service["reminder-hours"].isdigit():
        raise GameError("reminder-hours takes a whole number of hours (0: no reminders)")
    try:
        rules_options = validate_options(options)
    except OptionError as exc:
        raise GameError(str(exc)) from None
    secret_seed = seed if seed else secrets_module.token_hex(32)

    def work(uow: UnitOfWork) -> GameState:
        if uow.games.get(game_id) is not None:
            raise GameError(f"a game called {game_id!r} already exists")
        game = uow.games.create(
            game_id,
            ruleset="advciv-1991",
            moderator_email=moderator_email or settings.sender,
            now=now,
            options={**rules_options, **service},
            secret_seed=secret_seed,
        )
        player_secrets: dict[int, str] = {}
        listed = []
        bots: dict[int, str] = {}  # seat -> strategy, for `bot:planner` players
        for number, p in enumerate(players, 1):
            secret = secrets_module.token_urlsafe(6)
            strategy = p.email.removeprefix(BOT_PREFIX) if p.email.startswith(BOT_PREFIX) else ""
            name = p.name or f"Bot {number} ({strategy})"
            pid = uow.players.add(game_id, name, bot_address(game_id, 0) if strategy else p.email, None, secret)
            if strategy:  # its address of record names its seat, known once the seat is
                bots[pid] = strategy
                uow.players.hand_over(pid, name, bot_address(game_id, pid), secret)
            else:
                player_secrets[pid] = secret
            listed.append((pid, name, p.nation))
        draws = Draws(secret_seed)
        try:
            events = rules.create(game_id, listed, rules_options, commitment(secret_seed), draws)
        except Rejection as exc:
            raise GameError(str(exc)) from None
        batch = Batch(uow, rules.new_game(game_id), draws, now)
        before = batch.state
        batch.record(events, actor="moderator", source="cli")
        for pid, strategy in bots.items():  # recorded as the moderator's hand-over, so verify re-derives it
            seat = batch.state.player(pid)
            batch.decide(ReplacePlayer(pid, seat.name, "a bot plays this seat from the start", bot=strategy),
                         actor="moderator", source="cli")
        for player in batch.state.players:
            if player.nation:
                uow.players.set_nation(player.id, player.nation)
        letters = letters_for(uow, settings, game, now)
        letters.start(batch.state, batch.chain_head, player_secrets)
        after_change(batch, letters, game, settings, before)
        if game.moderator_email != settings.sender:  # after the deadline is set: his first letter names it
            welcome_moderator(letters, batch.state, game.moderator_email,
                              moderator_secret(bytes.fromhex(game.reply_secret), game_id))
        return batch.state

    return retrying(db, work)


# -- orders --------------------------------------------------------------------


@dataclass
class Receipt:
    """What the server understood of one message, as the acknowledgement tells it."""

    game: str
    player: str
    accepted: list[str] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    on_file: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    help: list[str] = field(default_factory=list)
    deadline: str | None = None
    ignored: list[str] = field(default_factory=list)
    subject: str = ""  # when orders were held: the acknowledgement's subject says the step is still open
    headline: str = ""  # and its first line, what was held and what to send again

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def nothing_found(self) -> bool:
        """No order, no refused line and no HELP: the message held nothing the server could act on."""
        return not self.accepted and not self.errors and not self.help

    def lines(self) -> list[str]:
        """The acknowledgement as `pbem submit` prints it, one line each.

        An order line or a refused one is one line: a line feed a player put
        in it is his, and the printer shows it escaped (`pbem.cli.output`). A
        note or an answer (HELP, HISTORY) is of several lines, split here.
        The refused line is quoted as it was written, not as Python's repr:
        the printer escapes it, and repr would escape it a second time.
        """
        lines = [f"Game {self.game}: orders from {self.player}"]
        if self.headline:
            lines.append(f"  {self.headline}")
        lines += [f"  accepted: {a}" for a in self.accepted]
        for e in self.errors:
            hint = f" (did you mean: {', '.join(e['suggestions'])}?)" if e["suggestions"] else ""
            lines.append(f"  line {e['line']} rejected: '{e['text']}': {e['reason']}{hint}")
        lines += [f"  on file: {o}" for o in self.on_file]
        lines += [line for n in self.notes for line in f"  note: {n}".split("\n")]
        lines += [line for answer in self.help for line in answer.split("\n")]
        if self.deadline:
            lines.append(f"  next deadline: {self.deadline}")
        if self.ignored:
            lines.append(f"  not read as orders: {len(self.ignored)} line{'s' if len(self.ignored) != 1 else ''}")
        if self.nothing_found:
            lines.append("  no orders found in the message")
        return lines


def _on_file(state: GameState, player: Player | None) -> list[str]:
    if player is None:  # the moderator: who is asked, for what, in a line each
        return [f"Asked now: {asked.name} ({asked.nation or 'no nation yet'}): {question_gist(p.question)}"
                for p in rules.pending(state).values() for asked in [state.player(p.player_id)]] or [
                "Nobody is asked for orders now."]
    out = []
    if player.nation:
        out.append(f"You play {player.nation}.")
        where = [f"{a} ({area.tokens[player.nation]})" for a, area in state.areas.items() if player.nation in area.tokens]
        if where:
            out.append("Your tokens stand in " + ", ".join(where) + ".")
    mine = [p for p in rules.pending(state).values() if p.player_id == player.id]
    kept = table.queued_orders(state, player.id)
    if player.id in table.kicked(state):
        out.append("The moderator took you out of this game: your nation plays by its defaults.")
    elif kept:
        out.append("Kept for your turn in this phase: " + "; ".join(kept) + ".")
    out.append(("Still needed from you: " + mine[0].question) if mine else NOTHING_NEEDED)
    return out


def take_orders(
    uow: UnitOfWork,
    settings: Settings,
    game_id: str,
    actor: Actor,
    text: str | Written,
    *,
    now: datetime,
    source: str,
    message_id: str | None = None,
    recipient: str | None = None,
    notes: Sequence[str] = (),
    in_reply_to: str | None = None,
    origin: str = "",
    quoted_orders: Sequence[str] = (),
    ack_key: str | None = None,
    press_reply: PressReply | None = None,
    letter: Letter | None = None,
) -> Receipt:
    """Parse and decide every order of one message; record, acknowledge and prompt.

    ``message_id`` keys the orders against a second delivery; ``in_reply_to``
    (default: the same) threads the acknowledgement; ``origin`` is a line the
    acknowledgement adds about where the orders came from. ``quoted_orders``
    are lines the player wrote inside a quote: each that reads as an order
    attempt (a verb of ours first) is played or named with its reason in the
    acknowledgement; prose a client rewrapped there is no attempt and no error.
    ``press_reply``: the message came to a press letter's reply address; with
    no order in it, it is relayed as press (pbem.service.press_replies).
    ``letter``: the mail's Subject and Date, noted with each order beside the
    line as written (`origins`), for the dispute that quotes it back.

    A message is one intent (`intent`): when a line of it is refused, its
    orders that would close the player's step are held, and the
    acknowledgement says first that the step is still open.
    """
    batch, game = open_game(uow, game_id, now)
    before = batch.state
    player = batch.state.player(actor.player_id) if actor.player_id is not None else None
    label = (f"{player.name} ({player.nation})" if player.nation else player.name) if player else "moderator"
    address_of_sender = recipient or (uow.players.by_id(player.id).email if player else game.moderator_email)
    receipt = Receipt(game_id, label, notes=list(notes))
    orders = press_allowed(parse_orders(text, batch.state, actor), (game.options or {}).get("press", "on"))
    orders = newcomers_allowed(uow, game_id, batch.state, orders)
    orders = absences_ahead(orders, now)
    orders = as_press(uow, batch.state, player, orders, press_reply, game.options)  # a reply to press (press_replies)
    receipt.ignored = list(orders.ignored)
    receipt.notes.extend(orders.notes)
    quoted = parse_orders("\n".join(quoted_orders), batch.state, actor) if quoted_orders else None
    tentative = [line for line in quoted.lines if line.command is not None or line.error] if quoted else []
    who = f"player:{actor.player_id}" if actor.player_id is not None else "moderator"
    if player is not None and table.bot_strategy(batch.state, player.id) and source.startswith("mail:"):
        source = "bot:" + source.removeprefix("mail:")  # the server's bot wrote it (bot_seats), by mail all the same
    on_behalf: list[tuple[int, str]] = []  # FOR <nation>: the moderator's orders for a player, who is told
    out = table.kicked(batch.state).get(player.id) if player else None
    main = len(orders.lines)
    held: list[tuple[int, object]] = []  # orders that close a step, not played because a line of the message was refused
    whole_refused = _whole_refused(batch, orders) if intent.policy(game.options) == "hold" and out is None else None
    whole = whole_refused is not None
    said = Said.of(text, quoted_orders, letter)  # each order is recorded with its line as written (origins)
    closed_here = False  # an order of this message closed the player's step

    def attempt(number: int, line, final: bool = False) -> Rejection | None:
        """Play one order, or hold it (`intent`); a refusal is returned, not raised."""
        nonlocal closed_here
        told: list[str] = []
        if whole_refused is not None:
            if number in whole_refused:
                return whole_refused[number]
            held.append((number, line))
            return None
        try:
            if not final and isinstance(line.command, intent.CLOSING) and _refusal(line.command, number):
                held.append((number, line))
                return None
            note = said.note(line, quoted=number >= main)
            if isinstance(line.command, (RollBack, RevealSeed)):
                batch.decide(line.command, actor=who, source=source, dedupe=f"{message_id}#{number}" if message_id else None,
                             note=note)
            else:
                events, after = intent.try_order(batch.state, line.command, batch.draws)
                if intent.closes_step(batch.state, after, line.command):
                    if not final and _refusal(line.command, number, after):
                        held.append((number, line))
                        return None
                    closed_here = True
                told = what_became(batch.state, events, _viewer_of(player))  # a list of choices: what was used
                batch.record(events, actor=who, source=source, dedupe=f"{message_id}#{number}" if message_id else None,
                             note=note)
        except Rejection as exc:
            return exc
        receipt.accepted.append(line.canonical + (f"  ({'; '.join(line.notes)})" if line.notes else ""))
        receipt.notes.extend(told)
        if actor.moderator and line.text.upper().startswith("FOR") and hasattr(line.command, "player_id"):
            on_behalf.append((line.command.player_id, line.canonical))
        return None

    def _refusal(command: object, number: int, after: GameState | None = None) -> bool:
        """Whether a line of the message is refused: one already, or one ahead once ``command`` is played."""
        if refused or receipt.errors:
            return True
        if after is None or number >= main:
            return False
        rest = [line.command for line in orders.lines[number + 1:] if line.command is not None]
        return bool(intent.foresee(after, batch.draws, rest, closed_here=True))

    refused: dict[int, tuple[object, Rejection]] = {}
    previews = 0
    took_from_quote = False
    queries = []
    early: list = []  # lines sent before the player's turn, and every game order after the first of them
    second_halt = False  # a HALT for 3b, sent at one's own 3a after the HALT that ended the ships
    for number, line in enumerate([*orders.lines, *tentative]):
        if line.query:
            queries.append(line.query)
        elif line.help:
            receipt.help.append(line.help)
        elif line.error and number >= main:  # a line of ours edited in a quote: named, never passed over in silence
            receipt.notes.append(_quoted_note(line.text, line.error))
        elif line.error:
            receipt.errors.append(
                {"line": line.number, "text": line.text, "reason": line.error, "suggestions": list(line.suggestions)}
            )
        elif out is not None:
            reason = f"the moderator took you out of this game ({out}); your nation plays by its defaults"
            if number >= main:
                receipt.notes.append(_quoted_note(line.text, reason))
            else:
                receipt.errors.append({"line": line.number, "text": line.text, "reason": reason, "suggestions": []})
        elif number >= main:  # a line from inside a quote: played if legal, else named with the reason
            exc = attempt(number, line)
            took_from_quote = took_from_quote or exc is None
            if exc is not None:
                receipt.notes.append(_quoted_note(line.text, str(exc)))
        elif isinstance(line.command, (Confirm, RollBack)) and not whole and not (
                isinstance(line.command, RollBack) and line.command.confirmed):
            try:  # ROLLBACK is first previewed; CONFIRM applies the latest preview (`rollback`)
                if isinstance(line.command, RollBack):
                    receipt.help.append(preview(batch.uow, batch.state, line.command))
                    previews += 1
                else:
                    confirmed = previewed(batch, address_of_sender)
                    if (exc := attempt(number, replace(line, command=confirmed, canonical=rollback_text(confirmed)))):
                        refused[number] = (line, exc)
            except Rejection as exc:
                refused[number] = (line, exc)
        elif early and not _table_order(line.command) and not whole:
            early.append(line)
        elif (exc := attempt(number, line)) is not None:
            if player is not None and (isinstance(exc, NotYourTurn) or intent.kept_for_moves(batch.state, line.command, closed_here)):
                second_halt = second_halt or not isinstance(exc, NotYourTurn)
                early.append(line)
            else:
                refused[number] = (line, exc)
    if took_from_quote:  # "NATION" written in the quote, "PLACE" below it: try what waited on it again
        refused = {n: (line, exc) for n, (line, _) in refused.items() if (exc := attempt(n, line)) is not None}
    for line, exc in refused.values():
        receipt.errors.append({"line": line.number, "text": line.text, "reason": str(exc), "suggestions": list(exc.suggestions)})
    receipt.errors.sort(key=lambda e: e["line"])
    if held and not receipt.errors and not whole:  # the refusal foreseen did not come (the lines were kept): play them
        for number, line in held[:]:
            held.remove((number, line))
            if isinstance(exc := attempt(number, line, final=True), NotYourTurn) and player is not None:
                early.append(line)
            elif exc is not None:
                receipt.errors.append({"line": line.number, "text": line.text, "reason": str(exc), "suggestions": list(exc.suggestions)})
    if receipt.errors:  # a kept order that would close the step when played waits for the corrected message
        held += [(-1, line) for line in early if isinstance(line.command, intent.CLOSING)]
        early = [line for line in early if not isinstance(line.command, intent.CLOSING)]
        second_halt = False
    if previews and not receipt.errors and not held and not whole:
        receipt.subject, receipt.headline = PREVIEW_SUBJECT, PREVIEW_HEADLINE
    if held or whole:
        notes = [intent.Held(line.number, line.canonical, n >= main) for n, line in held]
        receipt.subject, receipt.headline = intent.headline([e["line"] for e in receipt.errors], notes, whole)
        receipt.notes[:0] = [_quoted_note(h.order, "a line of your message was refused") for h in notes if h.quoted]
    if early and player is not None:
        kept = tuple(line.canonical for line in early)
        batch.decide(QueueOrders(player.id, kept), actor=who, source=source, dedupe=f"{message_id}#kept" if message_id else None,
                     note=said.kept_note(early))
        receipt.accepted.extend(f"{line}  (kept: played when your turn comes, if still legal)" for line in kept)
        receipt.notes.append(
            "It is not your turn yet: the orders marked kept wait for it and are played then, in the order you wrote "
            "them; you will hear what became of each. Orders you send later are added after them."
        )
        if second_halt:
            receipt.notes.insert(0, "Your ship step (3a) is over. The second HALT is kept for your movement (3b) and "
                                 "played when your turn to move comes: you make no moves this turn.")
    letters = letters_for(uow, settings, game, now)
    deadline_on_resume(batch, game, settings)  # the later of the running deadline and a fresh one (moderation)
    hand_over(batch, letters, before, orders)  # REPLACE: the newcomer's letters, the table told (seats)
    for i, event in enumerate(e for e in batch.events if e.type == "AbsenceNoted"):
        text = rules.describe_event(batch.state, event, "observer") or ""
        away = batch.state.player(event.data["player"])
        title = f"{away.nation or away.name} will be away" if event.data["from"] else f"{away.nation or away.name} is back"
        letters.announce(batch.state, text, f"absence:{batch.state.version}:{i}", moderator=game.moderator_email, title=title)
    for i, (event, version) in enumerate(sent_press(batch.events, before.version)):
        letters.press(batch.state, event, f"press:{batch.state.game_id}:{batch.state.version}:{i}", version)
    tell_moderated(batch, letters, before)
    watchers = [e for e in batch.events if e.type in ("ObserverJoined", "ObserverLeft")]
    tell_observers(batch, letters, watchers, game_address(game_id, settings.domain, settings.local_part))
    rolled = rolled_back(batch)
    if rolled:  # the position is another one: what changed, a fresh deadline and the prompts, not a phase report
        after_rollback(batch, letters, game, settings, before)
    elif batch.events:
        play_kept(batch, letters, before)
        set_deadline(batch, game, settings, before)
    _tell_moderated_orders(batch, letters, before, on_behalf)  # after the deadline is set: the letter names the next one
    reveal_at_end(batch)
    receipt.on_file = _on_file(batch.state, batch.state.player(player.id) if player else None)
    if receipt.headline:  # held orders: the step is open, whatever the engine asks at this moment
        receipt.on_file = [o.replace(NOTHING_NEEDED, "Nothing is asked of you at this moment: your turn is still to come.")
                           for o in receipt.on_file]
    receipt.deadline = batch.state.deadline
    me = batch.state.player(player.id) if player else None
    link = letter_link(uow, settings, bytes.fromhex(game.reply_secret), batch.state, address_of_sender) \
        if any(verb == "LINK" for verb, _ in queries) else None
    receipt.help.extend(queries_answer(uow, batch.state, me, verb, rest, receipt.on_file, link) for verb, rest in queries)
    address = address_of_sender
    letters.acknowledge(
        batch.state,
        player,
        address,
        accepted=receipt.accepted,
        errors=receipt.errors,
        on_file=receipt.on_file,
        notes=receipt.notes + receipt.help,
        chain_head=batch.chain_head,
        in_reply_to=in_reply_to or message_id,
        ignored=receipt.ignored,
        origin=origin,
        nothing_found=receipt.nothing_found,
        key=message_id or ack_key,
        answers_only=bool(queries) and not receipt.accepted and not receipt.errors,
        held=(receipt.subject, receipt.headline),
        given_in=before.turn,
        picture=board_picture(batch.state, settings, _viewer_of(me), svg=True) if any(v == "MAP" for v, _ in queries) else None,
    )
    if batch.events and not rolled:
        announce(batch, letters, before)
        resend_prompts(batch, letters, before)  # a moved deadline: every open prompt again, with its new due time
    return receipt


def _tell_moderated_orders(batch: Batch, letters: Letters, before: GameState, on_behalf: list[tuple[int, str]]) -> None:
    """A player whose orders the moderator gave (FOR), or whose step he ended (DEADLINE), hears what was done."""
    for i, (player_id, order) in enumerate(on_behalf):
        player = batch.state.player(player_id)
        letters.notice(batch.uow.players.by_id(player_id).email, batch.state.game_id, "The moderator gave an order for you",
                       [f"The moderator gave this order for you: {order}"],
                       f"for:{batch.state.game_id}:{batch.state.version}:{i}", reply_to=letters.reply_to(batch.state, player),
                       turn=batch.state.turn)
    ended = next((e for e in batch.events if e.type == "DeadlinePassed" and e.data.get("by") == "moderator"), None)
    if ended is None:
        return
    why = f": {ended.data['reason']}" if ended.data.get("reason") else ""
    for prompt in rules.pending(before).values():
        player = batch.state.player(prompt.player_id)
        shown = letters.deadline_for(batch.state, player.id)[0]
        letters.notice(batch.uow.players.by_id(player.id).email, batch.state.game_id, "The moderator ended this step", [
            f"The moderator ended this step now{why}. What was asked of you ({prompt.question}) was played by "
            f"its default: {prompt.default}.",
            f"The next deadline: {shown}; whoever is asked gets a prompt with it." if shown else "No deadline runs now.",
        ], f"deadline:{batch.state.game_id}:{batch.state.version}:{player.id}", reply_to=letters.reply_to(batch.state, player),
            turn=batch.state.turn)


def _quoted_note(text: str, reason: str) -> str:
    """A line the player wrote inside the quote of our letter that was not played, and why: never passed over in silence."""
    return f"line '> {text}' in the quoted block was not played: {reason}"


def _whole_refused(batch: Batch, orders: Orders) -> dict[int, Rejection] | None:
    """Under ``errors=hold``: the refusals of a message held whole (by line index), or None when nothing is refused."""
    if any(line.error for line in orders.lines):
        return {}
    indexed = [(i, line.command) for i, line in enumerate(orders.lines) if line.command is not None]
    found = intent.foresee(batch.state, batch.draws, [c for _, c in indexed], first_only=False)
    return {indexed[k][0]: exc for k, exc in found.items()} if found else None


def _viewer_of(player: Player | None) -> str:
    if player is None:
        return "moderator"
    return f"player:{player.nation.lower()}" if player.nation else "observer"


def _table_order(command: object) -> bool:
    """An order about the table (press, a time zone, an absence), never kept for a turn: it is played at once."""
    return type(command) in table.RULES.decide


def resolve_actor(uow: UnitOfWork, game_id: str, who: str) -> Actor:
    """`--as NATION|PLAYER|moderator` from the command line."""
    if who.strip().lower() == "moderator":
        return Actor(moderator=True)
    for row in uow.players.list(game_id):
        if who.strip().lower() in {row.name.lower(), (row.nation or "").lower()}:
            return Actor(player_id=row.id)
    state = load_state(uow, game_id)
    for player in state.players:
        if player.nation and player.nation.lower() == who.strip().lower():
            return Actor(player_id=player.id)
    raise GameError(f"no player or nation {who!r} in game {game_id}")


def submit(db: Engine, settings: Settings, game_id: str, who: str, text: str, *, now: datetime) -> Receipt:
    """Orders typed at the command line, handled exactly as an authenticated email."""

    def work(uow: UnitOfWork) -> Receipt:
        if uow.games.get(game_id) is None:
            raise GameError(f"there is no game called {game_id!r}")
        actor = resolve_actor(uow, game_id, who)
        # each submission is acknowledged on its own, even one that records nothing at the same version
        receipt = take_orders(uow, settings, game_id, actor, text, now=now, source="cli", ack_key=f"cli:{uuid.uuid4().hex}")
        sync_nations(uow, game_id)
        return receipt

    return retrying(db, work)

"""The use cases of a game: create it, take orders, pass deadlines.

Each use case runs in one unit of work: the events, the outbox letters and
(for mail) the inbox row change together or not at all. A stale writer
(another process appended first) is retried from a fresh state.
"""

from __future__ import annotations

import re
import secrets as secrets_module
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as dataclass_replace
from datetime import datetime, timedelta
from functools import lru_cache
from typing import TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import Engine

from pbem.mail.render import Renderer
from pbem.mail.tokens import moderator_secret
from pbem.orders.language import Actor, Orders, parse_orders
from pbem.rules import engine as rules
from pbem.rules.core.commands import (
    Command,
    ReplacePlayer,
    SendPress,
    SetDeadline,
    SetTimezone,
)
from pbem.rules.core.draws import Draws, commitment
from pbem.rules.core.events import Event
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState, Player
from pbem.rules.ruleset.options import OptionError, validate_options
from pbem.store.events import ConcurrencyError, NewEvent
from pbem.store.unit_of_work import UnitOfWork

from .letters import Letters
from .projector import load_state, maybe_snapshot, to_event
from .queries import answer as queries_answer
from .settings import Settings

GAME_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
#: Options the service itself reads; every other option belongs to the rules.
SERVICE_OPTIONS = {"deadline-hours", "reminder-hours", "press", "missed-limit", "absence", "absence-days"}
#: What press a game allows: signed, anonymous ("grey"), or none.
PRESS_KINDS = ("on", "grey", "off")
DEADLINE_FORMAT = "%Y-%m-%d %H:%M UTC"

T = TypeVar("T")


class GameError(ValueError):
    """A request the service refuses, with a message for the person who made it."""


def retrying(db: Engine, work: Callable[[UnitOfWork], T], attempts: int = 5) -> T:
    """Run ``work`` in a unit of work, again from scratch if another writer won the race."""
    for attempt in range(attempts):
        try:
            with UnitOfWork(db) as uow:
                return work(uow)
        except ConcurrencyError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


@dataclass
class Batch:
    """The state of one game inside a unit of work, and what was recorded in it."""

    uow: UnitOfWork
    state: GameState
    draws: Draws
    now: datetime
    chain_head: str = ""
    events: list[Event] = field(default_factory=list)

    def record(
        self, events: Sequence[Event], *, actor: str, source: str, dedupe: str | None = None, note: dict | None = None
    ) -> None:
        """Append ``events``; ``note`` is the service's own bookkeeping, kept in the metadata, outside what verify re-derives."""
        meta = {
            "actor": actor,
            "source": source,
            "engine_version": rules.ENGINE_VERSION,
            "recorded_at": self.now.isoformat(),
            **(note or {}),
        }
        new = [
            NewEvent(e.type, e.payload(), meta, dedupe_key=dedupe if i == 0 else None) for i, e in enumerate(events)
        ]
        recorded = self.uow.events.append(self.state.game_id, self.state.version, new)
        before = self.state
        self.state = rules.fold(self.state, events)
        self.events.extend(events)
        self.chain_head = recorded[-1].hash
        maybe_snapshot(self.uow, self.state, before.version, self.now)

    def decide(
        self, command: Command, *, actor: str, source: str, dedupe: str | None = None, note: dict | None = None
    ) -> list[Event]:
        events = rules.decide(self.state, command, self.draws)
        self.record(events, actor=actor, source=source, dedupe=dedupe, note=note)
        return events


def _open(uow: UnitOfWork, game_id: str, now: datetime) -> tuple[Batch, object]:
    uow.lock_game(game_id)
    game = uow.games.get(game_id)
    if game is None:
        raise GameError(f"there is no game called {game_id!r}")
    state = load_state(uow, game_id)
    _, head = uow.events.head(game_id)
    return Batch(uow, state, Draws(game.secret_seed), now, chain_head=head), game


@lru_cache(maxsize=1)
def renderer() -> Renderer:
    """One renderer per process: jinja2 compiles each template once and caches it."""
    return Renderer()


def _letters(uow: UnitOfWork, settings: Settings, game, now: datetime) -> Letters:
    return Letters(uow, settings, renderer(), bytes.fromhex(game.reply_secret), now)


def _deadline_hours(game, settings: Settings, phase: str | None = None) -> int:
    """Hours for a step: the game's ``deadline-hours-<phase>``, else its ``deadline-hours``, else the server's."""
    options = game.options or {}
    return int(options.get(f"deadline-hours-{phase}", options.get("deadline-hours", settings.deadline_hours)))


def _set_deadline(batch: Batch, game, settings: Settings, before: GameState) -> None:
    """A new phase, or someone newly asked, gets a fresh deadline, recorded as a clock event.

    A player already asked whose prompt changes (a trade offer arrives) does not
    move the deadline, so nobody can postpone a phase by sending orders.
    """
    asked_before = {p.player_id for p in rules.pending(before).values()}
    now_pending = rules.pending(batch.state)
    new_phase = (before.turn, before.phase) != (batch.state.turn, batch.state.phase)
    changed = new_phase or bool({p.player_id for p in now_pending.values()} - asked_before)
    if now_pending and (changed or batch.state.deadline is None):
        due = (batch.now + timedelta(hours=_deadline_hours(game, settings, batch.state.phase))).strftime(DEADLINE_FORMAT)
        batch.decide(SetDeadline(due), actor="clock", source="scheduler")


def _announce(batch: Batch, letters: Letters, before: GameState) -> None:
    """Mail the phase report (when a phase ended) and every new prompt."""
    if (before.turn, before.phase) != (batch.state.turn, batch.state.phase):
        start = before.phase_began - 1
        phase_events = [to_event(r) for r in batch.uow.events.read(batch.state.game_id, after=start)]
        start_state = load_state(batch.uow, batch.state.game_id, upto=start)
        letters.reports(start_state, phase_events, batch.state, batch.chain_head, since=before)
    letters.new_prompts(rules.pending(before), batch.state, batch.chain_head)


def _after_orders(batch: Batch, letters: Letters, game, settings: Settings, before: GameState) -> None:
    _set_deadline(batch, game, settings, before)
    _announce(batch, letters, before)


# -- creating a game ---------------------------------------------------------


@dataclass(frozen=True)
class NewPlayer:
    name: str
    email: str
    nation: str | None = None


def parse_player(spec: str) -> NewPlayer:
    """NAME:EMAIL[:NATION], as on the command line."""
    parts = [p.strip() for p in spec.split(":")]
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
        for p in players:
            secret = secrets_module.token_urlsafe(6)
            pid = uow.players.add(game_id, p.name, p.email, None, secret)
            player_secrets[pid] = secret
            listed.append((pid, p.name, p.nation))
        draws = Draws(secret_seed)
        try:
            events = rules.create(game_id, listed, rules_options, commitment(secret_seed), draws)
        except Rejection as exc:
            raise GameError(str(exc)) from None
        batch = Batch(uow, rules.new_game(game_id), draws, now)
        before = batch.state
        batch.record(events, actor="moderator", source="cli")
        for player in batch.state.players:
            if player.nation:
                uow.players.set_nation(player.id, player.nation)
        letters = _letters(uow, settings, game, now)
        letters.start(batch.state, batch.chain_head, player_secrets)
        if game.moderator_email != settings.sender:
            letters.moderator_start(batch.state, game.moderator_email, moderator_secret(bytes.fromhex(game.reply_secret), game_id))
        _after_orders(batch, letters, game, settings, before)
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

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def nothing_found(self) -> bool:
        """No order, no refused line and no HELP: the message held nothing the server could act on."""
        return not self.accepted and not self.errors and not self.help

    def text(self) -> str:
        lines = [f"Game {self.game}: orders from {self.player}"]
        lines += [f"  accepted: {a}" for a in self.accepted]
        for e in self.errors:
            hint = f" (did you mean: {', '.join(e['suggestions'])}?)" if e["suggestions"] else ""
            lines.append(f"  line {e['line']} rejected: {e['text']!r}: {e['reason']}{hint}")
        lines += [f"  on file: {o}" for o in self.on_file]
        lines += [f"  note: {n}" for n in self.notes]
        lines += self.help
        if self.deadline:
            lines.append(f"  next deadline: {self.deadline}")
        if self.ignored:
            lines.append(f"  not read as orders: {len(self.ignored)} line{'s' if len(self.ignored) != 1 else ''}")
        if self.nothing_found:
            lines.append("  no orders found in the message")
        return "\n".join(lines)


def _on_file(state: GameState, player: Player | None) -> list[str]:
    if player is None:
        return [f"{who}: {p.question}" for who, p in rules.pending(state).items()]
    out = []
    if player.nation:
        out.append(f"You play {player.nation}.")
        where = [f"{a} ({area.tokens[player.nation]})" for a, area in state.areas.items() if player.nation in area.tokens]
        if where:
            out.append("Your tokens stand in " + ", ".join(where) + ".")
    mine = [p for p in rules.pending(state).values() if p.player_id == player.id]
    out.append(("Still needed from you: " + mine[0].question) if mine else "Nothing more is needed from you now.")
    return out


def take_orders(
    uow: UnitOfWork,
    settings: Settings,
    game_id: str,
    actor: Actor,
    text: str,
    *,
    now: datetime,
    source: str,
    message_id: str | None = None,
    recipient: str | None = None,
    notes: Sequence[str] = (),
    in_reply_to: str | None = None,
    origin: str = "",
    quoted_orders: Sequence[str] = (),
) -> Receipt:
    """Parse and decide every order of one message; record, acknowledge and prompt.

    ``message_id`` keys the orders against a second delivery; ``in_reply_to``
    (default: the same) threads the acknowledgement; ``origin`` is a line the
    acknowledgement adds about where the orders came from. ``quoted_orders``
    are lines the player wrote inside a quote: each is taken when it is a
    complete, legal order and passed over in silence otherwise, since quoted
    text rewrapped by a client is no attempt at an order.
    """
    batch, game = _open(uow, game_id, now)
    before = batch.state
    player = batch.state.player(actor.player_id) if actor.player_id is not None else None
    label = (f"{player.name} ({player.nation})" if player.nation else player.name) if player else "moderator"
    receipt = Receipt(game_id, label, notes=list(notes))
    orders = _press_allowed(parse_orders(text, batch.state, actor), (game.options or {}).get("press", "on"))
    receipt.ignored = list(orders.ignored)
    receipt.notes.extend(orders.notes)
    quoted = parse_orders("\n".join(quoted_orders), batch.state, actor) if quoted_orders else None
    tentative = [line for line in quoted.lines if line.command is not None] if quoted else []
    who = f"player:{actor.player_id}" if actor.player_id is not None else "moderator"
    def attempt(number: int, line) -> Rejection | None:
        try:
            batch.decide(line.command, actor=who, source=source, dedupe=f"{message_id}#{number}" if message_id else None)
        except Rejection as exc:
            return exc
        receipt.accepted.append(line.canonical + (f"  ({'; '.join(line.notes)})" if line.notes else ""))
        return None

    refused: dict[int, tuple[object, Rejection]] = {}
    took_from_quote = False
    queries = []
    for number, line in enumerate([*orders.lines, *tentative]):
        if line.query:
            queries.append(line.query)
        elif line.help:
            receipt.help.append(line.help)
        elif line.error:
            receipt.errors.append(
                {"line": line.number, "text": line.text, "reason": line.error, "suggestions": list(line.suggestions)}
            )
        elif number >= len(orders.lines):  # a line from inside a quote: taken if legal, else no attempt at all
            took_from_quote = attempt(number, line) is None or took_from_quote
        elif (exc := attempt(number, line)) is not None:
            refused[number] = (line, exc)
    if took_from_quote:  # "NATION" written in the quote, "PLACE" below it: try what waited on it again
        refused = {n: (line, exc) for n, (line, _) in refused.items() if (exc := attempt(n, line)) is not None}
    for line, exc in refused.values():
        receipt.errors.append({"line": line.number, "text": line.text, "reason": str(exc), "suggestions": list(exc.suggestions)})
    receipt.errors.sort(key=lambda e: e["line"])
    letters = _letters(uow, settings, game, now)
    moderated = [e for e in batch.events if e.type == "Moderated"]
    if any(e.data["action"] == "resume" for e in moderated):  # a fresh deadline: the pause may have eaten the old one
        due = (now + timedelta(hours=_deadline_hours(game, settings, batch.state.phase))).strftime(DEADLINE_FORMAT)
        batch.decide(SetDeadline(due), actor="clock", source="scheduler")
    _hand_over(uow, batch, letters, before, orders)
    for i, event in enumerate(e for e in batch.events if e.type == "AbsenceNoted"):
        letters.announce(batch.state, rules.describe_event(batch.state, event, "observer") or "", f"absence:{batch.state.version}:{i}")
    for i, event in enumerate(e for e in batch.events if e.type == "PressSent"):
        letters.press(batch.state, event, f"press:{batch.state.game_id}:{batch.state.version}:{i}")
    for i, event in enumerate(moderated):
        text = rules.describe_event(batch.state, event, "observer") or ""
        letters.announce(batch.state, text, f"moderated:{batch.state.game_id}:{batch.state.version}:{i}")
    if batch.events:
        _set_deadline(batch, game, settings, before)
    receipt.on_file = _on_file(batch.state, batch.state.player(player.id) if player else None)
    receipt.deadline = batch.state.deadline
    me = batch.state.player(player.id) if player else None
    receipt.help.extend(queries_answer(uow, batch.state, me, verb, rest, receipt.on_file) for verb, rest in queries)
    address = recipient or (uow.players.by_id(player.id).email if player else game.moderator_email)
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
        key=message_id,
        answers_only=bool(queries) and not receipt.accepted and not receipt.errors,
    )
    if batch.events:
        _announce(batch, letters, before)
    return receipt


def _hand_over(uow: UnitOfWork, batch: Batch, letters: Letters, before: GameState, orders: Orders) -> None:
    """A seat handed to someone new (REPLACE): his address and SECRET on record, his start letter, the table told."""
    asked = {line.command.player_id: line.command for line in orders.lines if isinstance(line.command, ReplacePlayer)}
    for i, event in enumerate(e for e in batch.events if e.type == "PlayerReplaced"):
        command = asked.get(event.data["player"])
        if command is None or not command.email:
            continue
        secret = secrets_module.token_urlsafe(6)
        uow.players.hand_over(command.player_id, command.name, command.email, secret)
        letters.start(batch.state, batch.chain_head, {command.player_id: secret})
        text = rules.describe_event(before, event, "observer") or ""
        letters.announce(batch.state, text, f"replaced:{batch.state.game_id}:{batch.state.version}:{i}")


def _known_zone(zone: str) -> bool:
    try:
        ZoneInfo(zone)
    except (ValueError, ZoneInfoNotFoundError):
        return False
    return True


def _press_allowed(orders: Orders, kind: str) -> Orders:
    """The game's press option on the PRESS lines (refused when off, unsigned when grey); unknown time zones refused."""
    lines = []
    for line in orders.lines:
        if isinstance(line.command, SetTimezone) and not _known_zone(line.command.zone):
            line = dataclass_replace(line, command=None, error=f"unknown time zone {line.command.zone!r}; write one such as Europe/Berlin")
        elif isinstance(line.command, SendPress) and kind == "off":
            line = dataclass_replace(line, command=None, error="press is off in this game (game option press=off)")
        elif isinstance(line.command, SendPress) and kind == "grey":
            line = dataclass_replace(line, command=dataclass_replace(line.command, anonymous=True))
        lines.append(line)
    return dataclass_replace(orders, lines=tuple(lines))


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
        receipt = take_orders(uow, settings, game_id, actor, text, now=now, source="cli")
        _sync_nations(uow, game_id)
        return receipt

    return retrying(db, work)


def _sync_nations(uow: UnitOfWork, game_id: str) -> None:
    """Keep the players table's nation column in step with the log (for lookups by nation)."""
    state = load_state(uow, game_id)
    for player in state.players:
        row = uow.players.by_id(player.id)
        if row is not None and row.nation != player.nation:
            uow.players.set_nation(player.id, player.nation)

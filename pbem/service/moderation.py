"""The moderator's actions told to the table: each letter its own subject, the deadline in force named, prompts again.

A player reads his mail by subject first. Every moderator action used to
arrive as "From the moderator", and a RESUME silently set a fresh deadline
the letter never named: players acted on a due date that no longer held.
Here each action has a subject that says what happened ("Game paused",
"Deadline extended to ..."), a letter that moves the deadline names the
deadline now in force (in the reader's time zone, UTC beside it), and every
player still asked gets his prompt again with the new due time, so the
letter he answers always carries the deadline that holds.

The letters stay in the game's thread: the subject keeps the ``[game]``
prefix every letter of the game has, and the References header names the
thread's first letter (`Letters.notice`).
"""

from __future__ import annotations

import textwrap
from datetime import timedelta

from pbem.rules import engine as rules
from pbem.rules.core.commands import SetDeadline
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState, Player
from pbem.rules.table import paused_by_moderator

from .batch import DEADLINE_FORMAT, Batch, deadline_hours
from .letters import Letters
from .settings import Settings

#: The events the table is told of at once, each in a letter of its own.
TOLD = ("Moderated", "PlayerKicked", "KickLifted")
#: Characters of an announcement its subject quotes: short enough for a phone's list of mail.
ANNOUNCE_SUBJECT_CHARS = 40


def moved_deadline(events: list[Event]) -> bool:
    """Whether a moderator's action (RESUME, EXTEND, or the clock's extension for an absence) moved the deadline."""
    return any(e.type == "Moderated" and e.data["action"] in ("resume", "extend") for e in events)


def deadline_on_resume(batch: Batch, game, settings: Settings) -> None:
    """RESUME: the later of the running deadline (as an EXTEND during the pause left it) and a fresh one.

    The fresh one is now plus the step's hours: the pause may have eaten the
    time the players had, and they are given the step's whole time again. A
    deadline the moderator extended past that stays: players were told it, and
    a RESUME must never take time back that an EXTEND gave. Recorded as the
    clock's SetDeadline only when it changes, so the log says when it moved.
    """
    if not any(e.type == "Moderated" and e.data["action"] == "resume" for e in batch.events):
        return
    fresh = batch.now + timedelta(hours=deadline_hours(game, settings, batch.state.phase))
    running = batch.state.deadline
    if running is None or fresh.strftime(DEADLINE_FORMAT) > running:  # the format sorts as the time does
        batch.decide(SetDeadline(fresh.strftime(DEADLINE_FORMAT)), actor="clock", source="scheduler")


def seat_of(player: Player) -> str:
    """A seat as a subject names it: its nation, or before one is chosen, its player's seat."""
    return player.nation or f"{player.name}'s seat"


def subject(state: GameState, before: GameState, event: Event, due: str) -> str:
    """The subject of the letter telling ``event``; ``due`` is the deadline in force as the reader's subjects show it."""
    data = event.data
    if event.type == "PlayerKicked":
        return f"{seat_of(before.player(data['player']))} plays by its defaults"
    if event.type == "KickLifted":
        player = state.player(data["player"])
        return f"{player.nation} is played by {player.name} again" if player.nation else f"{player.name} is back at the table"
    action = data["action"]
    if action == "pause":
        return "Game paused"
    if action == "resume":
        return f"Game resumed: deadline {due}" if due else "Game resumed"
    if action == "extend":
        return f"Deadline extended to {due}"
    words = " ".join(data["reason"].split())
    return "Announcement: " + (words if len(words) <= ANNOUNCE_SUBJECT_CHARS else words[: ANNOUNCE_SUBJECT_CHARS - 1] + "…")


def _address(batch: Batch, player: Player) -> str | None:
    row = batch.uow.players.by_id(player.id)
    return row.email if row is not None else None  # a seat of a game loaded from a recorded log has no address


def tell(batch: Batch, letters: Letters, before: GameState, moderator: str | None = None, said: str = "") -> None:
    """Each moderator action of the batch to every player, under its own subject.

    A letter about an action that moved the deadline ends with the deadline in
    force when the batch is done (a RESUME keeps or renews it, see
    `deadline_on_resume`), in the reader's own time zone. ``moderator``: his
    address, when the action was not his (the clock extended for an absence);
    ``said``: what the letters say happened, when the log's own words would not
    fit (it was the clock, not the moderator).
    """
    state = batch.state
    paused = paused_by_moderator(state) is not None
    for i, event in enumerate(e for e in batch.events if e.type in TOLD):
        text = said or rules.describe_event(before, event, "observer") or ""
        moves = moved_deadline([event])
        for player in state.players:
            address = _address(batch, player)
            if address is None:
                continue
            shown, due = letters.deadline_for(state, player.id)
            lines = [text, f"The deadline now: {shown}." if moves and shown else ""]
            if moves and paused:  # an EXTEND during a pause: the date holds once the game resumes, unless later
                lines.append("The game is still paused: no deadline passes until it resumes.")
            if moves and rules.pending(state):
                lines.append("Whoever is still asked gets his prompt again with this deadline: reply to that letter.")
            letters.notice(address, state.game_id, subject(state, before, event, due if moves else ""),
                           [line for line in lines if line], f"moderated:{state.game_id}:{state.version}:{i}:{player.id}",
                           reply_to=letters.reply_to(state, player), turn=state.turn)
        if moderator and moderator != letters.settings.sender:
            shown, due = letters.deadline_for(state, 0)
            lines = [text, f"The deadline now: {shown}." if moves and shown else ""]
            letters.notice(moderator, state.game_id, subject(state, before, event, due if moves else ""),
                           [line for line in lines if line], f"moderated:{state.game_id}:{state.version}:{i}:moderator",
                           reply_to=letters.moderator_reply_to(state), turn=state.turn)


def resend_prompts(batch: Batch, letters: Letters, before: GameState) -> None:
    """After a moved deadline, every prompt still open goes out again with the new due time.

    Only the prompts the batch did not make new: a new one is mailed by
    `Letters.new_prompts` already, at the deadline in force.
    """
    if not moved_deadline(batch.events):
        return
    asked_before = rules.pending(before)
    for who, prompt in rules.pending(batch.state).items():
        old = asked_before.get(who)
        if old is None or old.step != prompt.step or old.player_id != prompt.player_id:
            continue
        if _address(batch, batch.state.player(prompt.player_id)) is not None:
            letters.prompt(batch.state, prompt, batch.chain_head)


#: The moderator's orders as his first letter lists them: the order, what it does, and an example line.
#: ``{seat}`` and ``{name}`` are the game's first seat and its player, so the examples read as this game's.
ORDERS_LISTED = (
    ("PAUSE <reason>", "no deadline passes until RESUME", "PAUSE {name} is ill this week"),
    ("RESUME [reason]", "the clock runs again; the deadline is the later of the running one and a fresh one",
     "RESUME {name} is back"),
    ("EXTEND <hours> <reason>", "move the deadline later", "EXTEND 24 the weekend"),
    ("DEADLINE [reason]", "end the step now: defaults for missing orders", "DEADLINE we agreed to go on"),
    ("ANNOUNCE <text>", "a message to every player", "ANNOUNCE Next turn starts on Saturday"),
    ("FOR <nation>: <order>", "an order on a player's behalf", "FOR {seat}: HALT"),
    ("REPLACE <nation> WITH <name> <email> <reason>", "a new player takes the seat",
     "REPLACE {seat} WITH Eve eve@example.org {name} moved away"),
    ("KICK <nation> <reason>", "the nation plays by its defaults", "KICK {seat} no answer for two weeks"),
    ("UNKICK <nation> [reason]", "its player gives orders again", "UNKICK {seat} back from holiday"),
    ("APPROVE <observer>", "let someone who asked watch the game", "APPROVE 4"),
    ("DENY <observer> [reason]", "turn a request away, or end a watch", "DENY 4 a private game"),
    ("ROLLBACK BEFORE <version> <reason>", "shows what going back to just before that version would change "
     "(ROLLBACK <version> or ROLLBACK TO turn <n> [phase] too); nothing is deleted",
     "ROLLBACK BEFORE 12 a wrong order was played"),
    ("CONFIRM", "apply the rollback your latest preview showed", "CONFIRM"),
    ("HISTORY [n] or HISTORY turn <n> [phase] [nation]", "the events, with their versions", "HISTORY turn 3 movement"),
    ("EXPLAIN <version>", "why an event happened, with the rules", "EXPLAIN 12"),
    ("VERIFY <head>", "whether the log still holds a chain head a letter showed", "VERIFY 3f9a1c2b4d5e6f70"),
    ("SEED", "be told the secret seed; every player learns you asked", "SEED"),
    ("STATUS, BOARD", "where the game stands", "STATUS"),
)
#: Columns a line of the first letter takes at most: it is read on phones.
WELCOME_WIDTH = 72


def _wrapped(text: str, indent: str = "", then: str | None = None) -> list[str]:
    """``text`` in lines of at most `WELCOME_WIDTH` columns: the first after ``indent``, the others after ``then``."""
    return textwrap.wrap(text, WELCOME_WIDTH, initial_indent=indent, subsequent_indent=indent if then is None else then,
                         break_long_words=False) or [""]


def welcome_lines(state: GameState, secret: str, deadline_shown: str | None) -> list[str]:
    """The moderator's first letter, line by line: who sits where, what happens next, each order with an example.

    It is all a moderator who has only his mail client gets to go by, so it
    points to no file: every order he may give is here, with a line he can
    copy. Short lines, since it is read on phones.
    """
    lines = ["PLAYERS AND SEATS"]
    lines += [f"  {p.name}: {p.nation or 'nation to choose'}" for p in state.players]
    if state.place_order:
        lines += _wrapped("Place-card order (who chooses and places first): "
                          + ", ".join(state.player(pid).name for pid in state.place_order) + ".")
    asked = [state.player(p.player_id) for p in rules.pending(state).values()]
    lines += ["", "WHAT HAPPENS NEXT"]
    if asked:
        due = f", due {deadline_shown}" if deadline_shown else ""
        lines += _wrapped("Asked now: " + ", ".join(p.name for p in asked) + due + ". Each player is asked by mail "
                          "in turn and answers by replying.")
    lines += _wrapped("The clock passes deadlines and plays defaults: you need do nothing unless the table needs "
                      "you. You hear when someone misses deadlines, is away, bounces, or asks to watch.")
    lines += ["", "HOW TO GIVE ORDERS"]
    lines += _wrapped("Reply to this mail, or to any mail of this game, one order a line. From another address, "
                      "or in a new mail to the game, add the line:")
    lines += [f"  SECRET {secret}", "", "YOUR ORDERS, each with an example"]
    first = state.players[0] if state.players else None
    names = {"seat": (first.nation or first.name) if first else "Egypt", "name": first.name if first else "Ann"}
    for order, does, example in ORDERS_LISTED:
        lines += _wrapped(f"{order}: {does}", then="  ")
        lines += _wrapped(example.format(**names), "    ")
    lines += ["", *_wrapped("Every action is told to the players with your reason.")]
    return lines


def welcome(letters: Letters, state: GameState, recipient: str, secret: str) -> None:
    """The moderator's first letter (`welcome_lines`), the first of his thread of the game; his reply address on it."""
    letters.notice(recipient, state.game_id, f"You moderate game {state.game_id}",
                   welcome_lines(state, secret, letters.deadline_for(state, 0)[0]), f"moderator-start:{state.game_id}",
                   reply_to=letters.moderator_reply_to(state), first=True)

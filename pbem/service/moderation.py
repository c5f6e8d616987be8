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

from datetime import timedelta

from pbem.rules import engine as rules
from pbem.rules.core.commands import SetDeadline
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState, Player

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
    for i, event in enumerate(e for e in batch.events if e.type in TOLD):
        text = said or rules.describe_event(before, event, "observer") or ""
        moves = moved_deadline([event])
        for player in state.players:
            address = _address(batch, player)
            if address is None:
                continue
            shown, due = letters.deadline_for(state, player.id)
            lines = [text, f"The deadline now: {shown}." if moves and shown else ""]
            if moves and rules.pending(state):
                lines.append("Whoever is still asked gets his prompt again with this deadline: reply to that letter.")
            letters.notice(address, state.game_id, subject(state, before, event, due if moves else ""),
                           [line for line in lines if line], f"moderated:{state.game_id}:{state.version}:{i}:{player.id}",
                           reply_to=letters.reply_to(state, player))
        if moderator and moderator != letters.settings.sender:
            shown, due = letters.deadline_for(state, 0)
            lines = [text, f"The deadline now: {shown}." if moves and shown else ""]
            letters.notice(moderator, state.game_id, subject(state, before, event, due if moves else ""),
                           [line for line in lines if line], f"moderated:{state.game_id}:{state.version}:{i}:moderator",
                           reply_to=letters.moderator_reply_to(state))


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


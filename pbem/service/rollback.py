"""The moderator takes a game back (ROLLBACK by mail, `pbem rollback`).

A rollback is an event: the log keeps everything that followed the version
gone back to, marked superseded. What the players need is the position they
are in now, so each gets a letter saying what changed for him (from his own
view, so nobody learns another's hand from it), then the prompts of the
position again with a fresh deadline: the old deadline belonged to a moment
that has passed.
"""

from __future__ import annotations

import email
import re
from datetime import datetime, timedelta

from sqlalchemy import Engine

from pbem.audit.diff import diff
from pbem.mail.policies import DEFAULT as DEFAULT_POLICY
from pbem.rules import engine as rules
from pbem.rules.branches import fold_log, roll_back, superseded
from pbem.rules.core.commands import RollBack, SetDeadline
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ledger import LOG_CLAUSE
from pbem.rules.turn import phase_title
from pbem.rules.view import question_gist, view

from .batch import (
    DEADLINE_FORMAT,
    Batch,
    GameError,
    deadline_hours,
    letters_for,
    open_game,
    retrying,
)
from .letters import Letters
from .projector import load_state, readable
from .settings import Settings

#: The line a preview ends with, for the moderator to send back (or to answer with CONFIRM alone).
CONFIRM_LINE = "ROLLBACK {to} CONFIRM {reason}"
#: The line saying which version the log had when the preview was made: a CONFIRM after it moved is refused.
PREVIEWED_AT = "(Previewed with the log at version {head}."
#: What the preview lists of the changes; the rest is counted.
PREVIEW_CHANGES = 40
#: The moderator's newest letters of a game searched for the preview a CONFIRM applies.
PREVIEW_LETTERS = 10
#: A preview's lines in our own letter, read back on CONFIRM: both anchored, one bounded run each.
_CONFIRM_RE = re.compile(r"^ {0,8}ROLLBACK (\d{1,9}) CONFIRM ([^\n]+)$", re.MULTILINE)
_PREVIEWED_RE = re.compile(r"^ {0,8}\(Previewed with the log at version (\d{1,9})\.", re.MULTILINE)
#: The acknowledgement's subject and first line when it carries a preview.
PREVIEW_SUBJECT = "Rollback preview: reply CONFIRM to apply it"
PREVIEW_HEADLINE = "moderator: nothing is rolled back yet. Read the preview below, then reply CONFIRM."


def preview(uow, state: GameState, command: RollBack) -> str:
    """What ``command`` would do to the game at ``state``, applied to nothing: the moderator reads it, then
    CONFIRMs (by mail, or from the console of his page, which reads it on a transaction that writes nothing).

    The rollback is decided against the whole log exactly as it would be
    recorded, and the position after it is folded the same way, so the
    preview is the outcome, not a guess. A Rejection says why it cannot be.
    """
    game_id = state.game_id
    events = readable(uow.events.read(game_id))
    decided = roll_back(events, command, game_id)
    to = decided[0].data["to"]
    after = fold_log(game_id, decided, start=state, state_at=lambda v: load_state(uow, game_id, upto=v))
    undone = [v for v in range(to + 1, len(events) + 1) if v not in superseded(events)]
    where = f"turn {after.turn}, {phase_title(after, after.phase)}" if after.turn else f"setup, {phase_title(after, after.phase)}"
    lines = [f"ROLLBACK previewed, nothing is applied yet: the game would go back to version {to} ({where}).",
             f"Undone: {len(undone)} event{'s' if len(undone) != 1 else ''}, versions {to + 1} to {len(events)}; "
             "they stay in the log, marked superseded."]
    if to < len(events):
        first = rules.describe_event(load_state(uow, game_id, upto=to), events[to], "moderator")
        if first:
            lines.append(f"The first of them: {to + 1}. {first}")
    for prompt in rules.pending(after).values():
        who = after.player(prompt.player_id)
        lines.append(f"Asked then: {who.name} ({who.nation or 'no nation yet'}): {question_gist(prompt.question)}")
    changes = diff(view(state, "moderator"), view(after, "moderator"))
    lines.append("What would change:" if changes else "Nothing on the board would change.")
    lines += [f"- {c}" for c in changes[:PREVIEW_CHANGES]]
    if len(changes) > PREVIEW_CHANGES:
        lines.append(f"- and {len(changes) - PREVIEW_CHANGES} more")
    lines += ["Every player is told what changed for him and gets his prompt again with a fresh deadline.",
              "To apply it, reply to this letter with CONFIRM alone, or send this line:",
              CONFIRM_LINE.format(to=to, reason=command.reason),
              PREVIEWED_AT.format(head=len(events)) + " If the game moves on first, CONFIRM asks you to look again.)"]
    return "\n".join(lines)


def _plain(raw: bytes) -> str:
    letter = email.message_from_bytes(raw, policy=DEFAULT_POLICY)
    part = letter.get_body(preferencelist=("plain",))
    return part.get_content() if part is not None else ""


def previewed(batch: Batch, address: str) -> RollBack:
    """The rollback CONFIRM applies: the newest preview in the moderator's letters of this game, if the log
    has not moved since it was made (a Rejection says what to do otherwise)."""
    game_id = batch.state.game_id
    for row in batch.uow.outbox.latest_to(game_id, address, PREVIEW_LETTERS):
        text = _plain(bytes(row.raw))
        line, at = _CONFIRM_RE.search(text), _PREVIEWED_RE.search(text)
        if line is None or at is None:
            continue
        if int(at.group(1)) != batch.state.version:
            raise Rejection(f"the game has moved on since your preview (the log was at version {at.group(1)}, it is at "
                            f"{batch.state.version} now): nothing was rolled back; send ROLLBACK again to see it afresh",
                            LOG_CLAUSE)
        return RollBack(int(line.group(1)), line.group(2).strip())
    raise Rejection("there is no rollback preview to confirm among your latest letters of this game: send "
                    "ROLLBACK <version> <reason> first", LOG_CLAUSE)


def rolled_back(batch: Batch) -> bool:
    return any(e.type == "RolledBack" for e in batch.events)


def after_rollback(batch: Batch, letters: Letters, game, settings: Settings, before: GameState) -> None:
    """A fresh deadline for whoever is asked now, a 'what changed' letter to every player, and the prompts again."""
    event = next(e for e in reversed(batch.events) if e.type == "RolledBack")
    if rules.pending(batch.state):
        due = (batch.now + timedelta(hours=deadline_hours(game, settings, batch.state.phase))).strftime(DEADLINE_FORMAT)
        batch.decide(SetDeadline(due), actor="clock", source="scheduler")
    told = rules.describe_event(before, event, "observer") or ""
    where = f"The game is now at turn {batch.state.turn}, {batch.state.phase}, version {batch.state.version}."
    for player in batch.state.players:
        row = batch.uow.players.by_id(player.id)
        if row is None:  # a seat with no address of record (a game loaded from a recorded log): nobody to tell
            continue
        viewer = f"player:{player.nation.lower()}" if player.nation else "observer"
        changes = diff(view(before, viewer), view(batch.state, viewer))
        shown = letters.deadline_for(batch.state, player.id)[0]
        due = f"The deadline now: {shown}; whoever is asked gets his prompt again with it." if shown else "No deadline runs now."
        lines = [told, where, due, "What changed for you:" if changes else "Nothing you can see changed.", *changes]
        letters.notice(
            row.email, batch.state.game_id, "The game was rolled back", lines,
            f"rollback:{batch.state.game_id}:{batch.state.version}:{player.id}", reply_to=letters.reply_to(batch.state, player),
            turn=batch.state.turn,
        )
    for prompt in rules.pending(batch.state).values():
        if batch.uow.players.by_id(prompt.player_id) is not None:
            letters.prompt(batch.state, prompt, batch.chain_head)


def roll_back_game(db: Engine, settings: Settings, game_id: str, to: int, reason: str, now: datetime) -> GameState:
    """`pbem rollback`: the ROLLBACK order given from the command line, with the same letters."""

    def work(uow) -> GameState:
        batch, game = open_game(uow, game_id, now)
        before = batch.state
        try:
            batch.decide(RollBack(to, reason), actor="moderator", source="cli")
        except Rejection as exc:
            raise GameError(str(exc)) from None
        after_rollback(batch, letters_for(uow, settings, game, now), game, settings, before)
        return batch.state

    return retrying(db, work)

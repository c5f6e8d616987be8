"""The moderator takes a game back (ROLLBACK by mail, `pbem rollback`).

A rollback is an event: the log keeps everything that followed the version
gone back to, marked superseded. What the players need is the position they
are in now, so each gets a letter saying what changed for him (from his own
view, so nobody learns another's hand from it), then the prompts of the
position again with a fresh deadline: the old deadline belonged to a moment
that has passed.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Engine

from pbem.audit.diff import diff
from pbem.rules import engine as rules
from pbem.rules.core.commands import RollBack, SetDeadline
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.view import view

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
from .settings import Settings


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
        lines = [told, where, "What changed for you:" if changes else "Nothing you can see changed.", *changes]
        letters.notice(
            row.email, batch.state.game_id, "The game was rolled back", lines,
            f"rollback:{batch.state.game_id}:{batch.state.version}:{player.id}", reply_to=letters.reply_to(batch.state, player),
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

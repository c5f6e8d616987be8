"""Where a game stands, in one line an operator reads: `pbem game list` and the head of `pbem state`.

Why from the state and not from the games table: the table's ``status`` is
written when a game is created (or imported) and nothing in play changes it,
so a list built from it called every game "setup" for ever. The state is
loaded as every unit of work loads it (`load_state`: a remembered state, or
the latest snapshot and at most a snapshot interval of events), so a list of
many long games costs a snapshot decoded per game, never a replay from zero.
"""

from __future__ import annotations

from dataclasses import dataclass

from pbem.rules import table
from pbem.rules.core.state import GameState
from pbem.rules.turn import phase_title
from pbem.store.unit_of_work import UnitOfWork

from .projector import IMPORTED, DamagedLog, load_state


@dataclass(frozen=True)
class Standing:
    """One game's turn, phase, whether it runs, and the deadline in force."""

    game_id: str
    version: int
    turn: int
    phase: str  # the phase's title as the players read it in their letters
    paused: str | None  # the moderator's reason, while he has paused the game
    ended: bool
    deadline: str | None
    imported: bool = False  # brought in by `pbem import`: read and verified here, never played on
    damaged: str | None = None  # why the log cannot be served (`DamagedLog`); then nothing else is known

    @property
    def condition(self) -> str:
        """``ended``, ``paused: <reason>``, ``imported``, ``damaged`` or ``running``: one word first, for a reader
        scanning a column."""
        if self.damaged:
            return "damaged"
        if self.ended:
            return "ended"
        if self.paused is not None:
            return f"paused: {self.paused}"
        return "imported" if self.imported else "running"

    @property
    def when(self) -> str:
        """``turn 3, Trade`` or ``setup, Choose nations``, as the STATUS answer words it."""
        return f"turn {self.turn}, {self.phase}" if self.turn else f"setup, {self.phase}"

    @property
    def due(self) -> str:
        """The deadline in force, and that none passes while the game is paused or over."""
        if self.ended:
            return "no deadline (the game has ended)"
        if self.deadline is None:
            return "no deadline set"
        if self.paused is not None:
            return f"deadline {self.deadline} (held: no deadline passes until the moderator resumes)"
        return f"deadline {self.deadline}"


def standing(state: GameState, *, imported: bool = False) -> Standing:
    """Where ``state`` stands (the state alone decides, so a past version's standing is told the same way)."""
    return Standing(
        game_id=state.game_id,
        version=state.version,
        turn=state.turn,
        phase=phase_title(state, state.phase),
        paused=table.paused_by_moderator(state),
        ended=state.finished,
        deadline=state.deadline,
        imported=imported,
    )


def standings(uow: UnitOfWork) -> list[Standing]:
    """Every game of the database, in the games table's order; a game whose log cannot be read is listed as
    damaged with the reason, not left out (and not allowed to hide the others)."""
    out = []
    for row in uow.games.list():
        try:
            state = load_state(uow, row.game_id)
        except DamagedLog as exc:
            version, _ = uow.events.head(row.game_id)
            out.append(Standing(row.game_id, version, 0, "", None, False, None, damaged=str(exc)))
            continue
        out.append(standing(state, imported=row.status == IMPORTED))
    return out

"""Re-running the engine over a game's recorded inputs (`pbem verify`).

The log pins what was ruled. Re-deriving feeds each recorded input (order,
clock tick, moderator action) back into `decide` with the game's seed and
checks that the engine produces exactly the outcomes recorded after it. A
difference means the log was altered or the engine's rulings changed since.
A rollback is re-decided against the log before it (was its target a version
where the game waited, not itself undone?), and the superseded branch is
re-derived like the rest: both branches were ruled, so both are checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pbem.rules import engine as rules
from pbem.rules.branches import restored, roll_back
from pbem.rules.core.commands import RollBack
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState


@dataclass(frozen=True)
class Rederivation:
    ok: bool
    batches: int
    events: int
    first_difference: int | None = None
    reason: str | None = None


def _differs(expected: Sequence[Event], recorded: Sequence[Event], start_version: int) -> tuple[int, str] | None:
    for offset, want in enumerate(expected):
        version = start_version + offset
        if offset >= len(recorded):
            return version, f"the engine derives {want.type} at version {version}, but the log ends"
        got = recorded[offset]
        if (got.type, got.payload()) != (want.type, want.payload()):
            return version, f"version {version}: log has {got.type} {got.payload()}, engine derives {want.type} {want.payload()}"
    return None


def rederive(game_id: str, events: Sequence[Event], secret_seed: str,
             progress: Callable[[int, int, str], None] | None = None) -> Rederivation:
    """Check every recorded outcome against the engine; ``progress(events checked, events, last type)`` after each input."""
    if not events:
        return Rederivation(True, 0, 0)
    draws = Draws(secret_seed)
    first = events[0]
    if first.type != "GameCreated":
        return Rederivation(False, 0, 0, 1, "the log does not start with GameCreated")
    data = first.data
    players = [(p["id"], p["name"], p["nation"]) for p in data["players"]]
    try:
        expected = rules.create(game_id, players, data["options"], data["seed_commitment"], draws, data.get("revision", 0))
    except Rejection as exc:
        return Rederivation(False, 0, 0, 1, f"game creation is refused by the engine now: {exc}")
    batches = 0
    index = 0
    state = rules.new_game(game_id)
    after: GameState | None = None  # the engine's state after ``expected``, when it has one
    targets = {e.data["to"] for e in events if e.type == "RolledBack"}
    kept: dict[int, GameState] = {}
    while True:
        problem = _differs(expected, events[index:], index + 1)
        if problem:
            return Rederivation(False, batches, index, *problem)
        if after is not None and not targets.intersection(range(index + 1, index + len(expected) + 1)):
            state = after  # the engine's own fold of the outcomes just found equal to the log's
        else:
            for offset, event in enumerate(events[index : index + len(expected)]):
                version = index + offset + 1
                # A rollback's state is the state at its target, which this walk kept as it passed it.
                state = (restored(kept[event.data["to"]], state, version) if event.type == "RolledBack"
                         else rules.apply(state, event))
                if version in targets:
                    kept[version] = state
        index += len(expected)
        batches += 1
        if progress is not None:
            progress(index, len(events), events[index - 1].type)
        if index >= len(events):
            return Rederivation(True, batches, index)
        event = events[index]
        if not rules.is_input(event):
            return Rederivation(False, batches, index, index + 1, f"version {index + 1}: {event.type} follows no input")
        try:
            if event.type == "RolledBack":  # decided against the log, not the state: which versions may be gone back to
                expected = roll_back(events[:index], RollBack(event.data["to"], event.data.get("reason", "")))
                after = None
            else:
                expected, after = rules.decide_and_fold(state, rules.command_for(state, event), draws)
        except Rejection as exc:
            return Rederivation(False, batches, index, index + 1, f"version {index + 1}: the engine now refuses {event.type}: {exc}")

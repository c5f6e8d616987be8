"""Rebuilding a game's state from its log, with snapshots to keep replay short."""

from __future__ import annotations

from datetime import datetime

from pbem.rules.core.codec import state_from_json, state_to_json
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState
from pbem.rules.engine import ENGINE_VERSION, apply, new_game
from pbem.store.events import RecordedEvent

#: A snapshot is written whenever a batch crosses a multiple of this many events.
SNAPSHOT_EVERY = 50


def to_event(recorded: RecordedEvent) -> Event:
    return Event.from_payload(recorded.type, recorded.payload)


def replay(game_id: str, recorded: list[RecordedEvent], start: GameState | None = None) -> GameState:
    state = start or new_game(game_id)
    for rec in recorded:
        state = apply(state, to_event(rec))
    return state


def load_state(uow, game_id: str, upto: int | None = None) -> GameState:
    """The state at version ``upto`` (default: now), from the nearest snapshot."""
    snap = uow.snapshots.latest(game_id, at_most=upto)
    start, after = (state_from_json(snap[1]), snap[0]) if snap else (None, 0)
    return replay(game_id, uow.events.read(game_id, after=after, upto=upto), start)


def maybe_snapshot(uow, state: GameState, previous_version: int, now: datetime) -> None:
    if state.version // SNAPSHOT_EVERY > previous_version // SNAPSHOT_EVERY:
        uow.snapshots.save(state.game_id, state.version, state_to_json(state), ENGINE_VERSION, now)

"""Rebuilding a game's state from its log, with snapshots to keep replay short.

The log may hold rollbacks (`pbem.rules.branches`): the fold follows them, and
a rollback to a version before the snapshot it started from asks for the state
at that version, from an earlier snapshot. A log this engine cannot read (an
event type it does not know, a hash chain that does not hold) is `DamagedLog`:
one sentence for the operator, never a silent wrong state.
"""

from __future__ import annotations

from datetime import datetime

from pbem.rules.branches import fold_log
from pbem.rules.core.codec import state_from_json, state_to_json
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState
from pbem.rules.engine import ENGINE_VERSION, known_event_type
from pbem.store.events import RecordedEvent
from pbem.store.verify import verify_chain

#: The status of a game brought in by `pbem import`: read, replayed and verified here, never played on.
IMPORTED = "imported"

#: A snapshot is written whenever a batch crosses a multiple of this many events.
SNAPSHOT_EVERY = 50


class DamagedLog(Exception):
    """A game's log cannot be served as it is: an unknown event type, or a hash chain that does not hold."""


def to_event(recorded: RecordedEvent) -> Event:
    return Event.from_payload(recorded.type, recorded.payload)


def readable(recorded: list[RecordedEvent]) -> list[Event]:
    """The events of ``recorded``, or DamagedLog naming the first one this engine does not know."""
    for rec in recorded:
        if not known_event_type(rec.type):
            engine = (rec.metadata or {}).get("engine_version", "an unknown engine")
            raise DamagedLog(
                f"game {rec.game_id}: version {rec.version} is an event this engine ({ENGINE_VERSION}) does not know, "
                f"{rec.type!r} (recorded by engine {engine}); upgrade pbem or restore the log"
            )
    return [to_event(rec) for rec in recorded]


def replay(game_id: str, recorded: list[RecordedEvent], start: GameState | None = None, state_at=None) -> GameState:
    return fold_log(game_id, readable(recorded), start=start, state_at=state_at)


def load_state(uow, game_id: str, upto: int | None = None) -> GameState:
    """The state at version ``upto`` (default: now), from the nearest snapshot."""
    snap = uow.snapshots.latest(game_id, at_most=upto)
    start, after = (state_from_json(snap[1]), snap[0]) if snap else (None, 0)
    return replay(
        game_id, uow.events.read(game_id, after=after, upto=upto), start,
        state_at=lambda version: load_state(uow, game_id, upto=version),
    )


def _damaged(game_id: str, version: int | None, reason: str | None) -> DamagedLog:
    return DamagedLog(
        f"the log of game {game_id} is damaged: its hash chain breaks at version {version} ({reason}); "
        f"`pbem verify {game_id}` tells more, and the game is not played on until it is restored"
    )


def load_checked(uow, game_id: str) -> GameState:
    """The current state, for playing on: every event it replays after the latest snapshot has its hash checked.

    The whole chain is checked when the server starts (`damaged_games`) and by
    every command that reads a whole log; per message, checking what is
    replayed keeps the cost flat however long the game grows.
    """
    snap = uow.snapshots.latest(game_id)
    start, after = (state_from_json(snap[1]), snap[0]) if snap else (None, 0)
    recorded = uow.events.read(game_id, after=max(after - 1, 0))
    if after and recorded and recorded[0].version == after:
        anchor, tail = recorded[0], recorded[1:]
        chain = verify_chain([anchor], after_version=after - 1, after_hash=anchor.prev_hash)
        if chain.ok:
            chain = verify_chain(tail, after_version=after, after_hash=anchor.hash)
    else:
        tail = recorded
        chain = verify_chain(tail)
    if not chain.ok:
        raise _damaged(game_id, chain.first_broken, chain.reason)
    return replay(game_id, tail, start, state_at=lambda version: load_state(uow, game_id, upto=version))


def damaged_games(uow) -> list[str]:
    """One sentence for each game whose whole log does not hold (the server says so when it starts)."""
    out = []
    for row in uow.games.list():
        try:
            checked_log(uow, row.game_id)
        except DamagedLog as exc:
            out.append(str(exc))
    return out


def checked_log(uow, game_id: str) -> list[RecordedEvent]:
    """The whole log of a game after checking its hash chain and its event types (DamagedLog if either fails)."""
    recorded = uow.events.read(game_id)
    chain = verify_chain(recorded)
    if not chain.ok:
        raise _damaged(game_id, chain.first_broken, chain.reason)
    readable(recorded)
    return recorded


def maybe_snapshot(uow, state: GameState, previous_version: int, now: datetime) -> None:
    if state.version // SNAPSHOT_EVERY > previous_version // SNAPSHOT_EVERY:
        uow.snapshots.save(state.game_id, state.version, state_to_json(state), ENGINE_VERSION, now)

"""Rebuilding a game's state from its log, with snapshots to keep replay short.

The log may hold rollbacks (`pbem.rules.branches`): the fold follows them, and
a rollback to a version before the snapshot it started from asks for the state
at that version, from an earlier snapshot. A log this engine cannot read (an
event type it does not know, a hash chain that does not hold) is `DamagedLog`:
one sentence for the operator, never a silent wrong state.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import datetime

from pbem.rules.branches import fold_log, walk
from pbem.rules.core.codec import state_from_json, state_to_json
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState
from pbem.rules.engine import ENGINE_VERSION, known_event_type
from pbem.store.events import RecordedEvent
from pbem.store.verify import chain_holds, verify_chain

#: The status of a game brought in by `pbem import`: read, replayed and verified here, never played on.
IMPORTED = "imported"

#: A snapshot is written whenever a batch crosses a multiple of this many events.
SNAPSHOT_EVERY = 50
#: The states the last phases of a game began from that a process keeps (one batch may begin several phases).
PHASE_STARTS_KEPT = 4


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


class RecentStates:
    """The newest state of each game this process worked out, keyed by the hash of its last event.

    Every unit of work that touches a game loads its state: decoding the
    latest snapshot and folding the events since took most of the time of an
    ordinary mail (docs/performance.md). A state remembered here is used
    again only if the event at its version still has the remembered hash: the
    chain makes that hash stand for the whole log up to it, so another
    process's appends, a rolled-back transaction or another database with
    the same game id can only cause a miss, never a wrong state. Then only
    the events after it are read, checked against the chain and folded.
    States are immutable and safe to share between threads.
    """

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._states: OrderedDict[str, tuple[str, GameState]] = OrderedDict()
        #: The states each game's last phases began from (newest first), each with the hash of the event it
        #: ends with: a phase's report is told from its start, asked for once the next phase has begun, and
        #: working it out again (a snapshot decoded, up to 50 events folded) cost more than the report.
        self._phase_starts: OrderedDict[str, tuple[tuple[str, GameState], ...]] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, state: GameState, head_hash: str) -> None:
        if state.version < 1:
            return
        with self._lock:
            self._states[state.game_id] = (head_hash, state)
            self._keep_size(self._states, state.game_id)

    def remember_phase_start(self, state: GameState, head_hash: str) -> None:
        """``state`` (ending with the event of hash ``head_hash``) is the one a phase began from."""
        if state.version < 1:
            return
        with self._lock:
            known = self._phase_starts.get(state.game_id, ())
            self._phase_starts[state.game_id] = ((head_hash, state), *known[: PHASE_STARTS_KEPT - 1])
            self._keep_size(self._phase_starts, state.game_id)

    def _keep_size(self, kept: OrderedDict, game_id: str) -> None:
        kept.move_to_end(game_id)
        while len(kept) > self.size:
            kept.popitem(last=False)

    def phase_start(self, uow, game_id: str, version: int) -> GameState | None:
        """The remembered state a phase began from, if one is at ``version`` and the log still holds its hash."""
        with self._lock:
            known = self._phase_starts.get(game_id, ())
        hit = next(((h, s) for h, s in known if s.version == version), None)
        if hit is None:
            return None
        head_hash, state = hit
        recorded = uow.events.read_for_fold(game_id, after=version - 1, upto=version)
        if not recorded or recorded[0].version != version or recorded[0].hash != head_hash:
            return None
        return state

    def resume(self, uow, game_id: str) -> tuple[GameState, RecordedEvent, list[RecordedEvent]] | None:
        """The remembered state, the event it ends with and the events recorded after; None if it no longer holds."""
        with self._lock:
            hit = self._states.get(game_id)
        if hit is None:
            return None
        head_hash, state = hit
        recorded = uow.events.read(game_id, after=state.version - 1)
        if not recorded or recorded[0].version != state.version or recorded[0].hash != head_hash:
            return None
        return state, recorded[0], recorded[1:]

    def peek(self, game_id: str) -> GameState | None:
        """The state remembered for the game, unchecked: for what may lag behind the log (pbem.service.senders)."""
        with self._lock:
            hit = self._states.get(game_id)
        return hit[1] if hit else None

    def forget(self) -> None:
        with self._lock:
            self._states.clear()
            self._phase_starts.clear()


#: This process's remembered states (the batch of a unit of work adds each state it records).
RECENT = RecentStates()


def replay_stored(uow, game_id: str, *, after: int = 0, upto: int | None = None,
                  start: GameState | None = None) -> tuple[GameState, str | None]:
    """Fold the game's stored events after ``after`` (up to ``upto``) onto ``start``; and the last one's hash.

    Reads only what a fold needs (``EventStore.read_for_fold``: no metadata,
    no chain), so it is for a trusted starting point; ``load_checked`` checks
    the chain. An event type this engine does not know is ``DamagedLog``, as
    in ``readable``.
    """
    events = []
    inputs = uow.events.read_for_fold(game_id, after=after, upto=upto)
    for item in inputs:
        if not known_event_type(item.type):
            readable(uow.events.read(game_id, after=item.version - 1, upto=item.version))  # DamagedLog naming it
        payload = item.payload  # decoded for this call alone: its "cites" can be taken out in place
        cites = payload.pop("cites", ())
        events.append(Event(item.type, payload, tuple(cites)))
    state = fold_log(game_id, events, start=start, state_at=lambda version: load_state(uow, game_id, upto=version))
    return state, (inputs[-1].hash if inputs else None)


def load_state(uow, game_id: str, upto: int | None = None) -> GameState:
    """The state at version ``upto`` (default: now), from a remembered state or the nearest snapshot.

    A snapshot is the state at its version, whichever branch of a rollback
    that version lies on (versions are never reused), so the nearest one at
    or before ``upto`` is a sound start; a rollback in the events folded
    after it asks for its target here again (`pbem state --at` relies on it).
    """
    if upto is not None:
        started = RECENT.phase_start(uow, game_id, upto)
        if started is not None:
            return started
    if upto is None:
        resumed = RECENT.resume(uow, game_id)
        if resumed is not None:
            state, anchor, tail = resumed
            return _remembered(replay(game_id, tail, state, state_at=lambda version: load_state(uow, game_id, upto=version)),
                               (tail[-1] if tail else anchor).hash)
    snap = uow.snapshots.latest(game_id, at_most=upto)
    start, after = (state_from_json(snap[1]), snap[0]) if snap else (None, 0)
    state, head_hash = replay_stored(uow, game_id, after=after, upto=upto, start=start)
    if upto is None and head_hash is not None:
        _remembered(state, head_hash)
    return state


def _remembered(state: GameState, head_hash: str) -> GameState:
    RECENT.remember(state, head_hash)
    return state


def _damaged(game_id: str, version: int | None, reason: str | None) -> DamagedLog:
    return DamagedLog(
        f"the log of game {game_id} is damaged: its hash chain breaks at version {version} ({reason}); "
        f"`pbem verify {game_id}` tells more, and the game is not played on until it is restored"
    )


def load_checked(uow, game_id: str) -> GameState:
    """The current state, for playing on: every event it replays after its starting point has its hash checked.

    The starting point is a remembered state (its hash checked against the
    log) or the latest snapshot. The whole chain is checked when the server
    starts (`damaged_games`) and by every command that reads a whole log; per
    message, checking what is replayed keeps the cost flat however long the
    game grows.
    """
    resumed = RECENT.resume(uow, game_id)
    if resumed is not None:
        state, anchor, tail = resumed
        # The event the remembered state ends with is checked too, as a snapshot's is: its row may have been
        # altered since (its recorded hash is what matched).
        chain = verify_chain([anchor], after_version=anchor.version - 1, after_hash=anchor.prev_hash)
        if chain.ok:
            chain = verify_chain(tail, after_version=anchor.version, after_hash=anchor.hash)
        if not chain.ok:
            raise _damaged(game_id, chain.first_broken, chain.reason)
        return _remembered(replay(game_id, tail, state, state_at=lambda version: load_state(uow, game_id, upto=version)),
                           (tail[-1] if tail else anchor).hash)
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
    state = replay(game_id, tail, start, state_at=lambda version: load_state(uow, game_id, upto=version))
    if recorded:
        _remembered(state, recorded[-1].hash)
    return state


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


def check_log(uow, game_id: str) -> int:
    """The version at the head of a game's log, once its whole hash chain and its event types are checked:
    DamagedLog otherwise, naming the break as `checked_log` does.

    For a command that shows the game and needs the log only checked, not
    decoded (`pbem state`, now or `--at`): the hashes are worked out from
    the texts the store holds (`chain_holds`), which takes about half the
    time of decoding every row and encoding it again. Where that finds a
    fault, `checked_log` checks the log as `pbem verify` does and names it;
    should it find none (a text stored in another spelling than the one
    hashed), the log is sound and served.
    """
    stored = uow.events.stored_texts(game_id)
    if not chain_holds(game_id, stored):
        checked_log(uow, game_id)
    for row in stored:
        if not known_event_type(row.type):
            readable(uow.events.read(game_id, after=row.version - 1, upto=row.version))  # DamagedLog naming it
    return len(stored)


def maybe_snapshot(uow, state: GameState, previous_version: int, now: datetime) -> None:
    if state.version // SNAPSHOT_EVERY > previous_version // SNAPSHOT_EVERY:
        uow.snapshots.save(state.game_id, state.version, state_to_json(state), ENGINE_VERSION, now)


def snapshot_log(uow, game_id: str, now: datetime) -> int:
    """Write the snapshots a game played here would have (one at each multiple of SNAPSHOT_EVERY) for a game whose
    log came in whole (`pbem import`); how many were written.

    Without them every past version of an imported game (`pbem state --at`,
    and a rollback's target when the state is loaded) is a replay from zero;
    with them it costs a snapshot interval, as for a game played here. One
    walk of the log, which follows its rollbacks, so each snapshot is the
    state at its version whichever branch that version is on.
    """
    written = 0
    for version, _before, _event, after in walk(game_id, readable(uow.events.read(game_id))):
        if version % SNAPSHOT_EVERY == 0:
            uow.snapshots.save(game_id, version, state_to_json(after), ENGINE_VERSION, now)
            written += 1
    return written

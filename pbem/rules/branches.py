"""A log with rollbacks: which events still count, and the state they add up to.

A rollback (`RolledBack {"to": V}`) is appended like any order; it never
deletes. Every event recorded after version V and still counting when the
rollback came is *superseded*: kept, readable by the moderator (and by
auditors once the game has ended), re-derived by `verify`, but no longer
part of the game. The state after a rollback is the state at V, continuing
with the log's own version numbers, so draws, deadlines and reports after it
stay numbered as the log is.

Two things are not undone, because they happened at the table rather than on
the board: who sits in each seat (names after REPLACE) and what the table
records (absences, time zones, KICK, observers, a pause). A player replaced
last week stays replaced after the moderator rewinds a phase. Orders kept for
a later turn belong to the position they were sent in and go back with it.

Everything here is derived from the events alone, so the `superseded_by`
column of the store is an index of this, never the authority.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from pbem.rules.core.commands import RollBack
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.engine import apply, is_input, new_game
from pbem.rules.ledger import LOG_CLAUSE

#: Table entries that belong to the position, not to the people around it: they go back with a rollback.
_POSITIONAL = ("queued:",)


def superseded(events: Sequence[Event], first_version: int = 1) -> dict[int, int]:
    """Each superseded version, mapped to the version of the rollback that superseded it."""
    live: list[int] = []
    out: dict[int, int] = {}
    for version, event in enumerate(events, first_version):
        if event.type == "RolledBack":
            while live and live[-1] > event.data["to"]:
                out[live.pop()] = version
        live.append(version)
    return out


def resting(events: Sequence[Event], version: int) -> bool:
    """True when ``version`` ends a batch: the game waited for an order there (or it is the head)."""
    return version == len(events) or is_input(events[version])


def rollback_target(game_id: str, events: Sequence[Event], command: RollBack) -> int:
    """The version ``command`` names: ``to`` itself; the version the game waited at just before the order that
    began the batch holding ``to`` (``before``); or where ``turn`` (and ``phase``) began, the first version of
    it the game waited at on the branch that counts. A Rejection says why a moment names no version.
    """
    if command.turn is None:
        if not command.before:
            return command.to
        if not 1 <= command.to <= len(events):
            raise Rejection(f"version {command.to} is not in the log (versions 1 to {len(events)})", LOG_CLAUSE)
        undone = superseded(events)
        if command.to in undone:
            raise Rejection(f"version {command.to} was already undone by the rollback at version {undone[command.to]}",
                            LOG_CLAUSE)
        start = next((v for v in range(command.to, 0, -1) if is_input(events[v - 1])), 1)
        return start - 1
    undone = superseded(events)
    named = f"turn {command.turn}" + (f", {command.phase}" if command.phase else "")
    for version, _before, _event, after in walk(game_id, events):
        if version in undone or not resting(events, version) or version == len(events):
            continue
        if after.turn == command.turn and (command.phase is None or after.phase == command.phase):
            return version
    raise Rejection(f"the game never waited for an order in {named} on the branch that counts: "
                    "name a version instead (HISTORY shows them)", LOG_CLAUSE)


def roll_back(events: Sequence[Event], command: RollBack, game_id: str = "") -> list[Event]:
    """The rollback event for ``command`` on this log, or a Rejection saying why that version cannot be gone back to."""
    head = len(events)
    to = rollback_target(game_id, events, command)
    if not 1 <= to < head:
        raise Rejection(f"version {to} is not before the head of the log (version {head})", LOG_CLAUSE)
    undone = superseded(events)
    if to in undone:
        raise Rejection(f"version {to} was itself undone by the rollback at version {undone[to]}", LOG_CLAUSE)
    if not resting(events, to):
        raise Rejection(
            f"version {to} falls inside the outcomes of one order; go back to a version where the game waited "
            "for an order (the version just before an order: HISTORY and `pbem log` number them, and "
            "ROLLBACK BEFORE <version> finds it)",
            LOG_CLAUSE,
        )
    if any(e.type == "SeedRevealed" and e.data["to"] == "everyone" for e in events):
        raise Rejection("the seed is public now that the game has ended: the draws after a rollback could be foreseen",
                        LOG_CLAUSE)
    if not command.reason.strip():
        raise Rejection("a rollback needs a reason: the players are told it", LOG_CLAUSE)
    return [Event("RolledBack", {"to": to, "reason": command.reason.strip()}, (LOG_CLAUSE,))]


def restored(target: GameState, current: GameState, version: int) -> GameState:
    """The state at a rollback's target, as the game goes on at ``version``: the board and hands of the target,
    the seats and the table of now (see the module's docstring)."""
    table = current.table
    for key in list(table):
        if key.startswith(_POSITIONAL):
            table = table.without(key)
    for key, value in target.table.items():
        if key.startswith(_POSITIONAL):
            table = table.set(key, value)
    names = {p.id: p.name for p in current.players}
    players = tuple(replace(p, name=names.get(p.id, p.name)) for p in target.players)
    return replace(target, table=table, players=players, version=version)


def fold_log(
    game_id: str,
    events: Sequence[Event],
    *,
    start: GameState | None = None,
    state_at: Callable[[int], GameState] | None = None,
) -> GameState:
    """Fold a log, or its tail after ``start``, following every rollback in it.

    A rollback's target before ``start`` is asked of ``state_at`` (the
    projector reads it from a snapshot); targets inside ``events`` are kept as
    the fold passes them.
    """
    state = start or new_game(game_id)
    first = state.version + 1
    targets = {e.data["to"] for e in events if e.type == "RolledBack"}
    kept: dict[int, GameState] = {}
    if state.version in targets:
        kept[state.version] = state
    for version, event in enumerate(events, first):
        if event.type == "RolledBack":
            to = event.data["to"]
            target = kept.get(to)
            if target is None:
                if state_at is None:
                    raise ValueError(f"version {version} rolls back to version {to}, before the events given")
                target = state_at(to)
            state = restored(target, state, version)
        else:
            state = apply(state, event)
        if version in targets:
            kept[version] = state
    return state


def walk(game_id: str, events: Sequence[Event]) -> Iterator[tuple[int, GameState, Event, GameState]]:
    """Each event of a log with the state before it and after it, following rollbacks: for tools that read a
    whole log (history, explanations, the archive)."""
    targets = {e.data["to"] for e in events if e.type == "RolledBack"}
    kept: dict[int, GameState] = {}
    state = new_game(game_id)
    if 0 in targets:
        kept[0] = state
    for version, event in enumerate(events, 1):
        after = restored(kept[event.data["to"]], state, version) if event.type == "RolledBack" else apply(state, event)
        yield version, state, event, after
        state = after
        if version in targets:
            kept[version] = state

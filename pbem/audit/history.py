"""A game's history as a viewer may read it (`pbem log`).

A log with rollbacks has two branches (or more): what counts, and what was
superseded. The moderator reads both; an auditor reads both once the game has
ended (during the game he reads what counts, like everyone else); players and
observers read what counts and the rollback itself, which says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.audit.disclosure import overseer
from pbem.rules.branches import fold_log, superseded, walk
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState
from pbem.rules.engine import apply, describe_event
from pbem.rules.view import check_viewer
from pbem.store.events import RecordedEvent


def _entry(rec: RecordedEvent, before: GameState, event: Event, after: GameState, viewer: str,
           undone: dict[int, int]) -> dict[str, Any] | None:
    """One entry of the history, or None for an event this viewer is not told of."""
    text = describe_event(before, event, viewer)
    if text is None:
        return None
    entry: dict[str, Any] = {
        "version": rec.version,
        "type": rec.type,
        "text": text,
        "cites": list(event.cites),
        "recorded_at": rec.metadata.get("recorded_at"),
        "hash": rec.hash,
        "turn": after.turn,  # where the game stood once it happened: a PhaseBegan belongs to the phase it begins
        "phase": after.phase,
    }
    if rec.version in undone:
        entry["superseded_by"] = undone[rec.version]
    if viewer in ("moderator", "auditor"):
        entry["actor"] = rec.metadata.get("actor")
        entry["source"] = rec.metadata.get("source")
    return entry


@dataclass(frozen=True)
class Told:
    """A history as far as it was read: its entries, the viewer they were told to, and the position reached
    (so the entries of later events can be added without reading the log again, `history_after`)."""

    entries: list[dict[str, Any]]
    viewer: str
    state: GameState
    version: int
    head: str  # the hash of the last event read: what was told is still the log's beginning while it matches


def history(game_id: str, recorded: list[RecordedEvent], viewer: str) -> list[dict[str, Any]]:
    """One entry per event the viewer may know of: version, what happened, the clauses cited.

    The viewer is checked against the game as it stands now: a nation chosen
    in setup is a viewer of the whole history, the events before its choice
    included.
    """
    return history_told(game_id, recorded, viewer).entries


def history_told(game_id: str, recorded: list[RecordedEvent], viewer: str) -> Told:
    """`history`, with the position it reached: what `history_after` extends."""
    events = [Event.from_payload(rec.type, rec.payload) for rec in recorded]
    steps = list(walk(game_id, events))  # one fold: the game now is where the walk ends
    now = steps[-1][3] if steps else fold_log(game_id, events)
    viewer = check_viewer(now, viewer)
    undone = superseded(events)
    both = overseer(viewer, now.finished)  # who reads what a rollback superseded: who reads every event whole
    entries: list[dict[str, Any]] = []
    for rec, (version, before, event, after) in zip(recorded, steps):
        if version in undone and not both:
            continue
        entry = _entry(rec, before, event, after, viewer, undone)
        if entry is not None:
            entries.append(entry)
    return Told(entries, viewer, now, len(recorded), recorded[-1].hash if recorded else "")


#: Events after which the history told so far cannot simply be extended: a rollback marks earlier entries
#: superseded (and changes who reads them), and the end of the game changes what an auditor reads.
_REWRITES = ("RolledBack", "GameEnded", "SeedRevealed")


def history_after(told: Told, game_id: str, recorded: list[RecordedEvent], asked: str) -> Told:
    """``told`` extended by the events of ``recorded`` after it, read once each: a page of a long game is not
    made by folding the whole log again for every new event. Read afresh (`history_told`) when one of them
    rewrites what came before (a rollback, the end of the game) or the viewer reads otherwise now."""
    later = recorded[told.version:]
    if any(rec.type in _REWRITES for rec in later) or len(recorded) < told.version:
        return history_told(game_id, recorded, asked)
    entries = list(told.entries)
    state = told.state
    for rec in later:
        event = Event.from_payload(rec.type, rec.payload)
        after = apply(state, event)
        entry = _entry(rec, state, event, after, told.viewer, {})
        if entry is not None:
            entries.append(entry)
        state = after
    if check_viewer(state, asked) != told.viewer:
        return history_told(game_id, recorded, asked)
    return Told(entries, told.viewer, state, len(recorded), recorded[-1].hash if recorded else "")

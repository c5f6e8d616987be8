"""A game's history as a viewer may read it (`pbem log`).

A log with rollbacks has two branches (or more): what counts, and what was
superseded. The moderator reads both; an auditor reads both once the game has
ended (during the game he reads what counts, like everyone else); players and
observers read what counts and the rollback itself, which says why.
"""

from __future__ import annotations

from typing import Any

from pbem.audit.disclosure import overseer
from pbem.rules.branches import fold_log, superseded, walk
from pbem.rules.core.events import Event
from pbem.rules.engine import describe_event
from pbem.rules.view import check_viewer
from pbem.store.events import RecordedEvent


def history(game_id: str, recorded: list[RecordedEvent], viewer: str) -> list[dict[str, Any]]:
    """One entry per event the viewer may know of: version, what happened, the clauses cited.

    The viewer is checked against the game as it stands now: a nation chosen
    in setup is a viewer of the whole history, the events before its choice
    included.
    """
    events = [Event.from_payload(rec.type, rec.payload) for rec in recorded]
    now = fold_log(game_id, events)
    viewer = check_viewer(now, viewer)
    undone = superseded(events)
    both = overseer(viewer, now.finished)  # who reads what a rollback superseded: who reads every event whole
    entries: list[dict[str, Any]] = []
    for rec, (version, before, event, after) in zip(recorded, walk(game_id, events)):
        if version in undone and not both:
            continue
        text = describe_event(before, event, viewer)
        if text is None:
            continue
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
        if version in undone:
            entry["superseded_by"] = undone[version]
        if viewer in ("moderator", "auditor"):
            entry["actor"] = rec.metadata.get("actor")
            entry["source"] = rec.metadata.get("source")
        entries.append(entry)
    return entries

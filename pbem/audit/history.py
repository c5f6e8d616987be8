"""A game's history as a viewer may read it (`pbem log`)."""

from __future__ import annotations

from typing import Any

from pbem.rules import engine as rules
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
    if events:
        viewer = check_viewer(rules.fold(rules.new_game(game_id), events), viewer)
    state = rules.new_game(game_id)
    entries: list[dict[str, Any]] = []
    for rec, event in zip(recorded, events):
        text = describe_event(state, event, viewer)
        state = rules.apply(state, event)
        if text is None:
            continue
        entry: dict[str, Any] = {
            "version": rec.version,
            "type": rec.type,
            "text": text,
            "cites": list(event.cites),
            "recorded_at": rec.metadata.get("recorded_at"),
            "hash": rec.hash,
        }
        if viewer in ("moderator", "auditor"):
            entry["actor"] = rec.metadata.get("actor")
            entry["source"] = rec.metadata.get("source")
        entries.append(entry)
    return entries

"""A page's history grows with the log (pbem.service.pages.PageCache): what `history_after` adds to a history
told up to some version must be exactly what `history` tells of the whole log, for every viewer, wherever the
log was cut, rollbacks and the game's end included (they make it read afresh)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pbem.audit.explain import explain
from pbem.audit.history import history, history_after, history_told
from pbem.rules.engine import new_game
from pbem.service.projector import load_state, snapshot_log
from pbem.store.database import ensure_schema, make_engine
from pbem.store.events import RecordedEvent
from pbem.store.unit_of_work import UnitOfWork

from .recorded_games import HERE, load_into, read

GAMES = ("planner-3p-to-the-end", "random-6p-1991-options")


def _log(db_engine, stem: str) -> tuple[str, list[RecordedEvent]]:
    game = load_into(db_engine, read(HERE / f"{stem}.jsonl.gz"))
    with UnitOfWork(db_engine) as uow:
        return game, uow.events.read(game)


@pytest.mark.parametrize("stem", GAMES)
def test_a_history_extended_event_by_event_is_the_history_of_the_whole_log(sqlite_url, stem):
    db = make_engine(sqlite_url)
    ensure_schema(db)
    try:
        game, recorded = _log(db, stem)
    finally:
        db.dispose()
    nations = sorted({e.payload["nation"].lower() for e in recorded if e.type == "NationChosen"})
    chosen = max(e.version for e in recorded if e.type == "NationChosen")  # a player reads from his nation on
    for viewer in ["moderator", "observer", "auditor", *(f"player:{n}" for n in nations[:2])]:
        whole = history(game, recorded, viewer)
        first = 1 if not viewer.startswith("player:") else chosen
        for cut in (first, first + 6, len(recorded) // 3, len(recorded) // 2, len(recorded) - 5):
            told = history_told(game, recorded[:cut], viewer)
            # grown in three steps, as pages read a log that grows between requests
            middle = (cut + len(recorded)) // 2
            told = history_after(told, game, recorded[:middle], viewer)
            told = history_after(told, game, recorded, viewer)
            assert told.entries == whole, f"{viewer}, cut at {cut}"
            assert told.version == len(recorded) and told.head == recorded[-1].hash


def test_an_explanation_from_snapshots_is_the_one_folded_from_the_beginning(sqlite_url):
    """A page explains an entry from the store's snapshots (pbem.service.pages.explanation): the same words."""
    db = make_engine(sqlite_url)
    ensure_schema(db)
    try:
        game, recorded = _log(db, "planner-3p-to-the-end")
        with UnitOfWork(db) as uow:
            snapshot_log(uow, game, datetime(2027, 1, 1, tzinfo=timezone.utc))
        with UnitOfWork(db) as uow:
            now = load_state(uow, game)
            for version in range(1, len(recorded) + 1, max(1, len(recorded) // 40)):
                for viewer in ("moderator", "observer"):
                    plain = explain(game, recorded, version, viewer)
                    quick = explain(game, recorded, version, viewer, now=now,
                                    state_at=lambda v: new_game(game) if v == 0 else load_state(uow, game, upto=v))
                    assert quick == plain, (version, viewer)
    finally:
        db.dispose()

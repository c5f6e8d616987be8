"""A state this process remembers is used again only while the log still holds it (pbem/service/projector.py)."""

from __future__ import annotations

import email
from email.policy import default as default_policy

import random
import secrets

import pytest
from sqlalchemy import text

from pbem.rules import engine as E
from pbem.service.projector import RECENT, DamagedLog, load_checked, load_state, replay
from pbem.service.simulate import simulate
from pbem.store.database import make_engine
from pbem.store.unit_of_work import UnitOfWork

GAME = "sim-recent"


_ENGINES: list = []


@pytest.fixture(autouse=True)
def _engines_disposed():
    """Each engine a test opens is disposed after it (a SQLite engine keeps its writer's connection open)."""
    yield
    while _ENGINES:
        _ENGINES.pop().dispose()


def _engine(url: str):
    made = make_engine(url)
    _ENGINES.append(made)
    return made


def _game(tmp_path, name: str, seed: str = "recent"):
    url = f"sqlite:///{tmp_path / name}"
    simulate(3, 1, seed, db_url=url)
    return _engine(url)


def _from_zero(db):
    with UnitOfWork(db) as uow:
        return replay(GAME, uow.events.read(GAME))


def test_a_remembered_state_is_the_state_replayed_from_zero_and_spares_the_snapshot(tmp_path):
    db = _game(tmp_path, "a.sqlite")
    RECENT.forget()
    with UnitOfWork(db) as uow:
        first = load_checked(uow, GAME)
    assert first == _from_zero(db)
    with UnitOfWork(db) as uow:
        # The snapshots and every event before the last are gone: a second load can only come from the
        # remembered state (from the log, it would find a gap at version 1).
        uow.connection.execute(text("DELETE FROM snapshots"))
        uow.connection.execute(text("DELETE FROM events WHERE game_id = :g AND version < :v"),
                               {"g": GAME, "v": first.version})
        again = load_checked(uow, GAME)
        assert again == first == load_state(uow, GAME)


def test_another_log_under_the_same_game_id_is_not_served_from_memory(tmp_path):
    one = _game(tmp_path, "one.sqlite")
    simulate(4, 1, "recent", db_url=f"sqlite:///{tmp_path / 'other.sqlite'}")  # the same game id, four players
    other = _engine(f"sqlite:///{tmp_path / 'other.sqlite'}")
    RECENT.forget()
    with UnitOfWork(one) as uow:
        state_one = load_checked(uow, GAME)
    with UnitOfWork(other) as uow:
        state_other = load_checked(uow, GAME)
    assert state_one.version > 0 and state_other.version > 0
    assert len(state_other.players) == 4 and len(state_one.players) == 3
    assert state_other == _from_zero(other) != state_one


def test_a_row_altered_after_it_was_remembered_is_found(tmp_path):
    db = _game(tmp_path, "c.sqlite")
    RECENT.forget()
    with UnitOfWork(db) as uow:
        state = load_checked(uow, GAME)
        uow.connection.execute(text("UPDATE events SET payload = '{\"forged\": true}' WHERE game_id = :g AND version = :v"),
                               {"g": GAME, "v": state.version})
    with UnitOfWork(db) as uow, pytest.raises(DamagedLog, match=f"version {state.version}"):
        load_checked(uow, GAME)


def test_events_appended_by_someone_else_are_folded_on_top(tmp_path):
    db = _game(tmp_path, "d.sqlite")
    RECENT.forget()
    with UnitOfWork(db) as uow:
        before = load_checked(uow, GAME)
    assert E.pending(before)  # the game waits for someone: another process's order would add events
    with UnitOfWork(db) as uow:  # a remembered state older than the log: only the tail is folded
        RECENT.remember(replay(GAME, uow.events.read(GAME, upto=before.version - 5)),
                        uow.events.read(GAME, upto=before.version - 5)[-1].hash)
        assert load_checked(uow, GAME) == before


def test_the_state_a_phase_began_from_is_remembered_and_is_the_one_replayed(tmp_path):
    RECENT.forget()
    db = _game(tmp_path, "e.sqlite")
    with UnitOfWork(db) as uow:
        start = load_state(uow, GAME).phase_began - 1
        remembered = RECENT.phase_start(uow, GAME, start)
        assert remembered is not None and remembered.version == start
        assert remembered == replay(GAME, uow.events.read(GAME, upto=start)) == load_state(uow, GAME, upto=start)


def test_a_phase_start_remembered_from_another_log_under_the_same_game_id_is_not_used(tmp_path):
    one = _game(tmp_path, "f1.sqlite")
    simulate(4, 1, "recent", db_url=f"sqlite:///{tmp_path / 'f2.sqlite'}")  # the same game id, four players
    other = _engine(f"sqlite:///{tmp_path / 'f2.sqlite'}")
    with UnitOfWork(one) as uow:
        version = min(load_state(uow, GAME).version, 20)
        from_one = replay(GAME, uow.events.read(GAME, upto=version))
    assert _hash_at(other, version) != _hash_at(one, version)
    RECENT.forget()
    RECENT.remember_phase_start(from_one, _hash_at(one, version))
    with UnitOfWork(one) as uow:
        assert RECENT.phase_start(uow, GAME, version) is from_one
    with UnitOfWork(other) as uow:
        assert RECENT.phase_start(uow, GAME, version) is None
        assert load_state(uow, GAME, upto=version) == replay(GAME, uow.events.read(GAME, upto=version)) != from_one


def _hash_at(db, version: int) -> str:
    with UnitOfWork(db) as uow:
        return uow.events.read(GAME, after=version - 1, upto=version)[0].hash


def test_reports_told_from_a_remembered_phase_start_are_the_letters_told_from_the_store(tmp_path, monkeypatch):
    """The same game played twice, the second time finding every phase start in the store: same reports."""
    def played(name: str, remembered: bool) -> list[bytes]:
        keys = random.Random(7)  # the game's reply key and the players' secrets, the same in both games
        monkeypatch.setattr(secrets, "token_hex", lambda n=32: keys.randbytes(n).hex())
        monkeypatch.setattr(secrets, "token_urlsafe", lambda n=32: keys.randbytes(n).hex()[:8])
        if not remembered:
            monkeypatch.setattr(RECENT, "phase_start", lambda uow, game_id, version: None)
        RECENT.forget()
        db = _game(tmp_path, name)
        monkeypatch.undo()
        with UnitOfWork(db) as uow:
            rows = uow.connection.execute(text("SELECT raw FROM outbox ORDER BY id")).all()
        # every letter holding a report, alone, waiting for what follows it (news) or gone with a prompt: its text
        # (a prompt's Message-ID is not the same from game to game, a report's words are)
        texts = [email.message_from_bytes(row[0], policy=default_policy).get_body(("plain",)).get_content()
                 for row in rows]
        return [t for t in texts if "what happened from" in t]

    from_memory, from_store = played("g1.sqlite", True), played("g2.sqlite", False)
    assert len(from_memory) > 3 and from_memory == from_store

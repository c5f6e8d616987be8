"""The one writer connection of a SQLite engine (pbem/store/writer.py), through UnitOfWork as the service uses it."""

from __future__ import annotations

import gc
import os
import sqlite3
import threading
import warnings
import weakref
from datetime import datetime, timezone

import pytest
from sqlalchemy.exc import OperationalError

from pbem.store import GENESIS, EventStore, NewEvent, UnitOfWork
from pbem.store.database import ensure_schema, make_engine
from pbem.store.checkpoint import EVERY
from pbem.store.writer import Writer, writer_of

NOW = datetime(2024, 11, 22, 12, 0, tzinfo=timezone.utc)


def ev(n: int) -> list[NewEvent]:
    return [NewEvent("OrderRecorded", {"n": n}, dedupe_key=f"k{n}")]


@pytest.fixture
def engine(tmp_path):
    made = make_engine(f"sqlite:///{tmp_path / 'pbem.sqlite'}")
    ensure_schema(made)
    yield made
    made.dispose()


def driver_of(engine) -> sqlite3.Connection:
    with UnitOfWork(engine) as uow:
        return uow.conn.connection.driver_connection


def test_units_of_work_share_one_driver_connection_kept_out_of_the_pool(engine):
    first = driver_of(engine)
    for n in range(1, 4):
        with UnitOfWork(engine) as uow:
            uow.events.append("g", n - 1, ev(n))
            assert uow.conn.connection.driver_connection is first
    assert engine.pool.checkedout() == 1  # the writer's, and nothing else left out
    with UnitOfWork(engine) as uow:
        assert uow.events.head("g")[0] == 3


def test_an_engine_on_memory_keeps_the_pool():
    memory = make_engine("sqlite:///:memory:")
    try:
        assert writer_of(memory) is None
    finally:
        memory.dispose()


def test_a_second_unit_of_work_waits_for_the_first_then_sees_its_append(engine):
    inside = threading.Event()
    outcome: list = []

    def second() -> None:
        inside.wait()
        try:
            with UnitOfWork(engine) as uow:
                outcome.append(uow.events.append("g", 1, ev(2))[0].version)
        except Exception as exc:  # reported below, not lost in the thread
            outcome.append(exc)

    thread = threading.Thread(target=second)
    thread.start()
    with UnitOfWork(engine) as uow:
        inside.set()
        uow.events.append("g", 0, ev(1))
    thread.join(timeout=60)
    assert outcome == [2]


def test_a_unit_of_work_inside_another_on_one_thread_is_refused_at_once(engine):
    with UnitOfWork(engine) as outer:
        outer.events.append("g", 0, ev(1))
        with pytest.raises(RuntimeError, match="already in a unit of work"):
            with UnitOfWork(engine):
                pass
    with UnitOfWork(engine) as uow:  # the outer one committed, and the writer is free again
        assert uow.events.head("g")[0] == 1


def test_waiting_longer_than_the_busy_timeout_raises_what_sqlite_raises(engine):
    writer = Writer(wait_seconds=0.01)
    writer.take(engine)
    raised: list = []

    def other() -> None:
        try:
            writer.take(engine)
        except OperationalError as exc:
            raised.append(exc)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join(timeout=60)
    writer.give_back(clean=True)
    writer.close()
    assert len(raised) == 1 and "database is locked" in str(raised[0])


def test_a_caller_error_rolls_back_and_keeps_the_connection(engine):
    before = driver_of(engine)
    with pytest.raises(ValueError):
        with UnitOfWork(engine) as uow:
            uow.events.append("g", 0, ev(1))
            raise ValueError("the caller's own mistake")
    assert driver_of(engine) is before
    with UnitOfWork(engine) as uow:
        assert uow.events.head("g") == (0, GENESIS)


def test_a_commit_that_fails_gives_the_connection_up_and_the_next_unit_of_work_a_fresh_one(engine):
    broken = driver_of(engine)
    with pytest.raises(sqlite3.ProgrammingError):
        with UnitOfWork(engine) as uow:
            uow.events.append("g", 0, ev(1))
            broken.close()  # as a connection the driver lost: the commit cannot run
    with UnitOfWork(engine) as uow:
        assert uow.conn.connection.driver_connection is not broken
        assert uow.events.head("g") == (0, GENESIS)
        uow.events.append("g", 0, ev(1))
    with UnitOfWork(engine) as uow:
        assert uow.events.head("g")[0] == 1


def test_dispose_closes_the_kept_connection_and_the_engine_still_works(engine):
    kept = driver_of(engine)
    engine.dispose()
    with pytest.raises(sqlite3.ProgrammingError):
        kept.execute("SELECT 1")
    with UnitOfWork(engine) as uow:
        uow.events.append("g", 0, ev(1))
        assert uow.conn.connection.driver_connection is not kept


def _open_files(path) -> int:
    """How many of this process's file descriptors are open on ``path`` or its -wal and -shm."""
    names = {str(path), f"{path}-wal", f"{path}-shm"}
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") in names
        except OSError:
            pass
    return count


def test_a_disposed_engine_closes_its_files_and_is_collected(tmp_path):
    path = tmp_path / "dropped.sqlite"
    made = make_engine(f"sqlite:///{path}")
    ensure_schema(made)
    with UnitOfWork(made) as uow:
        uow.events.append("g", 0, ev(1))
    assert _open_files(path) > 0
    made.dispose()
    assert _open_files(path) == 0
    alive = weakref.ref(made)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del made, uow
        gc.collect()
    assert alive() is None, "the writer kept its engine alive"
    assert not [w for w in caught if "garbage collector" in str(w.message)], [str(w.message) for w in caught]


def test_reads_outside_a_unit_of_work_still_use_the_pool(engine):
    with UnitOfWork(engine) as uow:
        uow.events.append("g", 0, ev(1))
    with engine.connect() as conn:
        assert EventStore(conn).head("g")[0] == 1
        assert engine.pool.checkedout() == 2  # this reader and the writer


def _wal_pages(path) -> int:
    return os.path.getsize(f"{path}-wal") // 4096


def test_a_commit_never_copies_the_log_back_while_it_holds_the_writer(tmp_path):
    """SQLite would checkpoint inside the COMMIT that passes a thousand pages, with every writer waiting
    (pbem/store/checkpoint.py). Three commits of 600 pages each: had the second checkpointed, the third would
    have started the log over and the file would stay near 1,200 pages."""
    path = tmp_path / "pbem.sqlite"
    engine = make_engine(f"sqlite:///{path}")
    try:
        ensure_schema(engine)
        with UnitOfWork(engine) as uow:
            assert uow.conn.connection.driver_connection.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
        for n in range(3):
            with UnitOfWork(engine) as uow:
                uow.events.append("g", n, [NewEvent("OrderRecorded", {"pad": os.urandom(1200 * 1024).hex()},
                                                    dedupe_key=f"big{n}")])
        assert _wal_pages(path) > 1700
        assert writer_of(engine).checkpoints == 0
    finally:
        engine.dispose()


def test_the_log_is_copied_back_beside_the_writer_every_so_many_turns(tmp_path):
    path = tmp_path / "pbem.sqlite"
    engine = make_engine(f"sqlite:///{path}")
    try:
        ensure_schema(engine)
        writer = writer_of(engine)
        for n in range(EVERY + 1):
            with UnitOfWork(engine) as uow:
                uow.events.append("g", n, ev(n + 1))
        for _ in range(200):
            if writer.checkpoints:
                break
            threading.Event().wait(0.05)
        assert writer.checkpoints == 1
        with sqlite3.connect(path) as other:  # everything in the log is in the file now
            busy, frames, copied = other.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert busy == 0 and frames == copied
        mine = [t for t in threading.enumerate() if t.name == "pbem-checkpoint" and t is writer._checkpointer._thread]
        assert len(mine) == 1
    finally:
        engine.dispose()
    assert not mine[0].is_alive()  # disposing the engine ends its checkpoints

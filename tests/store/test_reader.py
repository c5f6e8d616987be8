"""The pages' reader engine (`make_reader`): it never takes SQLite's write lock, and it cannot write."""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime, timezone

import pytest
from sqlalchemy.exc import OperationalError

from pbem.store.database import ensure_schema, make_engine, make_reader
from pbem.store.events import NewEvent
from pbem.store.unit_of_work import UnitOfWork

T0 = datetime(2027, 1, 1, tzinfo=timezone.utc)


def test_a_reader_open_on_sqlite_keeps_no_writer_waiting_and_cannot_write(sqlite_url):
    writer = make_engine(sqlite_url)
    ensure_schema(writer)
    with UnitOfWork(writer) as uow:
        uow.games.create("g1", ruleset="advciv", moderator_email="m@example.org", now=T0)
        uow.events.append("g1", 0, [NewEvent("Noted", {"n": 1}, {})])
    reader = make_reader(sqlite_url)
    try:
        with UnitOfWork(reader) as seen:
            assert len(seen.events.read("g1")) == 1
            done = threading.Event()

            def write() -> None:  # while the reader's transaction is open
                with UnitOfWork(writer) as uow:
                    uow.events.append("g1", 1, [NewEvent("Noted", {"n": 2}, {})])
                done.set()

            worker = threading.Thread(target=write)
            worker.start()
            assert done.wait(5), "the writer waited on the reader"
            worker.join()
            assert len(seen.events.read("g1")) == 1, "a reader's transaction reads one snapshot"
        with UnitOfWork(reader) as seen:
            assert len(seen.events.read("g1")) == 2
        with pytest.raises((OperationalError, sqlite3.OperationalError), match="readonly"):  # appends go to the driver
            with UnitOfWork(reader) as uow:
                uow.events.append("g1", 2, [NewEvent("Noted", {"n": 3}, {})])
    finally:
        reader.dispose()
        writer.dispose()

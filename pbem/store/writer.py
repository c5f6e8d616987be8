"""The one connection a process writes a SQLite database file through.

SQLite lets one transaction write a database at a time, and every unit of
work pbem opens on SQLite is a writer from its first statement (``BEGIN
IMMEDIATE``, pbem/store/database.py). Two units of work of one process
therefore never run side by side; the second waited inside SQLite's busy
handler, which sleeps and polls. Taking a connection from SQLAlchemy's
pool and handing it back for each of them cost a durable one-event append
a fifth of its time on a fast disk (docs/performance.md), for a connection
the pool gave back the next time anyway.

So on a SQLite file each engine made by ``make_engine`` has a ``Writer``:
one SQLAlchemy ``Connection`` kept open across units of work, used by one of
them at a time under a lock. A unit of work waiting for another of the same
process now waits on that lock, woken as soon as it is free, instead of
polling; other processes are still kept out by SQLite's own lock and busy
timeout. Reads outside a unit of work still use the pool.

The connection is given up, and a fresh one taken next time, whenever a unit
of work could not end its transaction cleanly (a failed commit or rollback, a
disk that filled, a connection SQLAlchemy invalidated), and closed when the
engine is disposed. PostgreSQL keeps the pool: its writers work side by side,
and the pool's pre-ping turns a restarted server into a reconnect.
"""

from __future__ import annotations

import sqlite3
import threading
import types

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import QueuePool

from pbem.store.checkpoint import EVERY, Checkpointer


class Writer:
    """The kept connection of one SQLite engine, and the lock that lets one unit of work use it at a time."""

    def __init__(self, wait_seconds: float, path: str | None = None) -> None:
        self._wait = wait_seconds
        # the log copied back beside the writer, not inside its commits (pbem/store/checkpoint.py)
        self._checkpointer = Checkpointer(path, wait_seconds) if path else None
        self._turns = 0
        self._lock = threading.Lock()
        self._holder: int | None = None  # the thread in a unit of work on it
        self._conn: Connection | None = None
        self.driver: sqlite3.Connection | None = None  # the driver's connection under it, while it is kept
        self._retire = False  # the engine was disposed while a unit of work held the connection

    def take(self, engine: Engine) -> Connection:
        """The writer's ``Connection``, once no other unit of work of this process holds it.

        Waits as long as SQLite's busy timeout would, and then raises the
        error SQLite's busy handler raises."""
        me = threading.get_ident()
        if self._holder == me:
            raise RuntimeError("this thread is already in a unit of work on this SQLite database, which has one "
                               "writer at a time: a second one would wait for itself")
        if not self._lock.acquire(timeout=self._wait):
            raise OperationalError("BEGIN IMMEDIATE", None, sqlite3.OperationalError("database is locked"))
        self._holder = me
        conn = self._conn
        if conn is None:
            try:
                conn = self._conn = engine.connect()
                self.driver = conn.connection.driver_connection
                if self._checkpointer is not None:
                    self.driver.execute("PRAGMA wal_autocheckpoint = 0")
            except BaseException:
                self._conn = self.driver = None
                self._holder = None
                self._lock.release()
                raise
        return conn

    def give_back(self, clean: bool) -> None:
        """End the holder's turn; ``clean`` when its transaction ended (committed or rolled back) without an error.

        Anything else (an error ending the transaction, which is also how
        SQLAlchemy comes to invalidate a connection, or an engine disposed
        meanwhile) closes the kept connection, and the next unit of work
        takes a fresh one."""
        try:
            conn = self._conn
            if conn is not None and (not clean or self._retire):  # SQLAlchemy invalidates only on an error
                self._drop()
            due = clean and self._checkpointer is not None and self._turns + 1 >= EVERY
            self._turns = 0 if due else self._turns + 1
        finally:
            self._holder = None
            self._lock.release()
        if due:
            self._checkpointer.wake()

    @property
    def checkpoints(self) -> int:
        """Checkpoints run beside this writer so far."""
        return self._checkpointer.done if self._checkpointer is not None else 0

    def close(self) -> None:
        """Close the kept connection now, or when the unit of work holding it ends; stop the checkpoints."""
        if self._checkpointer is not None:
            self._checkpointer.stop()
        if self._lock.acquire(blocking=False):
            try:
                self._drop()
            finally:
                self._lock.release()
        else:
            self._retire = True

    def _drop(self) -> None:
        conn, self._conn, self.driver = self._conn, None, None
        self._retire = False
        if conn is None:
            return
        try:
            if not conn.invalidated:
                conn.invalidate()  # closes the driver's connection, not back into a pool that may be disposed
        finally:
            conn.close()


def attach_writer(engine: Engine, wait_seconds: float) -> None:
    """Give a SQLite file's engine its writer; engines on ``:memory:`` or another pool keep the pool alone.

    The engine's ``dispose`` closes the kept connection. Until then the
    engine stays alive, as it does while any of its connections is lent
    out (SQLAlchemy's pool keeps what it lent, and the pool refers to its
    engine): an engine is disposed when its work is done (the commands do
    it as they end, pbem/cli/context.py) or lives as long as the process.
    ``dispose`` is wrapped rather than listened to: a listener on an
    engine's connection events makes SQLAlchemy dispatch the events of
    every connect, begin and commit, a tenth of a one-event append's own
    time."""
    if not isinstance(engine.pool, QueuePool):
        return
    writer = Writer(wait_seconds, engine.url.database or None)
    engine.pbem_writer = writer  # type: ignore[attr-defined]
    dispose = type(engine).dispose

    def dispose_with_writer(self: Engine, close: bool = True) -> None:
        writer.close()
        dispose(self, close)

    engine.dispose = types.MethodType(dispose_with_writer, engine)  # type: ignore[method-assign]  # this engine alone


def writer_of(engine: Engine) -> Writer | None:
    """The engine's writer, if it has one."""
    return getattr(engine, "pbem_writer", None)

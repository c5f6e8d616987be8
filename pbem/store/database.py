"""Engines, connection settings and schema upgrades.

SQLite (the embedded default) is opened in WAL mode with ``synchronous=FULL``,
foreign keys on and a busy timeout, and every transaction starts with
``BEGIN IMMEDIATE`` so that a read-then-append cannot interleave with another
writer. PostgreSQL URLs are routed to the psycopg 3 driver.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from pbem.shipped import shipped
from pbem.store.faults import StorageFault, database_file, storage_fault
from pbem.store.writer import attach_writer

ENV_URL = "PBEM_DATABASE_URL"
SQLITE_BUSY_TIMEOUT_MS = 30_000
# pg_advisory_xact_lock key held while migrating (any fixed 64-bit number).
_MIGRATION_LOCK_KEY = 0x7062656D_6D696772  # "pbemmigr"

# The repository's alembic.ini and migrations/, or the copies an installed wheel carries.
ALEMBIC_INI = shipped("alembic.ini")
MIGRATIONS_DIR = shipped("migrations")


def default_url() -> str:
    """``$PBEM_DATABASE_URL``, else ``pbem.sqlite`` in the working directory."""
    url = os.environ.get(ENV_URL, "").strip()
    return url or "sqlite:///pbem.sqlite"


def normalize_url(url: str) -> str:
    """Route bare ``postgresql://`` (and ``postgres://``) URLs to psycopg 3."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://"):]
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    return url


def make_engine(url: str, **kwargs) -> Engine:
    """An engine for ``url`` with pbem's connection settings applied."""
    url = normalize_url(url)
    backend = make_url(url).get_backend_name()
    if backend == "sqlite":
        engine = create_engine(url, **kwargs)
        _configure_sqlite(engine)
        attach_writer(engine, SQLITE_BUSY_TIMEOUT_MS / 1000)
        return engine
    if backend == "postgresql":
        kwargs.setdefault("pool_pre_ping", True)
    return create_engine(url, **kwargs)


def make_reader(url: str) -> Engine:
    """An engine for reading only, beside the writers: the web pages' (pbem/web).

    On SQLite a unit of work of `make_engine`'s holds the one write lock from
    its first statement, so a page read through it would keep every message
    waiting. A reader's transactions begin DEFERRED and the connection is
    ``query_only``: each reads one snapshot of the WAL while writers go on,
    and a bug that tried to write would fail instead of taking the lock.
    PostgreSQL readers never block writers: the usual engine serves.
    """
    url = normalize_url(url)
    if make_url(url).get_backend_name() != "sqlite":
        return make_engine(url)
    engine = create_engine(url)
    _configure_sqlite(engine, begin="BEGIN", pragmas=("PRAGMA query_only = ON",), wal=False)
    return engine


def _configure_sqlite(engine: Engine, begin: str = "BEGIN IMMEDIATE",
                      pragmas: tuple[str, ...] = ("PRAGMA synchronous = FULL", "PRAGMA foreign_keys = ON"),
                      wal: bool = True) -> None:
    """Pragmas on every new connection, and ``BEGIN IMMEDIATE`` transactions (a reader's: ``BEGIN``, with
    ``query_only``, and no switch to WAL, which the writers made).

    SQLAlchemy's recipe for pysqlite: turn off the driver's own transaction
    handling (``isolation_level = None``) and emit BEGIN ourselves, which
    also makes SAVEPOINT work. The recipe emits it from the engine's
    ``begin`` event; here the engine's dialect does it in ``do_begin``, the
    hook SQLAlchemy calls to begin a transaction on the driver's connection.
    Same statement, same moment, but with no listener on the engine's
    connection events SQLAlchemy skips dispatching every begin, commit and
    connect of a connection: a seventh of a one-event append's own time
    (docs/performance.md).
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, connection_record):  # noqa: ARG001
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            if wal:
                _enter_wal(cursor)
            for pragma in pragmas:
                cursor.execute(pragma)
        finally:
            cursor.close()

    def do_begin(dialect, dbapi_connection) -> None:  # noqa: ARG001
        # Straight to the driver: through exec_driver_sql this one statement
        # cost a third of a whole durable append (docs/performance.md). A
        # unit of work begins on the driver itself; SQLAlchemy's Transaction,
        # begun later in it, joins that one (pbem/store/unit_of_work.py).
        if not dbapi_connection.in_transaction:
            dbapi_connection.execute(begin)

    engine.dialect.do_begin = types.MethodType(do_begin, engine.dialect)  # this engine's dialect alone


def _enter_wal(cursor: sqlite3.Cursor) -> None:
    """Switch the database file to WAL, waiting out other connections as the busy timeout would.

    The switch needs an exclusive lock. When several processes open a new
    database at once, one of them may hold a write lock in the old journal
    mode while another asks for the switch; SQLite then answers "database is
    locked" at once instead of calling the busy handler (it would otherwise
    risk a deadlock between the two). Once the file is in WAL mode the switch
    is a no-op, so this loop only ever waits on a database's first opening.
    """
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


@contextmanager
def _start_up_lock(engine: Engine) -> Iterator[None]:
    """On a SQLite file, one process at a time opens a new database and migrates it; the others wait.

    Several processes starting at once on a new file (`pbem serve` workers,
    a cron job, the CLI) each switch it to WAL and create the tables. SQLite
    serialises writers with its busy handler, but not every step of a first
    opening goes through it: switching the journal mode, and reading a WAL
    index another connection is just creating or removing, can answer
    "database is locked" at once. An exclusive `flock` on `<file>-startup`
    beside the database makes the start-ups wait for each other instead.
    Reentrant within a thread (``ensure_schema`` holds it while it calls
    ``upgrade``). PostgreSQL uses an advisory lock in ``upgrade`` instead.
    """
    url = engine.url
    path = url.database if url.get_backend_name() == "sqlite" else None
    if (not path or path == ":memory:" or path.startswith("file:") or getattr(_held, "depth", 0)
            or not os.path.isdir(os.path.dirname(os.path.abspath(path)))):  # opening it says what is wrong
        yield
        return
    try:
        lock = open(f"{path}-startup", "a+b")
    except OSError as exc:  # a read-only folder or mount: say so about the database, not about the lock file
        fault = storage_fault(exc)
        if fault is None:
            raise
        raise StorageFault(fault.kind, database_file(engine), fault.detail) from exc
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _held.depth = 1
        try:
            yield
        finally:
            _held.depth = 0
            fcntl.flock(lock, fcntl.LOCK_UN)


_held = threading.local()


def _alembic_config(connection=None):
    from alembic.config import Config

    cfg = Config(str(ALEMBIC_INI))
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    # Tell migrations/env.py it is being driven from code: use this
    # connection and leave the application's logging alone.
    cfg.attributes["pbem_programmatic"] = True
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def _head_revision() -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    """The alembic revision the database is at (None when never migrated)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(url_or_engine: str | Engine) -> None:
    """Run ``alembic upgrade head`` against a URL or an engine."""
    from alembic import command

    if isinstance(url_or_engine, str):
        engine = make_engine(url_or_engine)
        owned = True
    else:
        engine = url_or_engine
        owned = False
    try:
        with _start_up_lock(engine), engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                # Two processes starting at once must not both migrate. (On
                # SQLite, BEGIN IMMEDIATE already serialises them.)
                conn.exec_driver_sql(
                    f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK_KEY})"
                )
            command.upgrade(_alembic_config(conn), "head")
    finally:
        if owned:
            engine.dispose()


def check_writable(engine: Engine) -> None:
    """Raise a StorageFault now if the database cannot take a write (read-only file, folder or mount).

    A read-only SQLite file in WAL mode can still be opened, read and even
    begin a write transaction; only a statement that writes is refused. This
    runs one that changes nothing, so `pbem serve` and the commands say at
    once that the database is read-only instead of failing on the first mail.
    """
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = version_num WHERE 1 = 0"))
    except DBAPIError as exc:
        fault = storage_fault(exc, engine)
        if fault is None:
            raise
        raise fault from exc


def ensure_schema(engine: Engine) -> None:
    """Upgrade to head unless already there (cheap when up to date)."""
    with _start_up_lock(engine):
        if current_revision(engine) != _head_revision():
            upgrade(engine)

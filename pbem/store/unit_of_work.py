"""One transaction spanning the event log, inbox, outbox, snapshots and games."""

from __future__ import annotations

import hashlib

from sqlalchemy import Connection, Engine, text

from pbem.store.events import EventStore
from pbem.store.games import Games, Players
from pbem.store.inbox import Inbox
from pbem.store.observers import Observers
from pbem.store.outbox import Outbox
from pbem.store.snapshots import Snapshots
from pbem.store.writer import Writer, writer_of


def game_lock_key(game_id: str) -> int:
    """A stable signed 64-bit key for ``pg_advisory_xact_lock``: the first
    8 bytes of sha256(game id), big-endian, two's complement."""
    digest = hashlib.sha256(game_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class UnitOfWork:
    """``with UnitOfWork(engine) as uow:`` — commit on normal exit, roll back
    on an exception. On SQLite the transaction starts with BEGIN IMMEDIATE
    (see ``make_engine``), so it holds the write lock from the start, and it
    runs on the engine's one writer connection (pbem/store/writer.py);
    elsewhere on a connection from the pool.

    The transaction is begun, committed and rolled back through the
    dialect's own hooks on the driver's connection (``do_begin``,
    ``do_commit``, ``do_rollback``: what SQLAlchemy's ``Transaction`` calls
    underneath), so a unit of work whose statements all run on the driver's
    cursor (an append, pbem/store/prepared.py) makes no ``Transaction``
    object: on a fast disk that bookkeeping was a tenth of a one-event
    append (docs/performance.md). The first statement run through
    SQLAlchemy begins its own ``Transaction`` as it always does; the dialect
    sees the driver already in one and begins nothing more (SQLite), or had
    nothing to begin (PostgreSQL, whose driver begins by itself), and the
    unit of work then ends that ``Transaction``, which ends the driver's."""

    conn: Connection | None
    # The stores of this transaction: the event log made as it begins, the
    # others on first use (``__getattr__``); a one-event append uses one.
    events: EventStore
    inbox: Inbox
    outbox: Outbox
    snapshots: Snapshots
    games: Games
    players: Players
    observers: Observers

    def __init__(self, engine: Engine):
        self.engine = engine
        self.conn = None
        self._writer: Writer | None = None

    def __enter__(self) -> "UnitOfWork":
        writer = self._writer = writer_of(self.engine)
        if writer is not None:
            conn = self.conn = writer.take(self.engine)
            self._driver = writer.driver
        else:
            conn = self.conn = self.engine.connect()
        try:
            if writer is None:
                self._driver = conn.connection.driver_connection
            conn.dialect.do_begin(self._driver)
        except BaseException:
            self._release(clean=False)
            raise
        # Made now: nearly every unit of work appends or reads the log. On the writer its appends run
        # straight on the driver's connection.
        self.events = EventStore(conn, driver=self._driver if writer is not None else None)
        return self

    def __getattr__(self, name: str):
        store = _STORES.get(name)
        if store is None or self.__dict__.get("conn") is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}"
                                 + (" (outside its with block)" if store is not None else ""))
        made = self.__dict__[name] = store(self.conn)
        return made

    def __exit__(self, exc_type, exc, tb) -> None:
        clean = False
        conn = self.conn
        try:
            transaction = conn.get_transaction()
            if transaction is not None:  # something ran through SQLAlchemy, whose Transaction holds the driver's
                if exc_type is None and transaction.is_active:
                    transaction.commit()
                else:  # also one SQLAlchemy has deactivated: the kept connection must not carry it on
                    transaction.rollback()
            elif exc_type is None:
                conn.dialect.do_commit(self._driver)
            else:
                conn.dialect.do_rollback(self._driver)
            clean = True
        finally:
            self._release(clean)

    def _release(self, clean: bool) -> None:
        if self._writer is not None:
            self._writer.give_back(clean)
        else:
            self.conn.close()

    @property
    def connection(self) -> Connection:
        return self.conn

    def lock_game(self, game_id: str) -> None:
        """Serialise work on one game until this transaction ends.

        PostgreSQL: ``pg_advisory_xact_lock`` on ``game_lock_key(game_id)``.
        SQLite: nothing to do, the transaction already holds the write lock.
        Player rows read before the lock are read again after it.
        """
        if self.conn.dialect.name == "postgresql":
            self.conn.execute(
                text("SELECT pg_advisory_xact_lock(:key)"),
                {"key": game_lock_key(game_id)},
            )
            self.players.forget()


_STORES = {"inbox": Inbox, "outbox": Outbox, "snapshots": Snapshots, "games": Games,
           "players": Players, "observers": Observers}

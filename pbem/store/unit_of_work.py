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


def game_lock_key(game_id: str) -> int:
    """A stable signed 64-bit key for ``pg_advisory_xact_lock``: the first
    8 bytes of sha256(game id), big-endian, two's complement."""
    digest = hashlib.sha256(game_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class UnitOfWork:
    """``with UnitOfWork(engine) as uow:`` — commit on normal exit, roll back
    on an exception. On SQLite the transaction starts with BEGIN IMMEDIATE
    (see ``make_engine``), so it holds the write lock from the start."""

    conn: Connection | None

    def __init__(self, engine: Engine):
        self.engine = engine
        self.conn = None
        self._transaction = None

    def __enter__(self) -> "UnitOfWork":
        self.conn = self.engine.connect()
        try:
            self._transaction = self.conn.begin()
        except BaseException:
            self.conn.close()
            raise
        self.events = EventStore(self.conn)
        self.inbox = Inbox(self.conn)
        self.outbox = Outbox(self.conn)
        self.snapshots = Snapshots(self.conn)
        self.games = Games(self.conn)
        self.players = Players(self.conn)
        self.observers = Observers(self.conn)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if self._transaction.is_active:
                if exc_type is None:
                    self._transaction.commit()
                else:
                    self._transaction.rollback()
        finally:
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

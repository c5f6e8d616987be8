"""Inbound mail, stored raw before the MTA is told "250 OK"."""

from __future__ import annotations

import hashlib
from datetime import datetime

from sqlalchemy import Connection, Row, bindparam, select
from sqlalchemy.exc import IntegrityError

from pbem.store.schema import INBOX_STATUSES, inbox

_FINISHED = ("done", "rejected", "failed")

# What every mail runs, built once: SQLAlchemy then finds each compiled statement by the statement itself
# instead of building it and its cache key on every call (docs/performance.md).
_STORE = inbox.insert()
_GET = select(inbox).where(inbox.c.id == bindparam("id"))
_GET_LOCKED = _GET.with_for_update()
_BY_MESSAGE_ID = select(inbox).where(inbox.c.message_id == bindparam("message_id"))
_ID_FOR = select(inbox.c.id).where(inbox.c.message_id == bindparam("message_id"))
_WAITING_BEFORE = (
    select(inbox.c.id)
    .where(inbox.c.status == "received")
    .where(inbox.c.id < bindparam("before"))
    .where(inbox.c.envelope_from == bindparam("envelope_from"))
    .order_by(inbox.c.id)
)
#: Marking a message handled (which also counts an attempt), and putting one back in the queue.
_MARK_FINISHED = (
    inbox.update().where(inbox.c.id == bindparam("message")).values(attempts=inbox.c.attempts + 1)
)
_MARK = inbox.update().where(inbox.c.id == bindparam("message"))


def message_key(raw: bytes) -> str:
    """The stand-in Message-ID for a message without one: sha256 of its bytes."""
    return "sha256:" + hashlib.sha256(raw).hexdigest()


class Inbox:
    def __init__(self, conn: Connection):
        self.conn = conn

    def store(
        self,
        raw: bytes,
        message_id: str,
        envelope_from: str,
        envelope_to: list[str],
        now: datetime,
        *,
        looked_up: bool = False,
    ) -> tuple[int, bool]:
        """Keep a message; ``(id, True)`` if new, ``(existing id, False)`` if seen.

        A duplicate Message-ID stores nothing. On PostgreSQL the insert runs in
        a SAVEPOINT so a concurrent duplicate leaves the caller's transaction
        usable. ``looked_up``: the caller found no message with this
        Message-ID in this transaction already (a duplicate is still caught
        by the unique index).
        """
        existing = None if looked_up else self._id_for(message_id)
        if existing is not None:
            return existing, False
        row = {
            "message_id": message_id,
            "received_at": now,
            "envelope_from": envelope_from,
            "envelope_to": list(envelope_to),
            "raw": bytes(raw),
            "status": "received",
            "error": None,
            "game_id": None,
            "processed_at": None,
            "attempts": 0,
        }
        try:
            if self.conn.dialect.name == "postgresql":  # a failed statement there spoils the whole transaction
                with self.conn.begin_nested():
                    result = self.conn.execute(_STORE, row)
            else:  # SQLite undoes the failed statement alone (and BEGIN IMMEDIATE leaves no one to race)
                result = self.conn.execute(_STORE, row)
        except IntegrityError:
            existing = self._id_for(message_id)
            if existing is None:
                raise
            return existing, False
        return result.inserted_primary_key[0], True

    def get(self, id: int, *, lock: bool = False) -> Row | None:  # noqa: A002
        """One message; with ``lock``, its row is held until the transaction ends (``FOR UPDATE`` on PostgreSQL).

        Whoever handles a message reads it locked: a second worker taking the
        same message waits for the first to commit, then finds it handled.
        SQLite's ``BEGIN IMMEDIATE`` already serialises the whole transaction.
        """
        query = _GET_LOCKED if lock and self.conn.dialect.name == "postgresql" else _GET
        return self.conn.execute(query, {"id": id}).first()

    def waiting_before(self, envelope_from: str, before: int) -> list[int]:
        """Ids of the messages from ``envelope_from`` stored before message ``before`` and not yet handled, oldest
        first: what must be handled before it, so that one sender's orders are applied in the order he sent them."""
        return list(self.conn.execute(_WAITING_BEFORE, {"before": before, "envelope_from": envelope_from}).scalars())

    def waiting_rows_before(self, envelope_from: str, before: int) -> list[Row]:
        """``waiting_before`` with each message's envelope recipients: ``(id, envelope_to)`` rows, oldest first."""
        query = (
            select(inbox.c.id, inbox.c.envelope_to)
            .where(inbox.c.status == "received")
            .where(inbox.c.id < before)
            .where(inbox.c.envelope_from == envelope_from)
            .order_by(inbox.c.id)
        )
        return list(self.conn.execute(query))

    def note_waiting(self, id: int, reason: str) -> None:  # noqa: A002
        """Record why a message not yet handled waits (`pbem queue` shows it); a message handled meanwhile is left."""
        self.conn.execute(inbox.update().where(inbox.c.id == id).where(inbox.c.status == "received").values(error=reason))

    def by_message_id(self, message_id: str) -> Row | None:
        return self.conn.execute(_BY_MESSAGE_ID, {"message_id": message_id}).first()

    def unprocessed(self, limit: int = 100) -> list[Row]:
        """Messages still in status 'received', oldest first.

        On PostgreSQL the rows are locked ``FOR UPDATE SKIP LOCKED`` so that
        several workers can share the queue; SQLite ignores the clause.
        """
        query = (
            select(inbox)
            .where(inbox.c.status == "received")
            .order_by(inbox.c.id)
            .limit(limit)
        )
        if self.conn.dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        return list(self.conn.execute(query))

    def waiting(self, limit: int = 200) -> list[Row]:
        """Messages that failed or still wait to be handled, oldest first: what `pbem queue` lists."""
        query = select(inbox).where(inbox.c.status.in_(("received", "failed"))).order_by(inbox.c.id).limit(limit)
        return list(self.conn.execute(query))

    def mark(
        self,
        id: int,  # noqa: A002
        status: str,
        *,
        error: str | None = None,
        game_id: str | None = None,
        now: datetime,
    ) -> None:
        """Set a message's status (and error). 'done', 'rejected' and 'failed'
        count an attempt and stamp ``processed_at``; 'received' puts the message
        back in the queue. ``game_id`` is only changed when given."""
        if status not in INBOX_STATUSES:
            raise ValueError(f"unknown inbox status {status!r}; one of {INBOX_STATUSES}")
        values: dict = {"message": id, "status": status, "error": error}
        values["processed_at"] = now if status in _FINISHED else None
        if game_id is not None:
            values["game_id"] = game_id
        result = self.conn.execute(_MARK_FINISHED if status in _FINISHED else _MARK, values)
        if result.rowcount != 1:
            raise KeyError(f"no inbox message with id {id}")

    def _id_for(self, message_id: str) -> int | None:
        return self.conn.execute(_ID_FOR, {"message_id": message_id}).scalar_one_or_none()

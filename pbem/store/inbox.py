"""Inbound mail, stored raw before the MTA is told "250 OK"."""

from __future__ import annotations

import hashlib
from datetime import datetime

from sqlalchemy import Connection, Row, select
from sqlalchemy.exc import IntegrityError

from pbem.store.schema import INBOX_STATUSES, inbox

_FINISHED = ("done", "rejected", "failed")


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
    ) -> tuple[int, bool]:
        """Keep a message; ``(id, True)`` if new, ``(existing id, False)`` if seen.

        A duplicate Message-ID stores nothing. The insert runs in a SAVEPOINT
        so a concurrent duplicate leaves the caller's transaction usable.
        """
        existing = self._id_for(message_id)
        if existing is not None:
            return existing, False
        try:
            with self.conn.begin_nested():
                result = self.conn.execute(
                    inbox.insert().values(
                        message_id=message_id,
                        received_at=now,
                        envelope_from=envelope_from,
                        envelope_to=list(envelope_to),
                        raw=bytes(raw),
                        status="received",
                        error=None,
                        game_id=None,
                        processed_at=None,
                        attempts=0,
                    )
                )
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
        query = select(inbox).where(inbox.c.id == id)
        if lock and self.conn.dialect.name == "postgresql":
            query = query.with_for_update()
        return self.conn.execute(query).first()

    def waiting_before(self, envelope_from: str, before: int) -> list[int]:
        """Ids of the messages from ``envelope_from`` stored before message ``before`` and not yet handled, oldest
        first: what must be handled before it, so that one sender's orders are applied in the order he sent them."""
        query = (
            select(inbox.c.id)
            .where(inbox.c.status == "received")
            .where(inbox.c.id < before)
            .where(inbox.c.envelope_from == envelope_from)
            .order_by(inbox.c.id)
        )
        return list(self.conn.execute(query).scalars())

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
        return self.conn.execute(
            select(inbox).where(inbox.c.message_id == message_id)
        ).first()

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
        values: dict = {"status": status, "error": error}
        if status in _FINISHED:
            values["processed_at"] = now
            values["attempts"] = inbox.c.attempts + 1
        else:
            values["processed_at"] = None
        if game_id is not None:
            values["game_id"] = game_id
        result = self.conn.execute(
            inbox.update().where(inbox.c.id == id).values(**values)
        )
        if result.rowcount != 1:
            raise KeyError(f"no inbox message with id {id}")

    def _id_for(self, message_id: str) -> int | None:
        return self.conn.execute(
            select(inbox.c.id).where(inbox.c.message_id == message_id)
        ).scalar_one_or_none()

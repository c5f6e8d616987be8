"""Outbound mail, written in the same transaction as the events that caused it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import Connection, Row, bindparam, func, null, or_, select
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.exc import IntegrityError

from pbem.store.prepared import Prepared
from pbem.store.schema import outbox

#: How a letter the operator dropped (`pbem queue drop`) is marked in ``last_error``.
DROPPED = "dropped by the operator"


#: A letter is queued for every answer, and the bench bot game queues 2,346: the insert is compiled once per
#: dialect and run on the driver's cursor (pbem/store/prepared.py), each value converted by its column's own
#: type as SQLAlchemy would (UTC timestamps as SQLite's text; PostgreSQL's driver takes them as they are).
_ENQUEUE_COLUMNS = ("message_id", "game_id", "kind", "recipient", "raw", "created_at", "attempts", "next_attempt_at",
                    "sent_at", "last_error")
_ENQUEUE = Prepared(outbox.insert(), _ENQUEUE_COLUMNS, returns=outbox.c.id)
_CONVERTERS: dict[str, dict[str, Callable[[Any], Any]]] = {}


def _converted(dialect: Dialect, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` as the columns' types bind them for ``dialect`` (their bind processors, worked out once)."""
    converters = _CONVERTERS.get(dialect.name)
    if converters is None:
        converters = {}
        for name in _ENQUEUE_COLUMNS:
            convert = outbox.c[name].type.dialect_impl(dialect).bind_processor(dialect)
            if convert is not None:
                converters[name] = convert
        _CONVERTERS[dialect.name] = converters
    return {name: converters[name](value) if name in converters else value for name, value in values.items()}


# A sender claims one letter at a time and marks each (pbem.service.outbound): both per letter, as hot as the
# enqueue, and run the same way.
_CLAIM = Prepared(
    select(outbox.c.id, outbox.c.message_id, outbox.c.game_id, outbox.c.recipient, outbox.c.raw, outbox.c.attempts)
    .where(outbox.c.sent_at.is_(None))
    .where(outbox.c.next_attempt_at <= bindparam("now"))
    .order_by(outbox.c.id)
    .limit(1)
    .with_for_update(skip_locked=True)  # PostgreSQL; SQLite's compiler leaves it out (BEGIN IMMEDIATE serialises)
)
_LEASE = Prepared(outbox.update().where(outbox.c.id == bindparam("letter")).values(next_attempt_at=bindparam("until")))
_SENT = Prepared(
    outbox.update()
    .where(outbox.c.id == bindparam("letter"))
    .values(sent_at=bindparam("at"), attempts=outbox.c.attempts + 1, last_error=null())
)


def _when(dialect: Dialect, value: datetime) -> Any:
    """A time as the outbox's timestamp columns bind it for ``dialect``."""
    return _converted(dialect, {"next_attempt_at": value})["next_attempt_at"]


class Claimed(NamedTuple):
    """A letter a sender took, and the lease it holds on it: ``until``, the value `renew` checks."""

    id: int
    message_id: str
    game_id: str | None
    recipient: str
    raw: bytes
    attempts: int
    until: datetime


class Outbox:
    def __init__(self, conn: Connection):
        self.conn = conn

    def enqueue(
        self,
        *,
        message_id: str,
        recipient: str,
        raw: bytes,
        kind: str,
        game_id: str | None,
        now: datetime,
        send_at: datetime | None = None,
    ) -> int:
        """Queue a fully rendered message for delivery now, or not before ``send_at``; returns its id."""
        values = {
            "message_id": message_id,
            "game_id": game_id,
            "kind": kind,
            "recipient": recipient,
            "raw": bytes(raw),
            "created_at": now,
            "attempts": 0,
            "next_attempt_at": send_at or now,
            "sent_at": None,
            "last_error": None,
        }
        try:
            dialect = self.conn.dialect
            return _ENQUEUE.new_key(dialect)(_ENQUEUE.run(self.conn, _converted(dialect, values)))
        except self.conn.dialect.loaded_dbapi.IntegrityError as exc:  # a Message-ID queued before: as SQLAlchemy says it
            raise IntegrityError("INSERT INTO outbox", {"message_id": message_id}, exc) from exc

    def get(self, id: int) -> Row | None:  # noqa: A002
        return self.conn.execute(select(outbox).where(outbox.c.id == id)).first()

    def by_message_id(self, message_id: str) -> Row | None:
        """The letter sent with this Message-ID (angle brackets optional), if it is ours."""
        key = message_id.strip().strip("<>").strip()
        return self.conn.execute(
            select(outbox).where(outbox.c.message_id.in_([key, f"<{key}>"]))
        ).first()

    def rewrite(self, message_id: str, raw: bytes, kind: str) -> None:
        """Replace an unsent letter's message and kind: parts joining it within the transaction that queued it
        (pbem.service.combined); a letter once sent is never rewritten."""
        self.conn.execute(outbox.update().where(outbox.c.message_id == message_id, outbox.c.sent_at.is_(None))
                          .values(raw=bytes(raw), kind=kind))

    def release(self, message_id: str, now: datetime) -> None:
        """Send an unsent letter held for later (a digest) with the next letters due."""
        self.conn.execute(outbox.update().where(outbox.c.message_id == message_id, outbox.c.sent_at.is_(None))
                          .values(next_attempt_at=now))

    def unsent_of_kind(self, game_id: str, kind: str) -> list[Row]:
        """A game's letters of one kind not sent yet, oldest first (a prompt's update waiting to be sent)."""
        query = (select(outbox).where(outbox.c.game_id == game_id, outbox.c.kind == kind,
                                      outbox.c.sent_at.is_(None), outbox.c.attempts == 0)
                 .order_by(outbox.c.id))
        return list(self.conn.execute(query))

    def drop_unsent(self, message_id: str) -> None:
        """Take back a letter never sent, which a newer one made needless (a prompt's update overtaken)."""
        self.conn.execute(outbox.delete().where(outbox.c.message_id == message_id, outbox.c.sent_at.is_(None),
                                                outbox.c.attempts == 0))

    def next_due(self, now: datetime, within: timedelta) -> datetime | None:
        """When the first unsent letter held past ``now`` falls due, if within ``within`` of it."""
        query = select(func.min(outbox.c.next_attempt_at)).where(
            outbox.c.sent_at.is_(None), outbox.c.next_attempt_at > now, outbox.c.next_attempt_at <= now + within)
        return self.conn.execute(query).scalar_one()

    def latest_to(self, game_id: str, recipient: str, limit: int) -> list[Row]:
        """The newest letters of a game to one address, newest first: what a reply without a
        usable In-Reply-To most likely answers."""
        query = (select(outbox).where(outbox.c.game_id == game_id, outbox.c.recipient == recipient)
                 .order_by(outbox.c.id.desc()).limit(limit))
        return list(self.conn.execute(query))

    def due(self, now: datetime, limit: int = 50) -> list[Row]:
        """Unsent messages whose ``next_attempt_at <= now``, by id.

        On PostgreSQL the rows are locked ``FOR UPDATE SKIP LOCKED`` for the
        rest of the caller's transaction, so parallel senders take disjoint
        batches; SQLite (writers serialised) ignores the clause.
        """
        query = (
            select(outbox)
            .where(outbox.c.sent_at.is_(None))
            .where(outbox.c.next_attempt_at <= now)
            .order_by(outbox.c.id)
            .limit(limit)
        )
        if self.conn.dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        return list(self.conn.execute(query))

    def claim(self, now: datetime, lease: timedelta) -> Claimed | None:
        """Take the first letter due now for one sender, leased until ``now + lease``; None if none is due.

        The lease is what makes several senders (``pbem serve`` workers on one
        PostgreSQL database) deliver each letter once: the row is chosen
        ``FOR UPDATE SKIP LOCKED`` and pushed past ``now`` in the same
        transaction, so no other sender sees it due until the lease runs
        out. The value written, ``now + lease`` (``Claimed.until``), is also
        the holder's token: `renew` and `mark_failed` check it, so a sender
        learns when a letter was taken from it. One letter, not a batch: the
        sender (pbem.service.outbound) renews the lease while the delivery
        lasts, so a sender that dies leaves that one letter, for at most one
        lease, to be taken again (at most one more delivery, which the
        Maildir transport recognises by the letter's Message-ID), and the
        letters after it go to the other senders meanwhile. On SQLite,
        ``BEGIN IMMEDIATE`` serialises the whole claim.
        """
        dialect = self.conn.dialect
        row = _CLAIM.run(self.conn, {"now": _when(dialect, now)}).fetchone()
        if row is None:
            return None
        until = now + lease
        _LEASE.run(self.conn, {"letter": row[0], "until": _when(dialect, until)})
        letter_id, message_id, game_id, recipient, raw, attempts = row
        return Claimed(letter_id, message_id, game_id, recipient, bytes(raw), attempts, until)

    def renew(self, id: int, held_until: datetime, until: datetime) -> bool:  # noqa: A002
        """Extend the lease of a letter still on its way to ``until``; False when its sender no longer holds it.

        ``held_until`` is the lease the sender last wrote (by `claim` or an
        earlier `renew`). Anyone else who wrote the letter since (another
        sender that took it once the lease ran out, a sender that marked it
        sent, the operator's retry or drop) changed or ended that value, and
        then nothing is extended: the caller must stop delivering it, since
        someone else now may. The check and the write are one statement, so
        a claim cannot slip in between (a row lock on PostgreSQL, the write
        lock on SQLite).
        """
        result = self.conn.execute(
            outbox.update()
            .where(outbox.c.id == id)
            .where(outbox.c.sent_at.is_(None))
            .where(outbox.c.next_attempt_at == held_until)
            .values(next_attempt_at=until)
        )
        return result.rowcount == 1

    def mark_sent(self, id: int, now: datetime) -> None:  # noqa: A002
        """Record delivery (counts as an attempt; clears ``last_error``).

        Unconditional, even if the letter's lease was lost meanwhile: it was
        delivered, and saying so ends any other sender's lease on it (its
        `renew` then fails and it stops)."""
        cursor = _SENT.run(self.conn, {"letter": id, "at": _when(self.conn.dialect, now)})
        if cursor.rowcount != 1:
            raise KeyError(f"no outbox message with id {id}")

    def mark_failed(
        self, id: int, error: str, next_attempt_at: datetime, *, held_until: datetime | None = None  # noqa: A002
    ) -> bool:
        """Record a failed attempt and when to try again.

        With ``held_until`` (the lease its sender holds, as for `renew`) only
        while that sender still holds the letter: a sender whose letter was
        taken from it must not push back the next attempt of the sender that
        has it now. Returns whether the failure was recorded.
        """
        values = {"attempts": outbox.c.attempts + 1, "last_error": error, "next_attempt_at": next_attempt_at}
        if held_until is None:
            self._update(id, **values)
            return True
        result = self.conn.execute(
            outbox.update()
            .where(outbox.c.id == id)
            .where(outbox.c.sent_at.is_(None))
            .where(outbox.c.next_attempt_at == held_until)
            .values(**values)
        )
        return result.rowcount == 1

    def pending_count(self) -> int:
        return self.conn.execute(
            select(func.count()).select_from(outbox).where(outbox.c.sent_at.is_(None))
        ).scalar_one()

    def list(self, game_id: str | None = None) -> list[Row]:  # noqa: A003
        """Every message (sent or not), by id; only one game's if given."""
        query = select(outbox).order_by(outbox.c.id)
        if game_id is not None:
            query = query.where(outbox.c.game_id == game_id)
        return [row for row in self.conn.execute(query)]

    def undelivered(self, limit: int = 200) -> list[Row]:
        """Letters not yet delivered and not dropped, oldest first: what `pbem queue` lists."""
        query = (
            select(outbox)
            .where(outbox.c.sent_at.is_(None))
            .where(or_(outbox.c.last_error.is_(None), ~outbox.c.last_error.startswith(DROPPED)))
            .order_by(outbox.c.id)
            .limit(limit)
        )
        return list(self.conn.execute(query))

    def retry_now(self, id: int, now: datetime) -> None:  # noqa: A002
        """Try an undelivered letter again at the next flush (also one the sender gave up on)."""
        self._update(id, next_attempt_at=now)

    def drop(self, id: int, now: datetime) -> None:  # noqa: A002
        """Never deliver this letter: it stays on record, marked as dropped by the operator."""
        self._update(id, last_error=f"{DROPPED} at {now:%Y-%m-%d %H:%M} UTC", next_attempt_at=now.replace(year=9999))

    def _update(self, id: int, **values) -> None:  # noqa: A002
        result = self.conn.execute(
            outbox.update().where(outbox.c.id == id).values(**values)
        )
        if result.rowcount != 1:
            raise KeyError(f"no outbox message with id {id}")

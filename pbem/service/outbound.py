"""Delivering the outbox: each letter once, with retries and backoff.

A letter is marked sent only after the transport accepted it, so a crash
between the two resends it at worst (with the same Message-ID, which mail
clients collapse); an SMTP outage only delays it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import Engine

from pbem.mail.outbound import DeliveryError, Transport
from pbem.mail.tokens import bounce_address
from pbem.store.unit_of_work import UnitOfWork

from . import telemetry
from .bounces import refused_by_relay
from .settings import Settings

#: Waits after the 1st, 2nd, ... failed attempt; the last one repeats.
BACKOFF = (timedelta(minutes=1), timedelta(minutes=5), timedelta(minutes=30), timedelta(hours=2), timedelta(hours=6))
GIVE_UP_AFTER = 20
#: The wait after a failure of this machine's own (the Maildir cannot be written: a full disk, a read-only mount):
#: not the letter's fault, so it neither grows nor counts towards giving up; the letter goes soon after the fix.
LOCAL_RETRY = timedelta(minutes=1)
#: How long a sender holds the letters it took (setting ``outbox_lease``): far longer than a delivery takes (the
#: SMTP client gives up after 30 s without an answer), so no other sender takes a letter still on its way.
LEASE = timedelta(minutes=5)


def _due(db: Engine, now: datetime, limit: int, lease: timedelta) -> list:
    with UnitOfWork(db) as uow:
        return [
            (row.id, row.recipient, bytes(row.raw), row.attempts, row.message_id, row.game_id)
            for row in uow.outbox.claim(now, lease, limit)
        ]


def _mark(
    db: Engine, outbox_id: int, now: datetime, error: str | None, attempts: int, temporary: bool,
    settings: Settings | None = None, local: bool = False,
) -> None:
    with UnitOfWork(db) as uow:
        if error is None:
            uow.outbox.mark_sent(outbox_id, now)
            return
        if local:
            uow.outbox.mark_failed(outbox_id, error, now + LOCAL_RETRY)
        elif not temporary or attempts + 1 >= GIVE_UP_AFTER:
            uow.outbox.mark_failed(outbox_id, f"gave up: {error}", now + timedelta(days=3650))
            if not temporary and settings is not None:  # refused outright: a bounce, as if it had come back by mail
                refused_by_relay(uow, settings, outbox_id, error, now)
        else:
            uow.outbox.mark_failed(outbox_id, error, now + BACKOFF[min(attempts, len(BACKOFF) - 1)])


def envelope_sender(sender: str, outbox_id: int) -> str:
    """The letter's own bounce address (VERP), on the sender's domain and local part."""
    local, _, domain = sender.rpartition("@")
    return bounce_address(outbox_id, domain, local)


async def flush_outbox(
    db: Engine, transport: Transport, sender: str, clock: Callable[[], datetime], limit: int = 50,
    settings: Settings | None = None,
) -> int:
    """Send what is due now; returns how many letters were delivered.

    Each letter goes out with its own envelope sender (`envelope_sender`), so a
    bounce says which letter, and so which player, it is about.
    """
    lease = timedelta(seconds=settings.outbox_lease) if settings is not None else LEASE
    rows = await asyncio.to_thread(_due, db, clock(), limit, lease)
    sent = 0
    for outbox_id, recipient, raw, attempts, message_id, game_id in rows:
        started = time.perf_counter()
        try:
            await transport.deliver(envelope_sender(sender, outbox_id), [recipient], raw)
        except DeliveryError as exc:
            await asyncio.to_thread(_mark, db, outbox_id, clock(), str(exc), attempts, exc.temporary, settings, exc.local)
            outcome = "retry" if exc.local or exc.temporary and attempts + 1 < GIVE_UP_AFTER else "gave-up"
            telemetry.mail_out(outbox_id, message_id, game_id, recipient, outcome, _ms(started), str(exc))
            continue
        except (OSError, asyncio.TimeoutError) as exc:
            await asyncio.to_thread(_mark, db, outbox_id, clock(), f"{type(exc).__name__}: {exc}", attempts, True)
            telemetry.mail_out(outbox_id, message_id, game_id, recipient, "retry", _ms(started), f"{type(exc).__name__}: {exc}")
            continue
        await asyncio.to_thread(_mark, db, outbox_id, clock(), None, attempts, True)
        telemetry.mail_out(outbox_id, message_id, game_id, recipient, "sent", _ms(started))
        sent += 1
    return sent


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


async def flush_all(
    db: Engine, transport: Transport, sender: str, clock: Callable[[], datetime], batch: int = 50,
    settings: Settings | None = None,
) -> int:
    """Send everything due now, batch after batch, until nothing due is left; a letter that fails waits for its
    next attempt, so this ends. Returns how many letters were delivered."""
    sent = 0
    while True:
        with UnitOfWork(db) as uow:
            due = len(uow.outbox.due(clock(), batch))
        if not due:
            return sent
        delivered = await flush_outbox(db, transport, sender, clock, batch, settings)
        sent += delivered
        if delivered < due and delivered == 0:
            with UnitOfWork(db) as uow:  # none went, none were pushed back: the transport refuses them all
                if len(uow.outbox.due(clock(), batch)) >= due:
                    return sent

"""Delivering the outbox: each letter once, with retries and backoff.

A letter is marked sent only after the transport accepted it, so a crash
between the two resends it at worst (with the same Message-ID, which mail
clients collapse); an SMTP outage only delays it.

A sender takes one letter at a time, under a short lease that it renews
while the delivery lasts (`Outbox.claim`, `Outbox.renew`): a sender that is
killed leaves one letter, the one on its way, and only until its lease runs
out (15 s by default), instead of a batch for five minutes; a live sender's
lease never runs out under a slow delivery, because it is renewed every third
of it, and a sender that cannot renew it (the database does not answer)
gives the delivery up before the lease ends rather than deliver beside the
sender that may take the letter next (docs/reliability.md). Marking one
letter and taking the next are one transaction, so delivery costs no more
transactions than when a batch was leased at once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Engine

from pbem.mail.outbound import DeliveryError, Transport
from pbem.mail.tokens import bounce_address
from pbem.store.unit_of_work import UnitOfWork

from . import telemetry
from .bounces import refused_by_relay
from .settings import Settings

log = logging.getLogger("pbem.outbox")

#: Waits after the 1st, 2nd, ... failed attempt; the last one repeats.
BACKOFF = (timedelta(minutes=1), timedelta(minutes=5), timedelta(minutes=30), timedelta(hours=2), timedelta(hours=6))
GIVE_UP_AFTER = 20
#: The wait after a failure of this machine's own (the Maildir cannot be written: a full disk, a read-only mount):
#: not the letter's fault, so it neither grows nor counts towards giving up; the letter goes soon after the fix.
LOCAL_RETRY = timedelta(minutes=1)
#: How long a sender's hold on the letter it delivers lasts unless renewed (setting ``outbox_lease``): how long a
#: letter waits when its sender dies. Short, since a live sender renews it as long as the delivery takes.
LEASE = timedelta(seconds=15)
#: A live sender renews its lease when this share of it has passed since it was last written (every 5 s of 15) ...
RENEW_AFTER = 1 / 3
#: ... tries a renewal that failed (the database did not take it) again after this share (1 s of 15) ...
RENEW_RETRY = 1 / 15
#: ... and gives the delivery up when no renewal got through and only this share is left (3 s of 15): another
#: sender may take the letter when the lease ends, and must not find this one still delivering it. The margin
#: covers the time the giving up takes and a small difference between the senders' clocks.
GIVE_UP_WITH = 1 / 5


@dataclass
class Held:
    """The letter a sender is delivering, and its lease as that sender knows it."""

    id: int
    recipient: str
    raw: bytes
    attempts: int
    message_id: str
    game_id: str | None
    #: The lease last written (by the claim or a renewal): what `Outbox.renew` and `Outbox.mark_failed` check.
    until: datetime
    #: `time.monotonic()` when ``until`` was reckoned, before its transaction began: by this sender's own clock,
    #: which no change of the wall clock moves, the lease lasts at least until ``written`` + the lease.
    written: float
    #: Set when a renewal found the letter taken from this sender (another sender, the operator, marked sent).
    lost: bool = False


@dataclass(frozen=True)
class Outcome:
    """What became of one delivery: ``error`` None when the transport took the letter."""

    held: Held
    error: str | None
    temporary: bool = True
    local: bool = False
    ms: float = 0.0


def lease_of(settings: Settings | None) -> timedelta:
    """The lease a sender holds its letter for (the setting ``outbox_lease``, or `LEASE`)."""
    return timedelta(seconds=settings.outbox_lease) if settings is not None else LEASE


def _settle_and_claim(
    db: Engine, outcome: Outcome | None, now: datetime, written: float, lease: timedelta, claim: bool,
    settings: Settings | None,
) -> tuple[bool, Held | None]:
    """Record the last delivery's outcome and take the next letter due, in one transaction.

    One transaction for both keeps the cost of a letter where it was when a batch was leased at once (one
    transaction to mark each letter), while the sender holds only the letter it is delivering. Returns whether
    the outcome was recorded (a failure is not, once the letter was taken from this sender) and the letter
    taken, if any.
    """
    with UnitOfWork(db) as uow:
        recorded = _record(uow, outcome, now, settings) if outcome is not None else True
        letter = uow.outbox.claim(now, lease) if claim else None
    if letter is None:
        return recorded, None
    return recorded, Held(letter.id, letter.recipient, letter.raw, letter.attempts, letter.message_id,
                          letter.game_id, letter.until, written)


def _record(uow: UnitOfWork, outcome: Outcome, now: datetime, settings: Settings | None) -> bool:
    """Mark the letter sent, or failed with its next attempt (and a bounce when the relay refused it outright)."""
    held = outcome.held
    if outcome.error is None:
        uow.outbox.mark_sent(held.id, now)
        return True
    refused = False
    if outcome.local:
        error, next_attempt = outcome.error, now + LOCAL_RETRY
    elif not outcome.temporary or held.attempts + 1 >= GIVE_UP_AFTER:
        error, next_attempt = f"gave up: {outcome.error}", now + timedelta(days=3650)
        refused = not outcome.temporary
    else:
        error, next_attempt = outcome.error, now + BACKOFF[min(held.attempts, len(BACKOFF) - 1)]
    if not uow.outbox.mark_failed(held.id, error, next_attempt, held_until=held.until):
        return False
    if refused and settings is not None:  # refused outright: a bounce, as if it had come back by mail
        refused_by_relay(uow, settings, held.id, outcome.error, now)
    return True


def _renew(db: Engine, outbox_id: int, held_until: datetime, until: datetime) -> bool:
    with UnitOfWork(db) as uow:
        return uow.outbox.renew(outbox_id, held_until, until)


async def _keep(db: Engine, held: Held, lease: timedelta, clock: Callable[[], datetime], stop: asyncio.Event) -> None:
    """Renew ``held``'s lease every third of it until ``stop``; set ``held.lost`` and end if it was taken away.

    A renewal the database refuses or does not answer is tried again soon; the delivery itself watches the
    lease's end (`_deliver`), so a renewal that hangs does not keep a delivery going past it.
    """
    seconds = lease.total_seconds()
    wait = seconds * RENEW_AFTER - (time.monotonic() - held.written)
    complained = False
    while True:
        try:
            await asyncio.wait_for(stop.wait(), max(wait, 0.0))
            return
        except TimeoutError:
            pass
        now, written = clock(), time.monotonic()
        try:
            kept = await asyncio.to_thread(_renew, db, held.id, held.until, now + lease)
        except Exception as exc:  # noqa: BLE001 (the database: any error of it only means "not renewed yet")
            if not complained:
                log.warning("outbox letter %s: its lease could not be renewed (%s); trying again", held.id, exc)
                complained = True
            wait = seconds * RENEW_RETRY
            continue
        if not kept:
            held.lost = True
            return
        held.until, held.written = now + lease, written
        wait = seconds * RENEW_AFTER


async def _deliver(
    db: Engine, transport: Transport, sender: str, held: Held, lease: timedelta, clock: Callable[[], datetime],
) -> Outcome | None:
    """Deliver one letter while keeping its lease; None when the lease could not be kept and it was given up.

    A delivery still on its way when the first renewal is due gets `_keep` beside it (most take milliseconds
    and need none). The delivery is cancelled, and nothing recorded, when the lease was taken away or when no
    renewal got through and the lease is about to end: then another sender may take the letter, and two
    deliveries at once must not happen. A relay that already took the letter gets it again, as after a kill
    (at most this one letter). A delivery cancelled from outside (the server stops) is cancelled too, and its
    letter goes again when the lease runs out.
    """
    started = time.perf_counter()
    seconds = lease.total_seconds()
    stop = asyncio.Event()
    delivery: asyncio.Task | None = None
    keeper: asyncio.Task | None = None
    try:
        while delivery is None or not delivery.done():
            now = time.monotonic()
            left = held.written + seconds * (1 - GIVE_UP_WITH) - now
            if held.lost or left <= 0:
                reason = "was taken from this sender" if held.lost else "could not be renewed in time"
                log.warning("outbox letter %s: its lease %s; delivery given up, the letter goes again when the "
                            "lease ends", held.id, reason)
                telemetry.mail_out(held.id, held.message_id, held.game_id, held.recipient, "lease-lost",
                                   _ms(started), f"the lease {reason}")
                return None
            if delivery is None:
                delivery = asyncio.create_task(
                    transport.deliver(envelope_sender(sender, held.id), [held.recipient], held.raw))
            renew_in = held.written + seconds * RENEW_AFTER - now
            if keeper is None and renew_in <= 0:
                keeper = asyncio.create_task(_keep(db, held, lease, clock, stop))
            if keeper is None:
                await asyncio.wait({delivery}, timeout=min(left, renew_in))
            else:  # the keeper ends early only when the letter was taken: then the loop gives up at once
                await asyncio.wait({delivery} if keeper.done() else {delivery, keeper}, timeout=left,
                                   return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.set()
        if delivery is None or not delivery.done():  # given up, or cancelled from outside
            if delivery is not None:
                delivery.cancel()
                delivery.add_done_callback(_forget)  # it may have ended in an error just now: nobody reads it
            if keeper is not None:
                keeper.cancel()
    if keeper is not None:
        await keeper  # a renewal on its way finishes first: the outcome is recorded against the lease it wrote
    try:
        delivery.result()
    except DeliveryError as exc:
        return Outcome(held, str(exc), exc.temporary, exc.local, _ms(started))
    except (OSError, TimeoutError) as exc:
        return Outcome(held, f"{type(exc).__name__}: {exc}", True, False, _ms(started))
    return Outcome(held, None, ms=_ms(started))


def envelope_sender(sender: str, outbox_id: int) -> str:
    """The letter's own bounce address (VERP), on the sender's domain and local part."""
    local, _, domain = sender.rpartition("@")
    return bounce_address(outbox_id, domain, local)


async def flush_outbox(
    db: Engine, transport: Transport, sender: str, clock: Callable[[], datetime], limit: int = 50,
    settings: Settings | None = None,
) -> int:
    """Send what is due now, up to ``limit`` letters, one at a time; returns how many were delivered.

    Each letter goes out with its own envelope sender (`envelope_sender`), so a
    bounce says which letter, and so which player, it is about. A letter whose
    lease could not be kept ends the flush (the database is in trouble); the
    next flush goes on.
    """
    lease = lease_of(settings)
    sent = taken = 0
    outcome: Outcome | None = None
    while True:
        now, written = clock(), time.monotonic()
        recorded, held = await asyncio.to_thread(_settle_and_claim, db, outcome, now, written, lease, taken < limit,
                                                 settings)
        if outcome is not None:
            _told(outcome, recorded)
            if outcome.error is None:
                sent += 1
        if held is None:
            return sent
        taken += 1
        outcome = await _deliver(db, transport, sender, held, lease, clock)
        if outcome is None:
            return sent


def _told(outcome: Outcome, recorded: bool) -> None:
    """The telemetry line of one delivery, once its outcome is recorded."""
    held = outcome.held
    if outcome.error is None:
        telemetry.mail_out(held.id, held.message_id, held.game_id, held.recipient, "sent", outcome.ms)
        return
    if not recorded:
        result = "lease-lost"
    elif outcome.local or outcome.temporary and held.attempts + 1 < GIVE_UP_AFTER:
        result = "retry"
    else:
        result = "gave-up"
    telemetry.mail_out(held.id, held.message_id, held.game_id, held.recipient, result, outcome.ms, outcome.error)


def _forget(task: asyncio.Task) -> None:
    """Read a given-up delivery's end, so asyncio does not log an error nobody was meant to read."""
    if not task.cancelled():
        task.exception()


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

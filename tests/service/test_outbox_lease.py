"""The outbox lease under real time and a real SMTP relay, on SQLite and PostgreSQL.

A sender takes one letter at a time and renews its lease while the delivery
lasts (pbem.service.outbound): a delivery slower than the lease is not taken
by another sender; a sender that stops leaves only the letter on its way, for
one lease; a sender that cannot renew, or whose letter was taken from it,
gives the delivery up before anyone else may start it. The leases here are
one to three seconds, so that each test waits a few seconds of real time.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import text

from pbem.mail.outbound import SmtpRelay
from pbem.service.outbound import GIVE_UP_WITH, flush_outbox
from pbem.service.server import utc_now
from pbem.service.settings import Settings
from pbem.store.database import make_engine
from pbem.store.unit_of_work import UnitOfWork


class SlowRelay:
    """An SMTP relay on loopback that keeps each letter as its DATA comes in, then waits before answering.

    ``delay(recipient, copies)`` says how long (``copies``: how many times it had the letter before), and
    ``answer`` what it says then: a sender cancelled in that wait has handed the letter over without knowing."""

    def __init__(self, delay: Callable[[str, int], float], answer: str = "250 OK") -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.delay, self.answer = delay, answer
        self.received: list[tuple[str, datetime]] = []  # (recipient, when its DATA came in)
        self._controller = Controller(self, hostname="127.0.0.1", port=self.port)

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's hook name)
        recipient = envelope.rcpt_tos[0]
        copies = sum(1 for r, _ in self.received if r == recipient)
        self.received.append((recipient, utc_now()))
        await asyncio.sleep(self.delay(recipient, copies))
        return self.answer

    def copies(self, recipient: str) -> int:
        return sum(1 for r, _ in self.received if r == recipient)

    def times(self, recipient: str) -> list[datetime]:
        return [at for r, at in self.received if r == recipient]

    def __enter__(self) -> SlowRelay:
        self._controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._controller.stop()


@pytest.fixture
def outbox_world(world):
    """(engine, settings with a two-second lease) and a function that queues a letter to a recipient."""
    db, settings = world

    def queue(recipient: str) -> int:
        with UnitOfWork(db) as uow:
            return uow.outbox.enqueue(message_id=f"<{recipient}>", recipient=recipient, kind="ack", game_id=None,
                                      raw=f"Message-ID: <{recipient}>\r\nSubject: hi\r\n\r\nhello\r\n".encode(),
                                      now=utc_now())

    return db, replace(settings, outbox_lease=2), queue


def _row(db, outbox_id: int):
    with UnitOfWork(db) as uow:
        return uow.outbox.get(outbox_id)


def _flush(db, relay: SlowRelay, settings: Settings, clock: Callable[[], datetime] = utc_now):
    return flush_outbox(db, SmtpRelay("127.0.0.1", relay.port), settings.sender, clock, settings=settings)


def test_a_delivery_slower_than_the_lease_keeps_it_and_the_letter_goes_once(outbox_world):
    """3 s on the way with a 2 s lease: renewed, so a second sender trying all along never takes it."""
    db, settings, queue = outbox_world
    letter = queue("slow@example.org")
    with SlowRelay(lambda recipient, copies: 3.0) as relay:

        async def both() -> tuple[int, int]:
            first = asyncio.create_task(_flush(db, relay, settings))
            while relay.copies("slow@example.org") == 0:
                await asyncio.sleep(0.01)
            second = 0
            while not first.done():  # another sender, trying all the time the first delivers
                second += await _flush(db, relay, settings)
                await asyncio.sleep(0.05)
            return await first, second

        assert asyncio.run(both()) == (1, 0)
        assert relay.copies("slow@example.org") == 1
    assert _row(db, letter).sent_at is not None


def test_a_failure_after_renewals_is_recorded_against_the_renewed_lease(outbox_world):
    """The refusal of a slow relay lands on the letter with its backoff, though the lease moved on meanwhile."""
    db, settings, queue = outbox_world
    letter = queue("busy@example.org")
    with SlowRelay(lambda recipient, copies: 3.0, answer="451 4.3.0 busy, try later") as relay:
        assert asyncio.run(_flush(db, relay, settings)) == 0
    row = _row(db, letter)
    assert (row.attempts, row.sent_at) == (1, None)
    assert "451" in row.last_error
    assert (row.next_attempt_at - utc_now()).total_seconds() > 50  # the first backoff (a minute), not the lease


def test_a_sender_that_stops_mid_delivery_leaves_one_letter_for_one_lease(outbox_world):
    """The first sender stops (cancelled: as at a kill, its renewals stop) on its first letter: a second sender
    delivers the others at once, and that one when the lease it held runs out, not later."""
    db, settings, queue = outbox_world
    first, *others = [queue(f"p{n}@example.org") for n in range(4)]
    with SlowRelay(lambda recipient, copies: 30.0 if copies == 0 and recipient == "p0@example.org" else 0.0) as relay:

        async def stop_then_take_over() -> datetime:
            dying = asyncio.create_task(_flush(db, relay, settings))
            while relay.copies("p0@example.org") == 0:
                await asyncio.sleep(0.01)
            dying.cancel()
            lease_ends = _row(db, first).next_attempt_at
            assert await _flush(db, relay, settings) == len(others)  # all but the one the first sender held
            deadline = time.monotonic() + 30
            while _row(db, first).sent_at is None and time.monotonic() < deadline:
                await _flush(db, relay, settings)
                await asyncio.sleep(0.05)
            return lease_ends

        lease_ends = asyncio.run(stop_then_take_over())
    again = relay.times("p0@example.org")[1:]  # the relay had it from the sender that stopped: the one extra copy
    assert len(again) == 1  # a kill may cost, and only one
    assert lease_ends <= again[0] < lease_ends + timedelta(seconds=2)  # when the lease ran out: not minutes later
    assert [relay.copies(f"p{n}@example.org") for n in range(1, 4)] == [1, 1, 1]


def _hold_the_letter(db_url: str, outbox_id: int, seconds: float, holding: threading.Event) -> None:
    """Keep anyone from writing the letter's row for ``seconds``: SQLite's write lock, PostgreSQL's row lock."""
    if db_url.startswith("sqlite"):
        with contextlib.closing(sqlite3.connect(db_url.removeprefix("sqlite:///"), isolation_level=None)) as conn:
            conn.execute("BEGIN IMMEDIATE")
            holding.set()
            time.sleep(seconds)
            conn.execute("COMMIT")
        return
    other = make_engine(db_url)
    try:
        with other.begin() as conn:
            conn.execute(text("SELECT id FROM outbox WHERE id = :id FOR UPDATE"), {"id": outbox_id})
            holding.set()
            time.sleep(seconds)
    finally:
        other.dispose()


def test_a_sender_that_cannot_renew_gives_the_delivery_up_before_its_lease_ends(outbox_world, db_url):
    """The database does not take the renewal (its lock held elsewhere for 4 s): the delivery is cancelled with
    a fifth of the 3 s lease still to go, nothing is recorded, and the letter goes once the lease is over."""
    db, settings, queue = outbox_world
    settings = replace(settings, outbox_lease=3)
    letter = queue("stuck@example.org")
    claims: list[datetime] = []

    def clock() -> datetime:
        claims.append(utc_now())
        return claims[-1]

    with SlowRelay(lambda recipient, copies: 10.0 if copies == 0 else 0.0) as relay:

        async def held_up() -> tuple[int, datetime]:
            flushing = asyncio.create_task(_flush(db, relay, settings, clock))
            while relay.copies("stuck@example.org") == 0:
                await asyncio.sleep(0.01)
            holding = threading.Event()
            holder = threading.Thread(target=_hold_the_letter, args=(db_url, letter, 4.0, holding))
            holder.start()
            assert await asyncio.to_thread(holding.wait, 30)
            sent = await flushing
            given_up = utc_now()
            await asyncio.to_thread(holder.join)
            return sent, given_up

        sent, given_up = asyncio.run(held_up())
        lease_ends = claims[0] + timedelta(seconds=settings.outbox_lease)
        assert sent == 0
        assert given_up < lease_ends  # before anyone else could take the letter
        assert given_up > lease_ends - timedelta(seconds=settings.outbox_lease * GIVE_UP_WITH + 0.2)
        row = _row(db, letter)
        assert (row.sent_at, row.attempts, row.last_error) == (None, 0, None)  # nothing recorded
        deadline = time.monotonic() + 30
        while _row(db, letter).sent_at is None and time.monotonic() < deadline:  # it goes when the lease is over
            asyncio.run(_flush(db, relay, settings))
            time.sleep(0.1)
        assert relay.copies("stuck@example.org") == 2


def test_a_letter_dropped_on_its_way_is_given_up_and_stays_dropped(outbox_world):
    """The operator drops a letter on its way: the next renewal finds the lease gone, and the delivery stops."""
    db, settings, queue = outbox_world
    letter = queue("dropped@example.org")
    with SlowRelay(lambda recipient, copies: 4.0) as relay:

        async def drop_on_the_way() -> tuple[int, float]:
            flushing = asyncio.create_task(_flush(db, relay, settings))
            while relay.copies("dropped@example.org") == 0:
                await asyncio.sleep(0.01)
            with UnitOfWork(db) as uow:
                uow.outbox.drop(letter, utc_now())
            dropped = time.monotonic()
            sent = await flushing
            return sent, time.monotonic() - dropped

        sent, took = asyncio.run(drop_on_the_way())
    assert sent == 0 and took < 3.0  # at the next renewal (every third of the 2 s lease), before the relay answers
    row = _row(db, letter)
    assert row.sent_at is None and row.attempts == 0 and row.last_error.startswith("dropped by the operator")

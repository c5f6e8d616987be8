"""Contract suite for inbox, outbox and snapshots (SQLite and PostgreSQL)."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from pbem.store import Inbox, Outbox, Snapshots, UnitOfWork
from pbem.store.inbox import message_key
from pbem.store.schema import outbox as outbox_table

NOW = datetime(2024, 11, 22, 12, 0, tzinfo=timezone.utc)


# -- inbox ---------------------------------------------------------------------------


def test_inbox_stores_raw_bytes_once_per_message_id(db_engine):
    raw = b"From: a@x\r\nMessage-ID: <1@x>\r\n\r\nbuild city in Crete\r\n\xff"
    with db_engine.begin() as conn:
        inbox = Inbox(conn)
        first, is_new = inbox.store(raw, "<1@x>", "a@x", ["game@pbem", "b@pbem"], NOW)
        assert is_new
        again, is_new = inbox.store(b"different", "<1@x>", "z@x", [], NOW)
        assert (again, is_new) == (first, False)
        row = inbox.get(first)
        assert row.raw == raw
        assert row.envelope_to == ["game@pbem", "b@pbem"]
        assert row.status == "received" and row.attempts == 0
        assert row.received_at == NOW
        assert inbox.by_message_id("<1@x>").id == first
        assert inbox.get(first + 1000) is None


def test_inbox_message_key_for_messages_without_message_id():
    key = message_key(b"raw bytes")
    assert key.startswith("sha256:") and len(key) == len("sha256:") + 64
    assert key == message_key(b"raw bytes") != message_key(b"raw bytes!")


def test_inbox_unprocessed_and_mark(db_engine):
    with db_engine.begin() as conn:
        inbox = Inbox(conn)
        ids = [inbox.store(b"m", f"<{i}@x>", "a@x", [], NOW)[0] for i in range(4)]
        assert [r.id for r in inbox.unprocessed()] == ids
        assert [r.id for r in inbox.unprocessed(limit=2)] == ids[:2]
        later = NOW + timedelta(seconds=5)
        inbox.mark(ids[0], "done", game_id="g1", now=later)
        inbox.mark(ids[1], "rejected", error="not a player", now=later)
        inbox.mark(ids[2], "failed", error="Traceback ...", now=later)
        assert [r.id for r in inbox.unprocessed()] == [ids[3]]
        done = inbox.get(ids[0])
        assert (done.status, done.game_id, done.processed_at, done.attempts) == (
            "done", "g1", later, 1,
        )
        assert inbox.get(ids[1]).error == "not a player"
        # A failed message can be put back in the queue; game_id is kept.
        inbox.mark(ids[2], "received", now=later)
        assert [r.id for r in inbox.unprocessed()] == [ids[2], ids[3]]
        assert inbox.get(ids[2]).attempts == 1
        with pytest.raises(ValueError):
            inbox.mark(ids[3], "eaten", now=later)
        with pytest.raises(KeyError):
            inbox.mark(10_000, "done", now=later)


# -- outbox ----------------------------------------------------------------------------


def enqueue(outbox, n, game_id="g", now=NOW):
    return outbox.enqueue(
        message_id=f"<out{n}@pbem>", recipient=f"p{n}@x", raw=f"mail {n}".encode(),
        kind="ack", game_id=game_id, now=now,
    )


def test_outbox_due_mark_sent_and_failed(db_engine):
    with db_engine.begin() as conn:
        outbox = Outbox(conn)
        a, b, c = (enqueue(outbox, n) for n in range(3))
        d = enqueue(outbox, 3, game_id=None, now=NOW + timedelta(minutes=1))
        assert outbox.pending_count() == 4
        assert [r.id for r in outbox.due(NOW)] == [a, b, c]
        assert [r.id for r in outbox.due(NOW, limit=2)] == [a, b]
        assert [r.id for r in outbox.due(NOW + timedelta(minutes=1))] == [a, b, c, d]

        outbox.mark_sent(a, NOW + timedelta(seconds=1))
        retry_at = NOW + timedelta(minutes=5)
        outbox.mark_failed(b, "421 try later", retry_at)
        assert [r.id for r in outbox.due(NOW + timedelta(minutes=1))] == [c, d]
        assert [r.id for r in outbox.due(retry_at)] == [b, c, d]
        assert outbox.pending_count() == 3

        sent = outbox.get(a)
        assert sent.sent_at == NOW + timedelta(seconds=1) and sent.attempts == 1
        failed = outbox.get(b)
        assert (failed.attempts, failed.last_error, failed.next_attempt_at) == (
            1, "421 try later", retry_at,
        )
        outbox.mark_failed(b, "timeout", retry_at + timedelta(minutes=10))
        assert outbox.get(b).attempts == 2
        outbox.mark_sent(b, retry_at + timedelta(minutes=10))
        assert outbox.get(b).last_error is None

        assert [r.id for r in outbox.list()] == [a, b, c, d]
        assert [r.id for r in outbox.list(game_id="g")] == [a, b, c]
        assert outbox.get(c).raw == b"mail 2"
        with pytest.raises(KeyError):
            outbox.mark_sent(10_000, NOW)


def test_outbox_message_id_is_unique(db_engine):
    from sqlalchemy.exc import IntegrityError

    with pytest.raises(IntegrityError):
        with db_engine.begin() as conn:
            outbox = Outbox(conn)
            enqueue(outbox, 1)
            enqueue(outbox, 1)


def test_due_compares_times_across_time_zones(db_engine):
    """Times are stored in UTC whatever zone the caller used."""
    paris = timezone(timedelta(hours=1))
    with db_engine.begin() as conn:
        outbox = Outbox(conn)
        oid = enqueue(outbox, 1, now=datetime(2024, 11, 22, 13, 0, tzinfo=paris))
        assert outbox.due(datetime(2024, 11, 22, 11, 59, tzinfo=timezone.utc)) == []
        assert [r.id for r in outbox.due(NOW)] == [oid]
        assert outbox.get(oid).created_at == NOW
        assert outbox.get(oid).created_at.tzinfo is not None


def test_a_claimed_letter_is_not_due_to_another_sender_until_its_lease_runs_out(db_engine):
    """The outbox lease: what one sender took, committed, no other sender takes while it delivers."""
    lease = timedelta(seconds=15)
    with db_engine.begin() as conn:
        ids = [enqueue(Outbox(conn), n) for n in range(3)]
    with db_engine.begin() as conn:
        first = Outbox(conn).claim(NOW, lease)
        assert (first.id, first.recipient, first.raw, first.attempts, first.until) == (ids[0], "p0@x", b"mail 0", 0,
                                                                                      NOW + lease)
        assert Outbox(conn).get(ids[0]).next_attempt_at == NOW + lease
    with db_engine.begin() as conn:  # one letter a claim: the next sender takes the next one
        assert Outbox(conn).claim(NOW, lease).id == ids[1]
        assert Outbox(conn).claim(NOW + timedelta(seconds=1), lease).id == ids[2]
        Outbox(conn).mark_sent(ids[0], NOW + timedelta(seconds=2))
    with db_engine.begin() as conn:
        assert Outbox(conn).claim(NOW + timedelta(seconds=14), lease) is None
    with db_engine.begin() as conn:  # the second sender died with ids[1] on its way: taken again once the lease is
        assert Outbox(conn).claim(NOW + lease, lease).id == ids[1]  # over, never the sent one
        assert Outbox(conn).claim(NOW + lease, lease) is None


def test_a_renewed_lease_keeps_the_letter_and_only_its_holder_can_renew_it(db_engine):
    """The lease written is the holder's token: renewing moves it on; a stale token renews nothing."""
    lease = timedelta(seconds=15)
    with db_engine.begin() as conn:
        oid = enqueue(Outbox(conn), 1)
    with db_engine.begin() as conn:
        assert Outbox(conn).claim(NOW, lease).until == NOW + lease
    held = NOW + lease
    with db_engine.begin() as conn:
        assert Outbox(conn).renew(oid, held, NOW + timedelta(seconds=25))
        assert Outbox(conn).get(oid).next_attempt_at == NOW + timedelta(seconds=25)
    with db_engine.begin() as conn:
        # past the first lease, but renewed: not due to another sender
        assert Outbox(conn).claim(NOW + timedelta(seconds=20), lease) is None
        assert not Outbox(conn).renew(oid, held, NOW + timedelta(seconds=40))  # the old token is spent
    with db_engine.begin() as conn:  # the holder stopped renewing: another sender takes it once the lease ends
        assert Outbox(conn).claim(NOW + timedelta(seconds=25), lease).id == oid
    with db_engine.begin() as conn:
        assert not Outbox(conn).renew(oid, NOW + timedelta(seconds=25), NOW + timedelta(seconds=45))
        assert Outbox(conn).renew(oid, NOW + timedelta(seconds=40), NOW + timedelta(seconds=45))


def test_a_lease_ends_when_the_letter_is_sent_retried_or_dropped(db_engine):
    lease = timedelta(seconds=15)
    with db_engine.begin() as conn:
        ids = [enqueue(Outbox(conn), n) for n in range(3)]
    with db_engine.begin() as conn:
        assert [Outbox(conn).claim(NOW, lease).id for _ in ids] == ids
        Outbox(conn).mark_sent(ids[0], NOW + timedelta(seconds=1))
        Outbox(conn).retry_now(ids[1], NOW + timedelta(seconds=1))
        Outbox(conn).drop(ids[2], NOW + timedelta(seconds=1))
    with db_engine.begin() as conn:
        assert [Outbox(conn).renew(i, NOW + lease, NOW + timedelta(seconds=20)) for i in ids] == [False] * 3
        assert Outbox(conn).get(ids[0]).next_attempt_at == NOW + lease  # nothing written
        assert Outbox(conn).get(ids[1]).next_attempt_at == NOW + timedelta(seconds=1)


def test_a_failure_is_recorded_only_by_the_sender_that_holds_the_letter(db_engine):
    """A sender whose letter was taken must not push back the next attempt of the sender that has it now."""
    lease = timedelta(seconds=15)
    with db_engine.begin() as conn:
        oid = enqueue(Outbox(conn), 1)
        Outbox(conn).claim(NOW, lease)
    later = NOW + timedelta(minutes=1)
    with db_engine.begin() as conn:
        Outbox(conn).claim(NOW + lease, lease)  # the first sender's lease ran out; a second took the letter
        assert not Outbox(conn).mark_failed(oid, "421 busy", later, held_until=NOW + lease)
        row = Outbox(conn).get(oid)
        assert (row.attempts, row.last_error, row.next_attempt_at) == (0, None, NOW + 2 * lease)
        assert Outbox(conn).mark_failed(oid, "421 busy", later, held_until=NOW + 2 * lease)
        row = Outbox(conn).get(oid)
        assert (row.attempts, row.last_error, row.next_attempt_at) == (1, "421 busy", later)


def test_a_renewal_that_meets_another_senders_claim_renews_nothing(db_engine):
    """The check and the write of a renewal are one statement: a claim that commits while the renewal waits for
    its lock wins, and the renewal sees the letter taken (PostgreSQL: the row lock; SQLite: the write lock)."""
    lease = timedelta(seconds=15)
    with db_engine.begin() as conn:
        oid = enqueue(Outbox(conn), 1)
        Outbox(conn).claim(NOW, lease)
    renewed: list[bool] = []
    with db_engine.begin() as conn:
        assert Outbox(conn).claim(NOW + lease, lease).id == oid  # the lease ran out: taken

        def first_sender_renews() -> None:
            with db_engine.begin() as other:
                renewed.append(Outbox(other).renew(oid, NOW + lease, NOW + lease + timedelta(seconds=5)))

        renewal = threading.Thread(target=first_sender_renews)
        renewal.start()
        renewal.join(0.5)
        assert renewed == []  # it waits for the claim's transaction
    renewal.join(30)
    assert renewed == [False]
    with db_engine.begin() as conn:
        assert Outbox(conn).get(oid).next_attempt_at == NOW + 2 * lease


def test_outbox_workers_take_disjoint_batches_on_postgresql(postgres_url):
    """FOR UPDATE SKIP LOCKED: a second sender skips rows the first holds."""
    from pbem.store import make_engine, upgrade

    engine = make_engine(postgres_url)
    try:
        upgrade(engine)
        with engine.begin() as conn:
            ids = [enqueue(Outbox(conn), n) for n in range(4)]
        with engine.begin() as first, engine.begin() as second:
            batch1 = [r.id for r in Outbox(first).due(NOW, limit=2)]
            batch2 = [r.id for r in Outbox(second).due(NOW, limit=10)]
        assert batch1 == ids[:2]
        assert batch2 == ids[2:]
    finally:
        engine.dispose()


def test_two_senders_claiming_at_once_take_different_letters_on_postgresql(postgres_url):
    """The claim skips a letter another sender's open claim has locked, rather than waiting for it or taking it."""
    from pbem.store import make_engine, upgrade

    engine = make_engine(postgres_url)
    try:
        upgrade(engine)
        with engine.begin() as conn:
            ids = [enqueue(Outbox(conn), n) for n in range(2)]
        lease = timedelta(seconds=15)
        with engine.begin() as first, engine.begin() as second:
            taken = [Outbox(first).claim(NOW, lease).id, Outbox(second).claim(NOW, lease).id]
            assert Outbox(second).claim(NOW, lease) is None
        assert taken == ids
    finally:
        engine.dispose()


def test_game_lock_serialises_work_on_postgresql(postgres_url):
    from pbem.store import make_engine, upgrade

    engine = make_engine(postgres_url)
    try:
        upgrade(engine)
        acquired = threading.Event()

        def other_worker():
            with UnitOfWork(engine) as uow:
                uow.lock_game("g")
                acquired.set()

        with UnitOfWork(engine) as uow:
            uow.lock_game("g")
            thread = threading.Thread(target=other_worker)
            thread.start()
            assert not acquired.wait(0.5)
            with UnitOfWork(engine) as other_game:
                other_game.lock_game("h")  # a different game is not blocked
        thread.join(timeout=30)
        assert acquired.is_set()
    finally:
        engine.dispose()


# -- snapshots ---------------------------------------------------------------------------


def test_snapshots_latest(db_engine):
    with db_engine.begin() as conn:
        snaps = Snapshots(conn)
        assert snaps.latest("g") is None
        snaps.save("g", 10, '{"v":10}', "0.1.0", NOW)
        snaps.save("g", 20, '{"v":20}', "0.1.0", NOW)
        snaps.save("h", 30, '{"v":30}', "0.1.0", NOW)
        assert snaps.latest("g") == (20, '{"v":20}')
        assert snaps.latest("g", at_most=19) == (10, '{"v":10}')
        assert snaps.latest("g", at_most=20) == (20, '{"v":20}')
        assert snaps.latest("g", at_most=9) is None
        snaps.save("g", 20, '{"v":"20b"}', "0.2.0", NOW)  # replaces
        assert snaps.latest("g") == (20, '{"v":"20b"}')
        assert snaps.engine_version("g", 20) == "0.2.0"
        assert snaps.discard_after("g", 10) == 1
        assert snaps.latest("g") == (10, '{"v":10}')


def test_a_queued_letter_is_stored_as_sqlalchemys_own_insert_stores_it(db_engine):
    """The outbox's insert runs on the driver's cursor: each value must reach the database as SQLAlchemy's
    column types would bind it (timestamps converted to UTC, SQLite's text form)."""
    paris = datetime(2024, 11, 22, 13, 0, 0, 123456, tzinfo=timezone(timedelta(hours=1)))
    with db_engine.begin() as conn:
        Outbox(conn).enqueue(message_id="<a@x>", recipient="r@x", raw=b"mail\xff", kind="ack", game_id="g", now=paris)
        conn.execute(outbox_table.insert(), {
            "message_id": "<b@x>", "game_id": "g", "kind": "ack", "recipient": "r@x", "raw": b"mail\xff",
            "created_at": paris, "attempts": 0, "next_attempt_at": paris, "sent_at": None, "last_error": None})
        rows = conn.execute(text("SELECT game_id, kind, recipient, raw, created_at, attempts, next_attempt_at, sent_at, "
                                 "last_error FROM outbox ORDER BY id")).all()
    assert len(rows) == 2 and rows[0] == rows[1]

"""Fair turns for inbound mail (pbem/service/fairness.py) and the flood limit (pbem/service/flood.py).

The queue and the scheduler are driven through their own interfaces with
stand-in work; the flood limit through a real `PostOffice`: SMTP on loopback,
the game's store, the Maildirs, and a restart with messages left stored.
"""

from __future__ import annotations

import asyncio
import smtplib
import threading
import time
from dataclasses import replace
from email.message import EmailMessage

import pytest
from sqlalchemy import select

from pbem.service.fairness import (
    BURST,
    BURST_SECONDS,
    SET_ASIDE_BATCH,
    FairQueue,
    FairScheduler,
    Gate,
    Job,
    sender_key,
)
from pbem.service.flood import SET_ASIDE, TITLE, Admissions
from pbem.service.games import NewPlayer, create_game
from pbem.service.server import PostOffice, utc_now
from pbem.store.schema import inbox
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import letters, topic

# -- the queue ------------------------------------------------------------------------------------------------


def test_a_quiet_senders_message_is_taken_next_whatever_a_flood_has_queued():
    queue = FairQueue()
    for i in range(1000):
        queue.put(Job("flood@x", i, urgent=False))
    flood = queue.take()
    assert [j.item for j in flood] == [0]
    queue.put(Job("ann@x", 5000, urgent=True))
    queue.done(flood)
    assert [j.item for j in queue.take()] == [5000]  # not the flood's 1, 2, ...
    assert [j.item for j in queue.take()] == [1]


def test_senders_take_turns_one_message_each_and_in_the_order_each_sent():
    queue = FairQueue()
    for i in range(3):
        for who in ("a", "b", "c"):
            queue.put(Job(who, i, urgent=True))
    taken = []
    while jobs := queue.take():
        taken.append((jobs[0].key, jobs[0].item))
        queue.done(jobs)
    assert taken == [(w, i) for i in range(3) for w in ("a", "b", "c")]


def test_a_sender_is_never_served_twice_at_once_and_bulk_waits_for_urgent_mail():
    queue = FairQueue()
    queue.put(Job("flood", 1, urgent=False))
    queue.put(Job("flood", 2, urgent=False))
    first = queue.take()
    assert queue.take() == []  # its next one waits until the first is done
    queue.put(Job("other-flood", 3, urgent=False))
    assert queue.take(max_bulk=1) == []  # one bulk job in hand already: a worker stays free for urgent mail
    queue.put(Job("ann", 4, urgent=True))
    assert [j.item for j in queue.take(max_bulk=1)] == [4]
    queue.done(first)
    assert [j.item for j in queue.take(max_bulk=1)] == [3]  # the other flood's turn comes before flood's second
    assert not queue.empty()


def test_a_run_of_set_aside_messages_is_taken_at_once():
    queue = FairQueue()
    queue.put(Job("x", 1, urgent=False))
    for i in range(2, 300):
        queue.put(Job("x", i, urgent=False, set_aside=True))
    assert [j.item for j in queue.take()] == [1]
    queue.done([Job("x", 1, urgent=False)])
    batch = queue.take()
    assert [j.item for j in batch] == list(range(2, 2 + SET_ASIDE_BATCH))  # in one transaction
    assert queue.waiting() == 299 - 1 - SET_ASIDE_BATCH


def test_sender_keys_are_the_envelope_sender_lower_cased():
    assert sender_key("<Ann@Example.ORG>") == "ann@example.org"
    assert sender_key("<>") == sender_key("") == "<>"


# -- the scheduler ----------------------------------------------------------------------------------------------


def test_the_scheduler_answers_quiet_senders_next_while_a_flood_is_handled():
    handled: list[tuple[str, int]] = []
    in_hand: dict[str, int] = {}
    most_at_once = {"bulk": 0}

    async def handle(jobs: list[Job]) -> None:
        key = jobs[0].key
        in_hand[key] = in_hand.get(key, 0) + 1
        assert in_hand[key] == 1, f"{key} served twice at once"
        most_at_once["bulk"] = max(most_at_once["bulk"], sum(1 for k, n in in_hand.items() if n and k.startswith("flood")))
        await asyncio.sleep(0.002)
        handled.append((key, jobs[0].item))
        in_hand[key] -= 1

    async def scenario():
        scheduler = FairScheduler(handle, workers=3, bulk_workers=1)
        scheduler.start()
        for i in range(300):
            scheduler.submit(Job("flood-a", i, urgent=False))
            scheduler.submit(Job("flood-b", i, urgent=False))
        await asyncio.sleep(0.05)
        waits = []
        for j in range(5):  # a quiet player writes now and then, from another thread as the SMTP server does
            before = len(handled)
            worker = threading.Thread(target=scheduler.submit, args=(Job("ann", j, urgent=True),))
            worker.start()
            worker.join()
            while ("ann", j) not in handled:
                await asyncio.sleep(0.001)
            waits.append(handled.index(("ann", j)) - before)
            await asyncio.sleep(0.02)
        await scheduler.idle()
        await scheduler.stop()
        return waits

    waits = asyncio.run(scenario())
    assert max(waits) <= 1  # at most the one flood job already in hand went before it
    assert most_at_once["bulk"] == 1
    assert len(handled) == 605
    for key in ("flood-a", "flood-b", "ann"):
        mine = [i for k, i in handled if k == key]
        assert mine == sorted(mine)  # each sender's in the order it sent them


def test_idle_waits_for_every_job_and_stop_leaves_the_waiting_ones():
    done: list[int] = []

    async def handle(jobs: list[Job]) -> None:
        await asyncio.sleep(0.001)
        done.append(jobs[0].item)

    async def scenario():
        scheduler = FairScheduler(handle)
        scheduler.start()
        for i in range(20):
            scheduler.submit(Job("x", i, urgent=True))
        await scheduler.idle()
        assert done == list(range(20)) and scheduler.queue.empty()
        for i in range(20, 40):
            scheduler.submit(Job("x", i, urgent=True))
        await asyncio.sleep(0.005)
        await scheduler.stop()
        return scheduler.queue.waiting()

    left = asyncio.run(scenario())
    assert left > 0 and left + len(done) == 40  # what stop left is still stored: the next start takes it up


def test_a_scheduler_needs_a_worker_kept_free_of_bulk_work():
    with pytest.raises(ValueError):
        FairScheduler(lambda jobs: None, workers=1)
    with pytest.raises(ValueError):
        FairScheduler(lambda jobs: None, workers=2, bulk_workers=2)


def test_bulk_work_waits_at_the_gate_while_urgent_work_is_in_hand_but_not_for_ever():
    async def scenario():
        gate = Gate(patience=0.2)
        assert await gate.let_urgent_pass()
        gate.hold()  # urgent work begins, in another thread as the SMTP server's
        started = time.monotonic()
        assert not await gate.let_urgent_pass()  # patience runs out: bulk goes on
        assert time.monotonic() - started >= 0.19
        gate.hold()
        threading.Timer(0.05, gate.release).start()
        threading.Timer(0.08, gate.release).start()
        gate.patience = 5
        started = time.monotonic()
        assert await gate.let_urgent_pass()  # both urgent works done: clear
        assert 0.07 <= time.monotonic() - started < 2
        gate.release()
        assert gate.held == 0

    asyncio.run(scenario())


# -- admissions ------------------------------------------------------------------------------------------------


def test_past_the_flood_limit_mail_is_set_aside_and_the_sender_told_once_per_flood():
    admissions = Admissions(limit=5, window=60)
    got = [admissions.admit("x", t) for t in range(8)]
    assert [a.set_aside for a in got] == [False] * 5 + [True] * 3
    assert [a.opens for a in got] == [False] * 5 + [True, False, False]
    assert admissions.admit("y", 8).set_aside is False  # another sender is not touched
    assert admissions.admit("x", 30).set_aside  # the ones set aside count: a loop stays set aside
    assert not admissions.admit("x", 100).set_aside  # fewer than 5 in the minute before: read again
    assert [admissions.admit("x", 100 + t).set_aside for t in range(1, 6)] == [False] * 4 + [True]
    assert admissions.decide("x", 106).opens is False


def test_the_null_sender_is_never_set_aside_and_a_limit_of_zero_is_off():
    admissions = Admissions(limit=3, window=60)
    assert not any(admissions.admit("<>", 0).set_aside for _ in range(50))
    off = Admissions(limit=0, window=60)
    assert not any(off.admit("x", 0).set_aside for _ in range(50))


def test_mail_is_urgent_until_its_sender_sends_in_bulk():
    admissions = Admissions(limit=0, window=60)
    urgent = [admissions.admit("x", i * 0.01).urgent for i in range(BURST + 2)]
    assert urgent == [True] * BURST + [False, False]
    assert admissions.decide("x", BURST_SECONDS + 1).urgent  # it slowed down


# -- the flood limit through a real server -------------------------------------------------------------------

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]


def _press(i: int, to: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = "cy@example.com"
    message["To"] = to
    message["Subject"] = "press"
    message["Message-ID"] = f"<loop-{i}@example.com>"
    message.set_content(f"PRESS TO ALL: loop {i}\n")
    return message


def _send_all(port: int, to: str, numbers: range) -> None:
    with smtplib.SMTP("127.0.0.1", port) as smtp:
        for i in numbers:
            smtp.send_message(_press(i, to), "cy@example.com", [to])


def _statuses(db) -> list[tuple[str, str, str | None]]:
    with UnitOfWork(db) as uow:
        return [tuple(r) for r in uow.connection.execute(
            select(inbox.c.message_id, inbox.c.status, inbox.c.error).order_by(inbox.c.id))]


def test_a_flood_over_the_limit_is_kept_not_read_and_its_sender_told_once_even_across_a_restart(world):
    db, base = world
    settings = replace(base, flood_limit=4, flood_window=600)

    async def scenario():
        office = PostOffice(db, settings, outbox_every=0.05)
        await office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="s1", now=utc_now())
            await office.idle()
            to = str(letters(settings.maildir, "cy@example.com")[0]["Reply-To"])
            await asyncio.to_thread(_send_all, office.port, to, range(6))
            await office.idle()
            office._spawn = lambda job: None  # the process dies after answering 250 to the next ones
            await asyncio.to_thread(_send_all, office.port, to, range(6, 9))
        finally:
            await office.stop()
        restarted = PostOffice(db, settings, outbox_every=0.05)
        await restarted.start()  # takes up the three left stored, as they were decided when they came
        try:
            await restarted.idle()
        finally:
            await restarted.stop()

    asyncio.run(scenario())
    ours = [(m, s, e) for m, s, e in _statuses(db) if m.startswith("loop-")]
    assert [m for m, _, _ in ours] == [f"loop-{i}@example.com" for i in range(9)]  # none lost
    assert [s for _, s, _ in ours] == ["done"] * 4 + ["rejected"] * 5
    assert all(e.startswith(SET_ASIDE) and "4 messages" in e for _, _, e in ours[4:])
    cy = letters(settings.maildir, "cy@example.com")
    answered = {str(m["In-Reply-To"]).strip("<>") for m in cy if m["In-Reply-To"]}
    assert answered & {f"loop-{i}@example.com" for i in range(9)} == {f"loop-{i}@example.com" for i in range(4)}
    told = [m for m in cy if TITLE in topic(m)]
    assert len(told) == 1  # once, though the flood went on after the restart
    assert "send it again" in told[0].get_body(preferencelist=("plain",)).get_content()
    ann = letters(settings.maildir, "ann@example.org")
    assert sum("loop" in m.get_body(preferencelist=("plain",)).get_content() for m in ann) == 4  # the press read


def test_a_stranger_flooding_is_set_aside_without_a_word_and_others_still_answered(world):
    db, base = world
    settings = replace(base, flood_limit=3, flood_window=600)

    def stranger(port: int) -> None:
        with smtplib.SMTP("127.0.0.1", port) as smtp:
            for i in range(10):
                smtp.sendmail("spam@else.example", ["pbem+g1@" + settings.domain],
                              f"From: spam@else.example\r\nMessage-ID: <spam-{i}@else.example>\r\n\r\nHELP\r\n".encode())

    async def scenario():
        office = PostOffice(db, settings, outbox_every=0.05)
        await office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="s1", now=utc_now())
            await office.idle()
            await asyncio.to_thread(stranger, office.port)
            await office.idle()
        finally:
            await office.stop()

    asyncio.run(scenario())
    spam = [s for m, s, e in _statuses(db) if m.startswith("spam-")]
    assert len(spam) == 10 and spam.count("rejected") == 10  # three read (and refused: unknown), seven set aside
    assert sum(1 for m, s, e in _statuses(db) if m.startswith("spam-") and (e or "").startswith(SET_ASIDE)) == 7
    assert not (settings.maildir / "spam@else.example").exists()


def test_a_flood_forged_in_a_players_name_never_sets_aside_his_own_replies(world):
    """Anyone can give a player's address as envelope sender. A forger floods the game in Ann's name (to the
    game's address, and to a reply address with a made-up token); Ann then replies to her letters from the same
    address. Her replies carry her seat's token: they are hers, read and answered, while the forgery past the
    limit is set aside under the address it gave."""
    db, base = world
    settings = replace(base, flood_limit=3, flood_window=600)
    game_address = f"pbem+g1@{settings.domain}"
    made_up = f"pbem+g1.1.0123456789abcdef@{settings.domain}"

    def forge(port: int) -> None:
        with smtplib.SMTP("127.0.0.1", port) as smtp:
            for i in range(10):
                to = game_address if i % 2 else made_up
                smtp.sendmail("ann@example.org", [to], (f"From: ann@example.org\r\nTo: {to}\r\n"
                                                        f"Message-ID: <forged-{i}@else.example>\r\n\r\nHELP\r\n").encode())

    def reply(port: int, to: str) -> None:
        with smtplib.SMTP("127.0.0.1", port) as smtp:
            for i in range(2):
                message = EmailMessage()
                message["From"] = "ann@example.org"
                message["To"] = to
                message["Subject"] = "press"
                message["Message-ID"] = f"<genuine-{i}@example.org>"
                message.set_content(f"PRESS TO ALL: genuine {i}\n")
                smtp.send_message(message, "ann@example.org", [to])

    async def scenario():
        office = PostOffice(db, settings, outbox_every=0.05)
        await office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="s1", now=utc_now())
            await office.idle()
            ann = str(letters(settings.maildir, "ann@example.org")[0]["Reply-To"])
            await asyncio.to_thread(forge, office.port)
            await asyncio.to_thread(reply, office.port, ann)
            await office.idle()
        finally:
            await office.stop()

    asyncio.run(scenario())
    statuses = _statuses(db)
    assert [(m, s, e) for m, s, e in statuses if m.startswith("genuine-")] == [
        ("genuine-0@example.org", "done", None), ("genuine-1@example.org", "done", None)
    ]
    forged = [(s, e) for m, s, e in statuses if m.startswith("forged-")]
    assert len(forged) == 10
    assert sum(1 for s, e in forged if s == "rejected" and (e or "").startswith(SET_ASIDE)) == 7  # past the three
    ben = letters(settings.maildir, "ben@example.net")
    assert sum(f"genuine {i}" in m.get_body(preferencelist=("plain",)).get_content() for m in ben for i in range(2)) == 2

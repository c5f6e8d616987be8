"""Reminders through the running server: one per step, to the players still asked, answerable by reply."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from sqlalchemy import text

from pbem.rules.engine import pending
from pbem.service.demo import reply_to_prompt
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.reminders import send_reminders
from pbem.service.server import PostOffice
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork, game_lock_key

from .mailclient import latest, send, subjects, text_of

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
T0 = datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)


def reminders(settings, address: str) -> list[str]:
    return [s for s in subjects(settings.maildir, address) if "Reminder" in s]


def asked(db) -> str:
    with UnitOfWork(db) as uow:
        state = load_state(uow, "g1")
    (prompt,) = pending(state).values()
    return state.player(prompt.player_id).name


def test_one_reminder_per_step_to_the_player_asked_and_a_reply_to_it_is_played(world):
    db, settings = world
    clock = [T0]
    email = {p.name: p.email for p in PLAYERS}

    async def tick(at: datetime) -> None:
        clock[0] = at
        await asyncio.to_thread(send_reminders, db, settings, now=at)
        await office.idle()

    async def scenario():
        nonlocal office
        office = PostOffice(db, settings, clock=lambda: clock[0], outbox_every=0.05, deadlines_every=3600)
        await office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="s1", now=T0)
            await office.idle()
            first = asked(db)
            await tick(T0 + timedelta(hours=30))  # 18 hours left: too early
            assert all(reminders(settings, e) == [] for e in email.values())
            await tick(T0 + timedelta(hours=37))  # 11 hours left
            await tick(T0 + timedelta(hours=40))  # the clock passes again: still one
            assert reminders(settings, email[first]) == [
                "[g1] Reminder: your orders are due 2026-11-27 08:00 UTC"
            ]
            assert all(reminders(settings, e) == [] for n, e in email.items() if n != first)
            note = latest(settings.maildir, email[first], "Reminder")
            assert text_of(note).startswith(
                f"{first}: your orders for Setup, Nations and start areas are due 2026-11-27 08:00 UTC, in 11 hours."
            )
            # answering the reminder itself plays the orders
            send(office.port, reply_to_prompt(note, email[first], "NATION Crete\nPLACE Knossos"), email[first],
                 [str(note["Reply-To"])])
            await office.idle()
            second = asked(db)
            assert second != first
            await tick(T0 + timedelta(hours=40 + 37))  # the second player's own deadline draws near
            return first, second
        finally:
            await office.stop()

    office = None
    first, second = asyncio.run(scenario())
    assert len(reminders(settings, email[first])) == 1
    assert len(reminders(settings, email[second])) == 1
    with UnitOfWork(db) as uow:
        assert next(p for p in load_state(uow, "g1").players if p.name == first).nation == "Crete"


def test_reminder_hours_zero_sends_none(world):
    db, settings = world
    create_game(db, settings, "g1", PLAYERS, seed="s1", options={"reminder-hours": "0"}, now=T0)
    assert send_reminders(db, settings, now=T0 + timedelta(hours=47)) == 0
    create_game(db, settings, "g2", PLAYERS, seed="s1", options={"reminder-hours": "2"}, now=T0)
    assert send_reminders(db, settings, now=T0 + timedelta(hours=45)) == 0
    assert send_reminders(db, settings, now=T0 + timedelta(hours=46, minutes=30)) == 1


def _waiting_for_a_game_lock(db) -> int:
    with db.connect() as conn:
        return conn.execute(text(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        )).scalar_one()


def test_two_workers_passing_the_clock_at_once_queue_the_reminder_once(postgres_url, tmp_path):
    """Two `pbem serve` workers on PostgreSQL run their reminder pass at the same moment: each takes the game's
    lock before it looks for the reminder, so the second finds the first's and neither fails.

    A third session holds the game's lock until both passes wait for it (neither can have looked at the outbox
    yet), then lets them go; a pass that does not wait for the lock finishes first and fails the test."""
    settings = replace(Settings(), gather_minutes=0, db_url=postgres_url, maildir=tmp_path / "mail", listen_port=0, board_pictures=False)
    db = make_engine(postgres_url)
    ensure_schema(db)
    try:
        create_game(db, settings, "g1", PLAYERS, seed="s1", now=T0)
        at = T0 + timedelta(hours=37)  # 11 hours before the first deadline: one reminder due
        with db.connect() as blocker, ThreadPoolExecutor(2) as pool:
            holding = blocker.begin()
            blocker.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": game_lock_key("g1")})
            passes = [pool.submit(send_reminders, db, settings, now=at) for _ in range(2)]
            give_up = time.monotonic() + 120
            while _waiting_for_a_game_lock(db) < 2:
                assert not any(p.done() for p in passes), "a reminder pass ran without waiting for the game's lock"
                assert time.monotonic() < give_up, "the reminder passes never both waited for the game's lock"
                time.sleep(0.01)
            holding.rollback()
            queued = sorted(p.result(timeout=120) for p in passes)
        assert queued == [0, 1]
        with UnitOfWork(db) as uow:
            assert [row.recipient for row in uow.outbox.list("g1") if row.kind == "reminder"] == [
                next(p.email for p in PLAYERS if p.name == asked(db))
            ]
    finally:
        db.dispose()

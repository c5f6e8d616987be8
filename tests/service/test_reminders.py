"""Reminders through the running server: one per step, to the players still asked, answerable by reply."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

from pbem.rules.engine import pending
from pbem.service.demo import reply_to_prompt
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.reminders import send_reminders
from pbem.service.server import PostOffice
from pbem.store.unit_of_work import UnitOfWork

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

"""The moderator by mail through the running server: PAUSE, RESUME, EXTEND, ANNOUNCE, each told to the players."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from pbem.service.deadlines import pass_deadlines
from pbem.service.demo import reply_to_prompt
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.server import PostOffice
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import latest, letters, send, subjects, text_of

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
MODERATOR = "mod@example.org"
T0 = datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)


@pytest.fixture
def world(db_url, tmp_path):
    settings = replace(Settings(), db_url=db_url, maildir=tmp_path / "mail", listen_port=0)
    db = make_engine(db_url)
    ensure_schema(db)
    yield db, settings
    db.dispose()


def state_of(db):
    with UnitOfWork(db) as uow:
        return load_state(uow, "g1")


def told(settings, address: str) -> list[str]:
    return [text_of(m) for m in letters(settings.maildir, address) if str(m["Subject"]) == "[g1] From the moderator"]


def test_the_moderator_runs_the_clock_by_mail_and_every_player_is_told_why(world):
    db, settings = world
    clock = [T0]

    async def order(office, text: str, sender: str = MODERATOR):
        welcome = latest(settings.maildir, MODERATOR, "You moderate")
        send(office.port, reply_to_prompt(welcome, sender, text), sender, [str(welcome["Reply-To"])])
        await office.idle()

    async def scenario():
        office = PostOffice(db, settings, clock=lambda: clock[0], outbox_every=0.05, deadlines_every=3600)
        await office.start()
        try:
            await asyncio.to_thread(
                create_game, db, settings, "g1", PLAYERS, seed="s1", moderator_email=MODERATOR, now=T0
            )
            await office.idle()
            welcome = text_of(latest(settings.maildir, MODERATOR, "You moderate"))
            assert "PAUSE <reason>" in welcome and "SECRET " in welcome
            deadline = state_of(db).deadline

            await order(office, "PAUSE Ben is in hospital this week")
            assert state_of(db).deadline == deadline
            # the deadline passes on the clock, but not in a paused game
            assert await asyncio.to_thread(pass_deadlines, db, settings, now=T0 + timedelta(hours=60)) == []

            clock[0] = T0 + timedelta(hours=70)
            await order(office, "RESUME Ben is back")
            resumed = state_of(db).deadline
            assert resumed == "2026-11-30 06:00 UTC"  # a fresh 48 hours from the resumption

            await order(office, "EXTEND 24 the weekend")
            assert state_of(db).deadline == "2026-12-01 06:00 UTC"
            await order(office, "ANNOUNCE Next turn we meet on Saturday\nSTATUS")

            # someone else at the moderator's reply address changes nothing; a player cannot pause
            await order(office, "PAUSE forged", sender="eve@attacker.example")
            ben = latest(settings.maildir, "ben@example.net", "new game")
            send(office.port, reply_to_prompt(ben, "ben@example.net", "PAUSE I want a break"), "ben@example.net",
                 [str(ben["Reply-To"])])
            await office.idle()
        finally:
            await office.stop()

    asyncio.run(scenario())
    for p in PLAYERS:
        notes = told(settings, p.email)
        assert len(notes) == 4, notes
        assert "The moderator paused the game: Ben is in hospital this week." in notes[0]
        assert "The moderator resumed the game: Ben is back." in notes[1]
        assert "extended the deadline by 24 hours, to 2026-12-01 06:00 UTC: the weekend." in notes[2]
        assert "The moderator announces: Next turn we meet on Saturday" in notes[3]
    assert letters(settings.maildir, "eve@attacker.example") == []
    assert "[g1] Orders ignored: sender does not match" in subjects(settings.maildir, MODERATOR)
    assert "only the moderator can pause the game" in text_of(latest(settings.maildir, "ben@example.net", "Orders received"))
    ack = text_of(latest(settings.maildir, MODERATOR, "Orders received"))
    assert "STATUS: Setup, " in ack
    state = state_of(db)
    assert state.filed.get("paused") is None and state.deadline == "2026-12-01 06:00 UTC"

"""The moderator by mail through the running server: PAUSE, RESUME, EXTEND, ANNOUNCE, each told to the players."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

from pbem.rules.engine import pending
from pbem.service.deadlines import pass_deadlines
from pbem.service.demo import reply_to_prompt
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.server import PostOffice
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import latest, letters, send, subjects, text_of

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
MODERATOR = "mod@example.org"
T0 = datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)


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
    assert state.table.get("paused") is None and state.deadline == "2026-12-01 06:00 UTC"


def test_replace_hands_the_seat_to_a_new_player_and_the_old_reply_address_stops_working(world):
    db, settings = world

    async def scenario():
        office = PostOffice(db, settings, clock=lambda: T0, outbox_every=0.05, deadlines_every=3600)
        await office.start()
        try:
            await asyncio.to_thread(
                create_game, db, settings, "g1", PLAYERS, seed="s1", moderator_email=MODERATOR, now=T0
            )
            await office.idle()
            with UnitOfWork(db) as uow:
                state = load_state(uow, "g1")
            (prompt,) = pending(state).values()
            leaving = state.player(prompt.player_id)
            old = next(p.email for p in PLAYERS if p.name == leaving.name)
            old_prompt = latest(settings.maildir, old, "your orders")
            welcome = latest(settings.maildir, MODERATOR, "You moderate")
            order = f"REPLACE {leaving.name} WITH Dora dora@example.com {leaving.name} has moved abroad"
            send(office.port, reply_to_prompt(welcome, MODERATOR, order), MODERATOR, [str(welcome["Reply-To"])])
            await office.idle()
            # the old player's reply address no longer works, even from the new player's address
            forged = reply_to_prompt(old_prompt, "dora@example.com", "NATION Crete")
            send(office.port, forged, "dora@example.com", [str(old_prompt["Reply-To"])])
            await office.idle()
            assert state_of(db).player(prompt.player_id).nation is None
            # the new player answers from her own start letter
            start = latest(settings.maildir, "dora@example.com", "new game")
            send(office.port, reply_to_prompt(start, "dora@example.com", "NATION Crete\nPLACE Knossos"),
                 "dora@example.com", [str(start["Reply-To"])])
            await office.idle()
            return leaving, old, old_prompt, start
        finally:
            await office.stop()

    leaving, old, old_prompt, start = asyncio.run(scenario())
    state = state_of(db)
    dora = state.player(leaving.id)
    assert dora.name == "Dora" and dora.nation == "Crete"
    assert str(start["Reply-To"]) != str(old_prompt["Reply-To"])
    assert "SECRET " in text_of(start)
    for p in PLAYERS:
        if p.email != old:
            assert any(f"from {leaving.name} to Dora: {leaving.name} has moved abroad" in t for t in told(settings, p.email))
    assert any("could not tell who sent them" in s for s in subjects(settings.maildir, "dora@example.com"))
    with UnitOfWork(db) as uow:
        assert uow.players.by_id(leaving.id).email == "dora@example.com"

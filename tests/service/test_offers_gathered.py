"""Issue 31: the trade offers made to a player within a while of each other reach him in one letter.

Three players trade by mail through the running server (its clock held by the test). Africa and Italy
each offer Crete a trade; Crete's trade prompt, brought up to date by each, waits in the outbox for
``gather_minutes`` and goes once, showing both. Africa offers again; Crete writes meanwhile (press
to Africa), and his answer carries the updated prompt at once, so nothing is left to follow it. Italy
finishes trading while an update to him would wait: the update is taken back, never sent.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from pbem.rules.engine import pending
from pbem.service.games import NewPlayer, create_game
from pbem.service.server import PostOffice
from pbem.store.unit_of_work import UnitOfWork

from .hand_set import set_position
from .mailclient import acks, letters, send, text_of, topic
from .test_press_replies import client_reply

PEOPLE = [NewPlayer("Ann", "ann@example.org", "Africa"), NewPlayer("Ben", "ben@example.net", "Italy"),
          NewPlayer("Cy", "cy@example.com", "Crete")]
TRADE = {
    "players": 3,
    "phase": "trade",
    "nations": {
        "Africa": {"hand": ["Salt", "Salt", "Ochre", "Hides"]},
        "Italy": {"hand": ["Grain", "Grain", "Iron", "Oil"]},
        "Crete": {"hand": ["Wine", "Wine", "Bronze", "Spices"]},
    },
}
T0 = datetime(2026, 11, 28, 9, 0, tzinfo=timezone.utc)
GATHER = 15


def _email(name: str) -> str:
    return next(p.email for p in PEOPLE if p.name == name)


def _trade_letters(settings, name: str) -> list:
    return [m for m in letters(settings.maildir, _email(name)) if "7. Trade: your orders" in topic(m)]


def _set_trade_position(db, settings, now) -> None:
    _, at = set_position(db, settings, TRADE, "gathered", now)
    assert set(pending(at)) == {"africa", "italy", "crete"}


def test_offers_to_a_player_wait_to_travel_together_and_his_own_letter_takes_them_at_once(world):
    db, settings = world
    settings = replace(settings, gather_minutes=GATHER)
    clock = [T0]

    async def scenario() -> None:
        office = PostOffice(db, settings, outbox_every=0.05, clock=lambda: clock[0])
        await office.start()

        async def reply(name: str, letter, own: str) -> None:
            send(office.port, client_reply(letter, _email(name), own, "gmail"), _email(name), [str(letter["Reply-To"])])
            await office.idle()

        async def later(minutes: int) -> None:
            clock[0] += timedelta(minutes=minutes)
            await office.idle()

        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PEOPLE, seed="gathered", now=clock[0])
            await office.idle()
            _set_trade_position(db, settings, clock[0])
            await office.idle()
            assert len(_trade_letters(settings, "Cy")) == 1

            await reply("Ann", _trade_letters(settings, "Ann")[-1], "OFFER Crete: Salt 2, Ochre + Hides FOR Wine 2 + 1 more")
            await later(5)
            await reply("Ben", _trade_letters(settings, "Ben")[-1], "OFFER Crete: Grain 2, Iron + Oil FOR Wine, Bronze + 1 more")
            assert len(_trade_letters(settings, "Cy")) == 1  # both offers wait
            await later(GATHER - 6)
            assert len(_trade_letters(settings, "Cy")) == 1  # the first offer's quarter of an hour is not over
            await later(2)
            (gathered,) = _trade_letters(settings, "Cy")[1:]
            text = text_of(gathered)
            assert "Offer 1 to you from Africa" in text and "Offer 2 to you from Italy" in text

            await reply("Ann", _trade_letters(settings, "Ann")[-1], "OFFER Crete: Salt 2 + Ochre FOR Spices, Wine + 1 more")
            before = len(letters(settings.maildir, _email("Cy")))
            await reply("Cy", gathered, "PRESS TO Africa\nLet me think about it.\nEND")
            answer = letters(settings.maildir, _email("Cy"))[before:]
            assert len(answer) == 1
            assert "ACCEPTED FROM THIS MESSAGE" in text_of(answer[0]) and "Offer 3 to you from Africa" in text_of(answer[0])
            await later(GATHER + 1)
            assert len(letters(settings.maildir, _email("Cy"))) == before + 1  # nothing was left to follow it

            # an offer to Ben, who finishes before it would go: his update is taken back, never sent
            await reply("Cy", answer[0], "OFFER Italy: Wine 2, Bronze + Spices FOR Grain, Iron + 1 more")
            with UnitOfWork(db) as uow:
                assert [r.recipient for r in uow.outbox.unsent_of_kind("g1", "update")] == [_email("Ben")]
            asked_ben = len(_trade_letters(settings, "Ben"))
            await reply("Ben", _trade_letters(settings, "Ben")[-1], "FINISH")
            await later(GATHER + 1)
            assert len(_trade_letters(settings, "Ben")) == asked_ben
            with UnitOfWork(db) as uow:
                assert uow.outbox.unsent_of_kind("g1", "update") == []
        finally:
            await office.stop()

    asyncio.run(scenario())
    assert acks(settings.maildir, _email("Cy"))

"""Issue 31: a report to a player asked nothing now waits a while, and the prompt that follows takes it along.

Four players play setup by mail through the running server (its clock held by the test), each replying
to his prompt with its suggested orders. The last placement ends setup: every player is sent its report.
The first mover of turn 1 is asked at once, so his report travels with his prompt, and the last to place
gets it with the answer to his orders. The other two are asked nothing yet: their reports wait
(``gather_minutes``). When the first mover halts, the second's prompt takes his waiting report along, one
letter; the fourth's report, with nothing to follow it within the quarter of an hour, goes alone when its
time is up. Nothing is lost, nothing sent twice.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from pbem.mail.order_text import ORDERS_BEGIN
from pbem.rules.engine import pending
from pbem.service.demo import reply_to_prompt, suggested_orders
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.server import PostOffice
from pbem.store.unit_of_work import UnitOfWork
from pbem.service.waiting import NEWS

from .mailclient import letters, send, text_of

PEOPLE = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com"),
          NewPlayer("Dora", "dora@example.org")]
T0 = datetime(2026, 11, 28, 9, 0, tzinfo=timezone.utc)
GATHER = 15
REPORT = "what happened from Setup"


def _asked(db) -> tuple[str, object]:
    with UnitOfWork(db) as uow:
        state = load_state(uow, "g1")
    (prompt,) = pending(state).values()
    return state.player(prompt.player_id).name, state


def _email(name: str) -> str:
    return next(p.email for p in PEOPLE if p.name == name)


def _prompt_letter(settings, name: str):
    return [m for m in letters(settings.maildir, _email(name)) if ORDERS_BEGIN in text_of(m)][-1]


def test_a_report_waits_for_the_prompt_that_follows_or_for_its_time(world):
    db, settings = world
    settings = replace(settings, gather_minutes=GATHER)
    clock = [T0]

    async def scenario() -> dict:
        office = PostOffice(db, settings, outbox_every=0.05, clock=lambda: clock[0])
        await office.start()

        async def answer(name: str) -> None:
            prompt = _prompt_letter(settings, name)
            orders = suggested_orders(text_of(prompt).replace("\r\n", "\n"))
            send(office.port, reply_to_prompt(prompt, _email(name), orders), _email(name), [str(prompt["Reply-To"])])
            await office.idle()

        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PEOPLE, seed="news-waits", now=clock[0])
            await office.idle()
            last = None
            while True:
                name, state = _asked(db)
                if state.phase != "setup":
                    break
                await answer(name)
                last = name
            first, state = _asked(db)
            others = [p.name for p in PEOPLE if p.name not in (first, last)]
            report_to = {p.name: [m for m in letters(settings.maildir, p.email) if REPORT in text_of(m)] for p in PEOPLE}
            assert len(report_to[first]) == 1 and ORDERS_BEGIN in text_of(report_to[first][0])  # with his prompt
            assert len(report_to[last]) == 1  # with the answer to his orders
            assert all(report_to[n] == [] for n in others), {n: len(report_to[n]) for n in others}
            with UnitOfWork(db) as uow:
                assert sorted(r.recipient for r in uow.outbox.unsent_of_kind("g1", NEWS)) == sorted(
                    _email(n) for n in others)

            await answer(first)  # he halts (or moves): the next mover is asked
            second, _ = _asked(db)
            assert second in others, (first, last, second)
            (joined,) = [m for m in letters(settings.maildir, _email(second)) if REPORT in text_of(m)]
            assert ORDERS_BEGIN in text_of(joined)  # the waiting report went with his prompt, one letter
            (fourth,) = [n for n in others if n != second]
            assert [m for m in letters(settings.maildir, _email(fourth)) if REPORT in text_of(m)] == []
            clock[0] += timedelta(minutes=GATHER - 1)
            await office.idle()
            assert [m for m in letters(settings.maildir, _email(fourth)) if REPORT in text_of(m)] == []
            clock[0] += timedelta(minutes=2)
            await office.idle()
            (alone,) = [m for m in letters(settings.maildir, _email(fourth)) if REPORT in text_of(m)]
            assert ORDERS_BEGIN not in text_of(alone) and str(alone["Subject"]) == "[g1] Turn 1"
            return {p.name: [str(m["Message-ID"]) for m in letters(settings.maildir, p.email)] for p in PEOPLE}
        finally:
            await office.stop()

    ids = asyncio.run(scenario())
    assert all(len(set(box)) == len(box) for box in ids.values())  # nothing sent twice
    with UnitOfWork(db) as uow:
        assert uow.outbox.unsent_of_kind("g1", NEWS) == []

"""Issue 33: seats the server's bots play, in a game run by the real server with one person writing by mail.

Ann (Africa) answers her prompts by replying to them as a mail client does
(her orders chosen by the planner, written by hand in effect); Italy and
Crete are bots from the start (`bot:planner`, `bot:greedy`), answered by the
server itself through the mail's door. Mid-game the moderator hands Ann's
seat to a bot (REPLACE Africa WITH BOT), the game runs on by itself, then
he hands it to Dora, a person again. Throughout: a bot's orders are stored
as mail, recorded with source ``bot:``, acknowledged in the log; no letter
is ever sent to a bot's address; the table is told of each hand-over; the
log verifies (chain, and every draw re-derived from the seed).
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import replace

import pytest
from sqlalchemy import text

from pbem.audit.rederive import rederive
from pbem.mail.tokens import BOT_DOMAIN
from pbem.rules import engine as rules
from pbem.rules import table
from pbem.service.bots import WAIT, bot_orders
from pbem.service.demo import reply_to_prompt
from pbem.service.games import NewPlayer, create_game, parse_player
from pbem.service.projector import load_state, to_event
from pbem.service.server import PostOffice, utc_now
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork
from pbem.store.verify import verify_chain

from .mailclient import letters, send, text_of, topic

ANN = "ann@example.org"
MODERATOR = "mod@example.org"
SEED = "bot-seats"


def _state(db):
    with UnitOfWork(db) as uow:
        return load_state(uow, "g1")


async def _play(office: PostOffice, db, settings, ann: bool, until_turn: int, rng: random.Random) -> None:
    """Ann (while ``ann``) answers her newest prompt when she is asked; the bots answer for themselves."""
    for _ in range(4000):
        await office.idle()
        if await office.answer_for_bots():
            continue
        state = _state(db)
        if state.finished or state.turn >= until_turn:
            return
        asked = [p for p in rules.pending(state).values()]
        mine = next((p for p in asked if state.player(p.player_id).name == "Ann"), None) if ann else None
        if mine is None:
            assert all(table.bot_strategy(state, p.player_id) for p in asked), "a person's seat waits on nobody"
            await asyncio.sleep(0.05)  # a bot waiting for others (trade): the next version brings its answer
            if not asked:
                return
            continue
        text = bot_orders(mine, rng, state, "planner")
        if text == WAIT:
            text = "FINISH"
        prompt = [m for m in letters(settings.maildir, ANN) if "your orders" in topic(m) or "your turn" in text_of(m)]
        letter = prompt[-1] if prompt else letters(settings.maildir, ANN)[-1]
        await asyncio.to_thread(send, office.port, reply_to_prompt(letter, ANN, text), ANN, [str(letter["Reply-To"])])
    raise AssertionError("the game did not move on")


def _moderator(office: PostOffice, settings, text: str) -> None:
    letter = [m for m in letters(settings.maildir, MODERATOR) if m["Reply-To"]][-1]
    send(office.port, reply_to_prompt(letter, MODERATOR, text), MODERATOR, [str(letter["Reply-To"])])


def test_bots_hold_seats_answer_through_the_mail_door_and_a_seat_goes_to_a_bot_and_back(world):
    db, settings = world
    settings = replace(settings, bot_delay=0)
    people = [NewPlayer("Ann", ANN, "Africa"), parse_player("bot:planner:Italy"), parse_player("bot:greedy:Crete")]
    rng = random.Random(SEED)

    async def scenario() -> None:
        office = PostOffice(db, settings, outbox_every=0.05, bots_every=3600)  # the test calls the bots itself
        await office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", people, seed=SEED, moderator_email=MODERATOR,
                                    now=utc_now())
            state = _state(db)
            assert {table.bot_strategy(state, p.id) for p in state.players} == {None, "planner", "greedy"}
            await _play(office, db, settings, ann=True, until_turn=2, rng=rng)
            _moderator(office, settings, "REPLACE Africa WITH BOT planner Ann is travelling for a month")
            await office.idle()
            state = _state(db)
            africa = next(p for p in state.players if p.nation == "Africa")
            assert table.bot_strategy(state, africa.id) == "planner" and africa.name == "Bot for Africa (planner)"
            await _play(office, db, settings, ann=False, until_turn=state.turn + 1, rng=rng)
            _moderator(office, settings, "REPLACE Africa WITH Dora dora@example.org Ann could not come back")
            await office.idle()
            assert table.bot_strategy(_state(db), africa.id) is None
        finally:
            await office.stop()

    asyncio.run(scenario())
    with UnitOfWork(db) as uow:
        recorded = uow.events.read("g1")
        seed = uow.games.get("g1").secret_seed
        sent_to = Counter(row.recipient.split("@")[1] for row in uow.outbox.list("g1"))
    sources = Counter(r.metadata.get("source", "").split(":")[0] for r in recorded)
    assert sources["bot"] > 20, sources  # the bots' orders, recorded as theirs
    assert sources["mail"] >= 4, sources  # Ann's and the moderator's
    assert BOT_DOMAIN not in sent_to, "a letter was written to a bot"
    replaced = [r.payload for r in recorded if r.type == "PlayerReplaced"]
    assert [p.get("bot", "") for p in replaced] == ["planner", "greedy", "planner", ""]
    # Ann hears at her own address that a bot plays her seat now; the moderator is answered each time
    assert any("Africa is now played by Bot for Africa (planner)" in topic(m) for m in letters(settings.maildir, ANN))
    assert any("take over" in topic(m) for m in letters(settings.maildir, "dora@example.org"))
    assert verify_chain(recorded).ok
    result = rederive("g1", [to_event(r) for r in recorded], seed)
    assert result.ok, result


def test_two_workers_make_each_bot_answer_once(db_url, tmp_path):
    """On PostgreSQL several `pbem serve` take turns at the bots: an answer is the same message on each (its
    Message-ID, text and date made from the game's moment), so the inbox keeps one and it is played once."""
    if not db_url.startswith("postgresql"):
        pytest.skip("several workers share one database on PostgreSQL only")
    db = make_engine(db_url)
    ensure_schema(db)
    settings = replace(Settings(), db_url=db_url, maildir=tmp_path / "mail", listen_port=0, board_pictures=False,
                       gather_minutes=0, bot_delay=0)
    bots = [parse_player(f"bot:planner:{n}") for n in ("Africa", "Italy", "Crete")]

    async def scenario() -> int:
        first = PostOffice(db, settings, outbox_every=0.05, bots_every=3600)
        second = PostOffice(db, settings, outbox_every=0.05, bots_every=3600)
        await first.start()
        await second.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", bots, seed=SEED, moderator_email=MODERATOR,
                                    now=utc_now())
            answered = 0
            for _ in range(30):  # both workers see the same seats asked, at the same versions
                made = await asyncio.gather(first.answer_for_bots(), second.answer_for_bots())
                answered += sum(made)
                await first.idle()
                await second.idle()
            return answered
        finally:
            await first.stop()
            await second.stop()

    try:
        offered = asyncio.run(scenario())
        with UnitOfWork(db) as uow:
            recorded = uow.events.read("g1")
            stored = uow.connection.execute(
                text("SELECT message_id FROM inbox WHERE message_id LIKE 'bot.%'")).scalars().all()
        played = {r.metadata.get("source") for r in recorded if r.metadata.get("source", "").startswith("bot:")}
        assert len(stored) == len(set(stored)) == len(played) > 5, (len(stored), len(played))
        assert offered > len(stored), "both workers offered the answers; each was kept and played once"
        assert verify_chain(recorded).ok
    finally:
        db.dispose()

"""Issue 33: a bot answers press to it with a canned reply, and a refused bot answer never holds the step.

Through the running server: Ann writes by mail from her mail client; two
bots hold the other seats and answer through the server's own door.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from email import policy
from email.parser import BytesParser

from sqlalchemy import text

from pbem.rules import engine as rules
from pbem.rules import table
from pbem.service import bot_seats
from pbem.service.demo import reply_to_prompt
from pbem.service.games import NewPlayer, create_game, parse_player
from pbem.service.projector import load_state
from pbem.service.server import PostOffice, utc_now
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import letters, send, topic

ANN = "ann@example.org"
MODERATOR = "mod@example.org"


def _state(db):
    with UnitOfWork(db) as uow:
        return load_state(uow, "g1")


def _people():
    return [NewPlayer("Ann", ANN, "Africa"), parse_player("bot:planner:Italy"), parse_player("bot:greedy:Crete")]


def _ann_writes(office: PostOffice, settings, text: str) -> None:
    letter = [m for m in letters(settings.maildir, ANN) if m["Reply-To"]][-1]
    send(office.port, reply_to_prompt(letter, ANN, text), ANN, [str(letter["Reply-To"])])


def _body(message) -> str:
    part = message.get_body(("plain",)) if message.is_multipart() else message
    return part.get_content()


def test_press_to_a_bot_is_answered_once_to_its_writer_and_press_to_all_is_not(world):
    db, settings = world
    settings = replace(settings, bot_delay=3600)  # the bots hold their orders: only press is answered here

    async def scenario() -> None:
        office = PostOffice(db, settings, outbox_every=0.05, bots_every=3600)
        await office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", _people(), seed="replies",
                                    moderator_email=MODERATOR, now=utc_now())
            await office.idle()
            _ann_writes(office, settings, "PRESS TO Italy: shall we split Sicily? I will stay out of Rome.")
            await office.idle()
            assert await office.answer_for_bots() == 1  # Italy's bot answers Ann; Crete was not written to
            await office.idle()
            assert await office.answer_for_bots() == 0  # once only
            _ann_writes(office, settings, "PRESS TO ALL: good luck everyone")
            await office.idle()
            assert await office.answer_for_bots() == 0  # an announcement is not a question to the bots
        finally:
            await office.stop()

    asyncio.run(scenario())
    canned = bot_seats.PRESS_REPLY.format(strategy="planner")
    press = [m for m in letters(settings.maildir, ANN) if canned in _body(m)]
    assert len(press) == 1, [topic(m) for m in letters(settings.maildir, ANN)]
    assert "Italy" in topic(press[0]) or "Italy" in _body(press[0])  # Ann is told who answered her
    with UnitOfWork(db) as uow:
        recorded = uow.events.read("g1")
        sent_to = {row.recipient for row in uow.outbox.list("g1")}
    replies = [r for r in recorded if r.type == "PressSent" and r.payload.get("reader") is not None]
    assert len(replies) == 1 and replies[0].metadata["source"].startswith("bot:")
    assert replies[0].payload["text"] == canned
    assert not any(a.endswith("bots.invalid") for a in sent_to)


def test_a_refused_bot_answer_is_followed_by_its_prompts_first_choice(world, monkeypatch):
    """A bot whose answer the server refuses answers once more, with a line the prompt lists: the step goes on
    without waiting for the deadline."""
    db, settings = world
    settings = replace(settings, bot_delay=0)
    monkeypatch.setattr(bot_seats, "bot_orders", lambda *args: "FROBNICATE the lot")

    async def scenario() -> None:
        office = PostOffice(db, settings, outbox_every=0.05, bots_every=3600)
        await office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", _people(), seed="refused",
                                    moderator_email=MODERATOR, now=utc_now())
            await office.idle()
            state = _state(db)
            asked = [p for p in rules.pending(state).values() if table.bot_strategy(state, p.player_id)]
            assert asked, "a bot seat is asked at the start"
            before = state.version
            assert await office.answer_for_bots() == len(asked)  # the nonsense: refused, nothing moves
            await office.idle()
            assert _state(db).version == before
            assert await office.answer_for_bots() == len(asked)  # the fallback, one per seat asked
            await office.idle()
            after = _state(db)
            assert after.version > before
            still = [p for p in rules.pending(after).values() if p.player_id in {a.player_id for a in asked}
                     and p.step == asked[0].step]
            assert len(still) < len(asked)
        finally:
            await office.stop()

    asyncio.run(scenario())
    with UnitOfWork(db) as uow:
        stored = uow.connection.execute(text("SELECT message_id, raw FROM inbox WHERE message_id LIKE 'bot.%'")).all()
    chosen = {m: BytesParser(policy=policy.default).parsebytes(bytes(raw))["X-Pbem-Bot"] for m, raw in stored}
    # what made each answer is kept with it: the strategy and seed, or the fallback
    assert any(".again@" in m and c.endswith("; the prompt's first line") for m, c in chosen.items()), chosen
    assert all(c.startswith(("planner; seed=g1:", "greedy; seed=g1:")) for m, c in chosen.items() if ".again@" not in m)


def test_bots_waiting_on_each_other_alone_close_their_steps(world, monkeypatch):
    """Every seat asked is a bot's, and each has nothing to say yet (traders waiting on their own offers):
    rather than hold the table until the deadline, they close their steps."""
    db, settings = world
    settings = replace(settings, bot_delay=0)
    monkeypatch.setattr(bot_seats, "bot_orders", lambda *args: bot_seats.WAIT)
    bots = [parse_player(f"bot:planner:{n}") for n in ("Africa", "Italy", "Crete")]

    async def scenario() -> None:
        office = PostOffice(db, settings, outbox_every=0.05, bots_every=3600)
        await office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", bots, seed="waiting",
                                    moderator_email=MODERATOR, now=utc_now())
            await office.idle()
            before = _state(db).version
            asked = len(rules.pending(_state(db)))
            assert asked and await office.answer_for_bots() == asked  # each closes its step
            await office.idle()
            assert _state(db).version > before
            for _ in range(40):  # and so on, step after step, with no deadline passed
                if not await office.answer_for_bots():
                    break
                await office.idle()
            assert _state(db).phase != "setup"
        finally:
            await office.stop()

    asyncio.run(scenario())
    with UnitOfWork(db) as uow:
        stored = uow.connection.execute(text("SELECT raw FROM inbox WHERE message_id LIKE 'bot.%'")).scalars().all()
    chosen = {BytesParser(policy=policy.default).parsebytes(bytes(raw))["X-Pbem-Bot"] for raw in stored}
    assert chosen == {"planner; every seat asked is a bot's, waiting: it closes its step"}

"""Deadlines per phase kind, and each player's own time zone, through the running server."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

import pytest

from pbem.rules.engine import pending
from pbem.service.deadlines import pass_deadlines
from pbem.service.demo import reply_to_prompt
from pbem.service.games import GameError, NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.server import PostOffice
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import last_ack, latest, letters, send, text_of, topic

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
T0 = datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)


def asked(db) -> str:
    with UnitOfWork(db) as uow:
        state = load_state(uow, "g1")
    (prompt,) = pending(state).values()
    return state.player(prompt.player_id).name


def test_a_phase_kind_has_its_own_deadline_and_a_player_reads_it_in_his_own_time(world):
    db, settings = world
    email = {p.name: p.email for p in PLAYERS}

    async def scenario():
        office = PostOffice(db, settings, clock=lambda: T0, outbox_every=0.05, deadlines_every=3600)
        await office.start()
        try:
            options = {"deadline-hours-setup": "6", "deadline-hours": "72"}
            await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="s1", options=options, now=T0)
            await office.idle()
            first = asked(db)
            prompt = latest(settings.maildir, email[first], "your orders")
            assert "Deadline: 2026-11-25 14:00 UTC" in text_of(prompt)  # six hours: the setup's own
            assert topic(prompt).endswith("due Wed 25 Nov 14:00 UTC")
            # a zone that does not exist is refused; a real one is taken and used at once
            send(office.port, reply_to_prompt(prompt, email[first], "TIMEZONE Mars/Olympus_Mons"), email[first],
                 [str(prompt["Reply-To"])])
            await office.idle()
            send(office.port, reply_to_prompt(prompt, email[first], "TIMEZONE Europe/Berlin"), email[first],
                 [str(prompt["Reply-To"])])
            await office.idle()
            refused, taken = [m for m in letters(settings.maildir, email[first]) if "Orders received" in topic(m)][-2:]
            assert "unknown time zone 'Mars/Olympus_Mons'" in text_of(refused)
            assert "Deadline: 2026-11-25 15:00 Europe/Berlin (2026-11-25 14:00 UTC)" in text_of(taken)
            return first
        finally:
            await office.stop()

    asyncio.run(scenario())


def test_a_deadline_option_for_no_such_phase_is_refused(world):
    db, settings = world
    with pytest.raises(GameError, match="no phase called 'trading'"):
        create_game(db, settings, "g1", PLAYERS, options={"deadline-hours-trading": "72"}, now=T0)
    with pytest.raises(GameError, match="deadline-hours-trade takes a whole number"):
        create_game(db, settings, "g1", PLAYERS, options={"deadline-hours-trade": "soon"}, now=T0)


def test_a_missed_deadline_is_played_by_default_the_player_warned_and_the_moderator_asked_at_the_limit(world):
    db, settings = world
    email = {p.name: p.email for p in PLAYERS}
    clock = [T0]

    async def scenario():
        office = PostOffice(db, settings, clock=lambda: clock[0], outbox_every=0.05, deadlines_every=3600)
        await office.start()
        try:
            await asyncio.to_thread(
                create_game, db, settings, "g1", PLAYERS, seed="s1", options={"missed-limit": "1"},
                moderator_email="mod@example.org", now=T0,
            )
            await office.idle()
            first = asked(db)
            clock[0] = T0 + timedelta(hours=49)
            moved = await asyncio.to_thread(pass_deadlines, db, settings, now=clock[0])
            await office.idle()
            return first, moved
        finally:
            await office.stop()

    first, moved = asyncio.run(scenario())
    assert moved == ["g1"]
    with UnitOfWork(db) as uow:
        state = load_state(uow, "g1")
    assert next(p for p in state.players if p.name == first).nation == "Africa"  # the default: first free nation
    warning = latest(settings.maildir, email[first], "missed a deadline")
    assert "the default was applied: the first nation still free" in text_of(warning)
    assert "That is 1 missed deadline in this game; after 1 the moderator is asked" in text_of(warning)
    assert all(
        "missed a deadline" not in topic(m) for n, e in email.items() if n != first for m in letters(settings.maildir, e)
    )
    ask = latest(settings.maildir, "mod@example.org", "missed")
    assert topic(ask) == f"[g1] {first} has missed 1 deadline"


@pytest.mark.parametrize("policy", ["extend", "defaults"])
def test_an_absence_announced_by_mail_holds_the_deadline_or_not_as_the_game_says(world, policy):
    db, settings = world
    email = {p.name: p.email for p in PLAYERS}

    clock = [T0]

    async def scenario():
        office = PostOffice(db, settings, clock=lambda: clock[0], outbox_every=0.05, deadlines_every=3600)
        await office.start()
        try:
            await asyncio.to_thread(
                create_game, db, settings, "g1", PLAYERS, seed="s1", options={"absence": policy, "absence-days": "3"},
                now=T0,
            )
            await office.idle()
            first = asked(db)
            prompt = latest(settings.maildir, email[first], "your orders")
            send(office.port, reply_to_prompt(prompt, email[first], "ABSENT 2026-11-26 2026-11-30 family visit\nSTATUS"),
                 email[first], [str(prompt["Reply-To"])])
            await office.idle()
            clock[0] = T0 + timedelta(hours=49)
            await asyncio.to_thread(pass_deadlines, db, settings, now=clock[0])
            await office.idle()
            return first
        finally:
            await office.stop()

    first = asyncio.run(scenario())
    with UnitOfWork(db) as uow:
        state = load_state(uow, "g1")
    ack = text_of(last_ack(settings.maildir, email[first]))
    assert f"Away: {first} from 2026-11-26 to 2026-11-30 (family visit)" in ack
    others = [e for n, e in email.items() if n != first]
    told = [text_of(m) for e in others for m in letters(settings.maildir, e)
            if topic(m) in (f"[g1] {first} will be away", "[g1] Deadline extended to Mon 30 Nov 08:00 UTC")]
    assert any(f"{first} will be away from 2026-11-26 to 2026-11-30: family visit." in t for t in told)
    me = next(p for p in state.players if p.name == first)
    if policy == "extend":
        assert me.nation is None and state.deadline == "2026-11-30 08:00 UTC"  # three days' allowance, not four
        assert any(f"extended by 72 hours, to 2026-11-30 08:00 UTC: {first} is away until 2026-11-30" in t for t in told)
        # the player still asked gets his prompt again, due at the extended deadline
        assert topic(latest(settings.maildir, email[first], "your orders")).endswith("due Mon 30 Nov 08:00 UTC")
    else:
        assert me.nation == "Africa"  # the default was played at the deadline

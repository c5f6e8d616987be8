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

from .mailclient import last_ack, latest, letters, send, subjects, text_of, topic

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
MODERATOR = "mod@example.org"
T0 = datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)


def state_of(db):
    with UnitOfWork(db) as uow:
        return load_state(uow, "g1")


def told(settings, address: str, word: str) -> list[str]:
    return [text_of(m) for m in letters(settings.maildir, address) if word in topic(m)]


def short(deadline: str) -> str:
    """A deadline as a subject shows it (UTC): 'Tue 01 Dec 12:00 UTC'."""
    return datetime.strptime(deadline, "%Y-%m-%d %H:%M UTC").strftime("%a %d %b %H:%M UTC")


def test_the_moderator_runs_the_clock_by_mail_and_every_player_is_told_why(world):
    """PAUSE, EXTEND during the pause, RESUME keeping the later deadline, ANNOUNCE: each letter has its own subject,
    names the deadline in force, and the player asked gets his prompt again with it."""
    db, settings = world
    clock = [T0]
    seen: list[tuple[str, str | None]] = []  # (the order, the deadline in force after it)

    async def order(office, text: str, sender: str = MODERATOR):
        welcome = latest(settings.maildir, MODERATOR, "You moderate")
        send(office.port, reply_to_prompt(welcome, sender, text), sender, [str(welcome["Reply-To"])])
        await office.idle()
        seen.append((text, state_of(db).deadline))

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
            assert deadline == "2026-11-27 08:00 UTC"

            await order(office, "PAUSE Ben is in hospital this week")
            assert state_of(db).deadline == deadline
            # the deadline passes on the clock, but not in a paused game
            assert await asyncio.to_thread(pass_deadlines, db, settings, now=T0 + timedelta(hours=60)) == []
            await order(office, "EXTEND 100 Ben needs the time")  # during the pause: players are told the new date
            assert state_of(db).deadline == "2026-12-01 12:00 UTC"

            clock[0] = T0 + timedelta(hours=70)
            await order(office, "RESUME Ben is back")
            # the later of the extended deadline and a fresh 48 hours (2026-11-30 06:00): the extension holds
            assert state_of(db).deadline == "2026-12-01 12:00 UTC"

            await order(office, "EXTEND 24 the weekend")
            assert state_of(db).deadline == "2026-12-02 12:00 UTC"
            await order(office, "ANNOUNCE Next turn we meet on Saturday\nSTATUS")

            await order(office, "PAUSE a second break")
            clock[0] = T0 + timedelta(hours=200)
            await order(office, "RESUME all well")
            # the pause ate the running deadline: a fresh 48 hours from the resumption
            assert state_of(db).deadline == "2026-12-05 16:00 UTC"

            # someone else at the moderator's reply address changes nothing; a player cannot pause
            await order(office, "PAUSE forged", sender="eve@attacker.example")
            ben = latest(settings.maildir, "ben@example.net", "new game")
            send(office.port, reply_to_prompt(ben, "ben@example.net", "PAUSE I want a break"), "ben@example.net",
                 [str(ben["Reply-To"])])
            await office.idle()
        finally:
            await office.stop()

    asyncio.run(scenario())
    due = dict(seen)
    for p in PLAYERS:
        subjects_ = subjects(settings.maildir, p.email)
        assert "[g1] From the moderator" not in subjects_
        paused = told(settings, p.email, "] Game paused")
        assert len(paused) == 2 and "The moderator paused the game: Ben is in hospital this week." in paused[0]
        extended = told(settings, p.email, "] Deadline extended to ")
        assert [s for s in subjects_ if "Deadline extended" in s] == [
            f"[g1] Deadline extended to {short(due['EXTEND 100 Ben needs the time'])}",
            f"[g1] Deadline extended to {short(due['EXTEND 24 the weekend'])}",
        ]
        assert "extended the deadline by 100 hours, to 2026-12-01 12:00 UTC: Ben needs the time." in extended[0]
        assert "The deadline now: 2026-12-01 12:00 UTC." in extended[0]
        assert "The game is still paused" in extended[0] and "still paused" not in extended[1]
        assert "The deadline now: 2026-12-02 12:00 UTC." in extended[1]
        resumed = told(settings, p.email, "] Game resumed")
        assert [s for s in subjects_ if "Game resumed" in s] == [
            f"[g1] Game resumed: deadline {short(due['RESUME Ben is back'])}",
            f"[g1] Game resumed: deadline {short(due['RESUME all well'])}",
        ]
        assert "The moderator resumed the game: Ben is back." in resumed[0]
        assert f"The deadline now: {due['RESUME Ben is back']}." in resumed[0]
        assert f"The deadline now: {due['RESUME all well']}." in resumed[1]
        # one conversation with the game: the [g1] prefix, and References naming the player's first letter of it
        root = str(latest(settings.maildir, p.email, "new game")["Message-ID"])
        for letter in letters(settings.maildir, p.email):
            assert topic(letter).startswith("[g1] ")
            assert letter["Message-ID"] == root or root in str(letter["References"]), letter["Subject"]
        (announced,) = told(settings, p.email, "] Announcement: Next turn we meet on Saturday")
        assert "The moderator announces: Next turn we meet on Saturday" in announced
    # the player asked got his prompt again after each moved deadline, with the deadline in force in it
    asked_id = next(iter(pending(state_of(db)).values())).player_id
    with UnitOfWork(db) as uow:
        asked = uow.players.by_id(asked_id).email
    prompts = [m for m in letters(settings.maildir, asked) if "your orders" in topic(m)]
    moved = [d for text, d in seen if text.split()[0] in ("EXTEND", "RESUME")]
    assert [topic(m).rsplit("due ", 1)[1] for m in prompts] == [short(d) for d in ["2026-11-27 08:00 UTC", *moved]]
    for prompt, deadline in zip(prompts[1:], moved):
        assert deadline in text_of(prompt)
    assert letters(settings.maildir, "eve@attacker.example") == []
    assert "[g1] Orders ignored: sender does not match" in subjects(settings.maildir, MODERATOR)
    assert "only the moderator can pause the game" in text_of(last_ack(settings.maildir, "ben@example.net"))
    assert any("STATUS: Setup, " in ack for ack in told(settings, MODERATOR, "Orders received"))
    state = state_of(db)
    assert state.table.get("paused") is None and state.deadline == "2026-12-05 16:00 UTC"
    assert f"Deadline: {state.deadline}" in text_of(last_ack(settings.maildir, MODERATOR))


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
            # the player who left replies to his old prompt from habit: he is told he no longer plays, nothing applied
            before = state_of(db).version
            habit = reply_to_prompt(old_prompt, old, "NATION Crete\nPLACE Knossos\nPRESS TO ALL I am still here END")
            send(office.port, habit, old, [str(old_prompt["Reply-To"])])
            await office.idle()
            assert state_of(db).version == before
            # a stranger at the same old reply address is not answered: only the address the game told it left the seat
            send(office.port, reply_to_prompt(old_prompt, "eve@attacker.example", "HALT"), "eve@attacker.example",
                 [str(old_prompt["Reply-To"])])
            await office.idle()
            # the new player's letter says whose seat, why, where it stands and what to answer; she replies to the prompt
            start = latest(settings.maildir, "dora@example.com", "You take over")
            prompt_letter = latest(settings.maildir, "dora@example.com", "your orders")
            send(office.port, reply_to_prompt(prompt_letter, "dora@example.com", "NATION Crete\nPLACE Knossos"),
                 "dora@example.com", [str(prompt_letter["Reply-To"])])
            await office.idle()
            return leaving, old, old_prompt, start, prompt_letter, habit
        finally:
            await office.stop()

    leaving, old, old_prompt, start, prompt_letter, habit = asyncio.run(scenario())
    state = state_of(db)
    dora = state.player(leaving.id)
    assert dora.name == "Dora" and dora.nation == "Crete"
    assert str(start["Reply-To"]) != str(old_prompt["Reply-To"])
    assert topic(start) == f"[g1] You take over {leaving.name}'s seat"
    welcome = " ".join(text_of(start).split())
    assert f"Dora: you take over {leaving.name}'s seat in the game of Advanced Civilization \"g1\", from {leaving.name}." in welcome
    assert f"The moderator's reason: {leaving.name} has moved abroad" in welcome
    assert "YOUR POSITION" in welcome and "STATUS: Setup, " in welcome and "Still asked: Dora: " in welcome
    assert "HAND: you hold nothing yet" in welcome and "BOARD:" in welcome
    due = topic(prompt_letter).rsplit("your orders, ", 1)[1]
    assert "Your orders are asked now: " in welcome and "Due: 2026-11-27 08:00 UTC." in welcome
    assert f'The next letter, "your orders, {due}", holds the order block: reply to that letter' in welcome
    assert "SECRET " in welcome
    # the prompt is the letter itself, with its order block, and comes after the start letter
    assert "NATION" in text_of(prompt_letter)
    mine = subjects(settings.maildir, "dora@example.com")
    assert mine.index(topic(start)) < mine.index(topic(prompt_letter))
    # the player who left was answered, in reply to his message, and his mail is kept
    (gone,) = [m for m in letters(settings.maildir, old) if "no longer play" in topic(m)]
    assert topic(gone) == "[g1] You no longer play in g1"
    assert str(gone["In-Reply-To"]) == str(habit["Message-ID"])
    said = " ".join(text_of(gone).split())
    assert "You no longer play your seat in game g1: since 2026-11-25, Dora plays it" in said
    assert "Nothing in your message was applied" in said
    assert letters(settings.maildir, "eve@attacker.example") == []
    assert not any("I am still here" in text_of(m) for p in PLAYERS for m in letters(settings.maildir, p.email))
    with UnitOfWork(db) as uow:
        kept = uow.inbox.by_message_id(str(habit["Message-ID"]).strip("<>"))
        assert kept is not None and b"I am still here" in bytes(kept.raw)
    for p in PLAYERS:
        if p.email != old:
            assert any(f"from {leaving.name} to Dora: {leaving.name} has moved abroad" in t
                       for t in told(settings, p.email, "is now played by Dora"))
    assert any("could not tell who sent them" in s for s in subjects(settings.maildir, "dora@example.com"))
    with UnitOfWork(db) as uow:
        assert uow.players.by_id(leaving.id).email == "dora@example.com"


def test_the_moderators_first_letter_tells_the_seats_what_comes_next_and_every_order_with_an_example(world):
    """A moderator with only a mail client reads everything he may do in his first letter, on a phone."""
    db, settings = world

    async def scenario():
        office = PostOffice(db, settings, clock=lambda: T0, outbox_every=0.05, deadlines_every=3600)
        await office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="s1", moderator_email=MODERATOR, now=T0)
            await office.idle()
            welcome = latest(settings.maildir, MODERATOR, "You moderate")
            # an example line copied from the letter is an order the server takes
            send(office.port, reply_to_prompt(welcome, MODERATOR, "EXTEND 24 the weekend"), MODERATOR,
                 [str(welcome["Reply-To"])])
            await office.idle()
        finally:
            await office.stop()

    asyncio.run(scenario())
    welcome = latest(settings.maildir, MODERATOR, "You moderate")
    assert topic(welcome) == "[g1] You moderate game g1"
    text = text_of(welcome)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 72, [line for line in lines if len(line) > 72]
    state = state_of(db)
    for p in PLAYERS:
        assert f"  {p.name}: nation to choose" in lines
    order = ", ".join(state.player(pid).name for pid in state.place_order)
    assert order and order in " ".join(text.split())
    (asked,) = [state.player(p.player_id).name for p in pending(state).values()]
    assert f"Asked now: {asked}, due 2026-11-27 08:00 UTC." in " ".join(text.split())
    assert "docs/" not in text
    for example in ("PAUSE Ann is ill this week", "RESUME Ann is back", "EXTEND 24 the weekend", "DEADLINE we agreed to go on",
                    "ANNOUNCE Next turn starts on Saturday", "FOR Ann: HALT", "REPLACE Ann WITH Eve eve@example.org Ann moved away",
                    "KICK Ann no answer for two weeks", "UNKICK Ann back from holiday", "APPROVE 4", "DENY 4 a private game",
                    "ROLLBACK BEFORE 12 a wrong order was played", "CONFIRM", "HISTORY turn 3 movement", "EXPLAIN 12",
                    "VERIFY 3f9a1c2b4d5e6f70", "SEED"):
        assert f"    {example}" in lines, example
    assert any(line.startswith("  SECRET ") for line in lines)
    assert state.deadline == "2026-11-28 08:00 UTC"

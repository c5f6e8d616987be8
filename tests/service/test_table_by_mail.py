"""Through the running server by real mail: orders kept for one's turn, KICK, and observers."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from email.message import EmailMessage
from email.utils import make_msgid

from pbem.rules import table
from pbem.rules.engine import pending
from pbem.service.demo import reply_to_prompt, suggested_orders
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.server import PostOffice
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import holding, last_ack, latest, letters, send, subjects, text_of, topic

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
EMAIL = {p.name: p.email for p in PLAYERS}
MODERATOR = "mod@example.org"
T0 = datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)


def state_of(db):
    with UnitOfWork(db) as uow:
        return load_state(uow, "g1")


def told(settings, address: str, subject: str) -> list[str]:
    """The letters to ``address`` whose subject is ``subject``: each moderator action has its own."""
    return [text_of(m) for m in letters(settings.maildir, address) if topic(m) == subject]


def setup_order(db) -> list[str]:
    state = state_of(db)
    return [state.player(pid).name for pid in state.place_order]


class Table:
    """A running server with game g1 (moderated) and helpers to write to it as a mail client does."""

    def __init__(self, db, settings):
        self.db, self.settings = db, settings
        self.office = PostOffice(db, settings, clock=lambda: T0, outbox_every=0.05, deadlines_every=3600)

    async def __aenter__(self) -> "Table":
        await self.office.start()
        await asyncio.to_thread(create_game, self.db, self.settings, "g1", PLAYERS, seed="s1", moderator_email=MODERATOR, now=T0)
        await self.office.idle()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.office.stop()

    async def reply(self, name: str, text: str, word: str = "new game") -> None:
        """``name`` answers the newest letter of his with ``word`` in its subject."""
        address = MODERATOR if name == "moderator" else EMAIL[name]
        letter = latest(self.settings.maildir, address, word)
        send(self.office.port, reply_to_prompt(letter, address, text), address, [str(letter["Reply-To"])])
        await self.office.idle()

    async def fresh(self, sender: str, text: str, name: str = "") -> None:
        """A fresh mail (no reply) to the game's address."""
        message = EmailMessage()
        message["From"] = f"{name} <{sender}>" if name else sender
        message["To"] = f"pbem+g1@{self.settings.domain}"
        message["Subject"] = "watching"
        message["Message-ID"] = make_msgid(domain="example.com")
        message.set_content(text)
        send(self.office.port, message, sender, [f"pbem+g1@{self.settings.domain}"])
        await self.office.idle()


def test_orders_sent_before_ones_turn_are_kept_and_played_when_it_comes(world):
    db, settings = world

    async def scenario():
        async with Table(db, settings) as t:
            first, second, third = setup_order(db)
            await t.reply(third, "NATION Crete\nPLACE Knossos")  # two turns early
            kept = text_of(last_ack(settings.maildir, EMAIL[third]))
            assert "NATION Crete  (kept: played when your turn comes, if still legal)" in kept
            assert "It is not your turn yet" in kept and "rejected" not in kept
            await t.reply(second, "NATION Crete\nPLACE Phaestos")  # one turn early: his Crete will be taken first
            await t.reply(first, "NATION Italy\nPLACE Etruria", "your orders")
            return first, second, third

    first, second, third = asyncio.run(scenario())
    state = state_of(db)
    nations = {p.name: p.nation for p in state.players}
    assert nations[first] == "Italy" and nations[second] == "Crete"
    assert state.area("Phaestos").tokens == {"Crete": 1}
    # the third player's Crete was taken before his turn: refused, and he is prompted as usual
    assert nations[third] is None and [p.player_id for p in pending(state).values()] == [state.player(state.place_order[2]).id]
    played = text_of(latest(settings.maildir, EMAIL[second], "early orders"))
    assert "played: NATION Crete" in played and "played: PLACE Phaestos" in played
    refused = latest(settings.maildir, EMAIL[third], "early orders")
    assert topic(refused) == "[g1] Your early orders: some were refused"
    assert "refused: NATION Crete: Crete is already taken" in text_of(refused) or "refused: NATION Crete" in text_of(refused)
    assert "A prompt follows." in text_of(refused)
    assert any("your orders" in s for s in subjects(settings.maildir, EMAIL[third])[-2:])
    # the second player was never prompted: his kept orders answered his turn
    assert not any("your orders" in s for s in subjects(settings.maildir, EMAIL[second]))
    # what a player kept is his secret until played: the others' reports never show it
    for name in (first, third):
        assert all("NATION Crete; PLACE Phaestos" not in text_of(m) for m in letters(settings.maildir, EMAIL[name]))


def test_the_moderator_kicks_a_player_whose_nation_then_plays_by_defaults_and_unkicks_him(world):
    db, settings = world

    async def scenario():
        async with Table(db, settings) as t:
            first, second, third = setup_order(db)
            await t.reply("moderator", f"KICK {first} has not answered for a week", "You moderate")
            # the acknowledgement names the seat as the order did (no nation chosen yet: its player), never a number
            ack = text_of(last_ack(settings.maildir, "mod@example.org"))
            assert f"\n  KICK {first} has not answered for a week" in ack and "KICK player" not in ack
            state = state_of(db)
            kicked = next(p for p in state.players if p.name == first)
            assert kicked.nation == "Africa" and table.kicked(state) == {kicked.id: "has not answered for a week"}
            assert [p.player_id for p in pending(state).values()] == [state.player(state.place_order[1]).id]
            await t.reply(first, "PLACE Cyrenaica\nSTATUS")
            refused = text_of(last_ack(settings.maildir, EMAIL[first]))
            assert "the moderator took you out of this game (has not answered for a week)" in refused
            assert "Played by its defaults: Africa" in refused  # STATUS still answered
            await t.reply("moderator", f"UNKICK Africa {first} is back", "You moderate")
            assert f"\n  UNKICK Africa {first} is back" in text_of(last_ack(settings.maildir, "mod@example.org"))
            return first

    first = asyncio.run(scenario())
    assert table.kicked(state_of(db)) == {}
    for name in EMAIL:
        # kicked before he chose: the seat, not yet a nation, plays by its defaults; each letter says so in its subject
        (kick,) = told(settings, EMAIL[name], f"[g1] {first}'s seat plays by its defaults")
        assert f"The moderator took {first} out of the game: has not answered for a week. The seat plays" in kick
        (unkick,) = told(settings, EMAIL[name], f"[g1] Africa is played by {first} again")
        assert f"The moderator gave Africa back to {first}: {first} is back." in unkick


def test_someone_asks_to_observe_the_moderator_approves_and_he_gets_the_public_reports_until_unobserve(world):
    db, settings = world

    async def scenario():
        async with Table(db, settings) as t:
            first, second, third = setup_order(db)
            await t.fresh("dora@example.com", "OBSERVE", name="Dora Watcher")
            asked = latest(settings.maildir, MODERATOR, "asks to watch")
            assert "Dora Watcher <dora@example.com> asks to watch the game as observer" in text_of(asked)
            number = table.observers(state_of(db), "asked")
            ((observer, _),) = number.items()
            assert "waits for the moderator" not in text_of(latest(settings.maildir, "dora@example.com", "asked to watch"))
            await t.fresh("dora@example.com", "OBSERVE please")  # asking twice changes nothing
            assert "your request waits for the moderator" in text_of(latest(settings.maildir, "dora@example.com", "asked"))
            await t.fresh(EMAIL[first], "OBSERVE")  # a player needs no observing
            await t.fresh("eve@example.com", "OBSERVE", name="Eve")
            asked_eve = latest(settings.maildir, MODERATOR, "Eve asks to watch")
            eve = int(text_of(asked_eve).split("observer ")[1].split(".")[0])
            send(t.office.port, reply_to_prompt(asked_eve, MODERATOR, f"APPROVE {observer}\nDENY {eve} a private game"),
                 MODERATOR, [str(asked_eve["Reply-To"])])
            await t.office.idle()
            welcome = latest(settings.maildir, "dora@example.com", "You watch")
            # setup ends: a report goes to the players and to Dora, as the public sees it
            for name in (first, second, third):
                prompt = latest(settings.maildir, EMAIL[name], "your orders")
                await t.reply(name, suggested_orders(text_of(prompt)), "your orders")
                if not state_of(db).player(next(p.id for p in state_of(db).players if p.name == name)).nation:
                    prompt = latest(settings.maildir, EMAIL[name], "your orders")
                    await t.reply(name, suggested_orders(text_of(prompt)), "your orders")
            report = holding(settings.maildir, "dora@example.com", "WHAT HAPPENED")[-1]
            send(t.office.port, reply_to_prompt(report, "dora@example.com", "UNOBSERVE"), "dora@example.com",
                 [str(report["Reply-To"] or f"pbem+g1@{settings.domain}")])
            await t.office.idle()
            return welcome, report

    welcome, report = asyncio.run(scenario())
    assert "To stop, send UNOBSERVE" in text_of(welcome)
    assert "Dora Watcher (observer)" in text_of(report)
    assert "Hand" not in text_of(report) and "SECRET" not in text_of(report)
    assert topic(latest(settings.maildir, "dora@example.com", "do not watch")) == "[g1] You do not watch g1"
    assert "a private game" in text_of(latest(settings.maildir, "eve@example.com", "do not watch"))
    assert "[g1] You play in this game" in subjects(settings.maildir, EMAIL[setup_order(db)[0]])
    state = state_of(db)
    assert table.observers(state) == {} and table.observers(state, "asked") == {}
    (joined,) = told(settings, EMAIL["Ann"], "[g1] Dora Watcher watches the game")
    assert "Dora Watcher watches the game from now on" in joined
    assert not any("Eve" in s for s in subjects(settings.maildir, EMAIL["Ann"]))  # turned away: the table is not told


def test_the_moderator_orders_for_a_player_and_ends_a_step_and_the_player_hears_both(world):
    db, settings = world

    async def scenario():
        async with Table(db, settings) as t:
            first, second, _ = setup_order(db)
            await t.reply("moderator", f"FOR {first}: NATION Thrace\nDEADLINE the group agreed to start tonight", "You moderate")
            return first, second

    first, second = asyncio.run(scenario())
    state = state_of(db)
    player = next(p for p in state.players if p.name == first)
    assert player.nation == "Thrace" and any(a.tokens.get("Thrace") for a in state.areas.values())
    assert [state.player(p.player_id).name for p in pending(state).values()] == [second]
    (given,) = told(settings, EMAIL[first], "[g1] The moderator gave an order for you")
    assert "The moderator gave this order for you: NATION Thrace" in given
    (ended,) = told(settings, EMAIL[first], "[g1] The moderator ended this step")
    assert "The moderator ended this step now: the group agreed to start tonight." in ended and "by its default" in ended
    # the letter names the next deadline, the one in force, and the player asked next has his prompt with it
    assert f"The next deadline: {state.deadline}; whoever is asked gets a prompt with it." in ended
    due = datetime.strptime(state.deadline, "%Y-%m-%d %H:%M UTC").strftime("%a %d %b %H:%M UTC")
    prompt = latest(settings.maildir, EMAIL[second], "your orders")
    assert topic(prompt).endswith(f"your orders, due {due}") and state.deadline in text_of(prompt)
    assert not any("ended this step" in text_of(m) for m in letters(settings.maildir, EMAIL[second]))


def test_review_fixes_replace_observer_report_replies_timezones_and_kicked_orders(world):
    """From a review by a player's eye: an observer may take a seat (the game wrote to him before) and is prompted
    at once; another seat's address is refused; a reply to a report is a reply to the game; OBSERVE after a
    greeting is read; time zones ignore case; a kicked player's ORDERS says so and his kept orders go."""
    db, settings = world

    async def scenario():
        async with Table(db, settings) as t:
            first, second, third = setup_order(db)
            await t.fresh("dora@example.com", "Hello, I would like to follow your game.\nOBSERVE Dora")
            ((number, _),) = table.observers(state_of(db), "asked").items()
            await t.reply("moderator", f"APPROVE {number}", "You moderate")
            await t.reply("moderator", f"REPLACE {first} WITH Dora Smith {EMAIL[second]} a swap", "You moderate")
            refused = text_of(last_ack(settings.maildir, MODERATOR))
            assert f"{EMAIL[second]} already plays" in refused
            await t.reply("moderator", f"REPLACE {first} WITH Dora Smith dora@example.com {first} has left", "You moderate")
            dora = subjects(settings.maildir, "dora@example.com")
            assert f"[g1] You take over {first}'s seat" in dora and any("your orders" in s for s in dora)
            EMAIL["Dora Smith"] = "dora@example.com"
            await t.reply("Dora Smith", "NATION Crete\nPLACE Knossos\nTIMEZONE europe/berlin", "your orders")
            ack = text_of(last_ack(settings.maildir, "dora@example.com"))
            # the zone is taken at once; her choice made, nothing is asked of her, so the ack names no deadline
            # (tests/service/test_deadlines_by_mail.py reads a deadline in a player's zone)
            assert "TIMEZONE Europe/Berlin" in ack and "Nothing is asked of you now." in ack
            dora_id = next(p.id for p in state_of(db).players if p.name == "Dora Smith")
            assert table.timezone_of(state_of(db), dora_id) == "Europe/Berlin"
            await t.reply(third, "NATION Italy\nPLACE Etruria")  # kept: not his turn yet
            await t.reply("moderator", f"KICK {third} gone", "You moderate")
            await t.reply(third, "ORDERS")
            orders = text_of(last_ack(settings.maildir, EMAIL[third]))
            assert "The moderator took you out of this game" in orders and "Kept for your turn" not in orders
            await t.reply(second, "NATION Thrace\nPLACE Scythia", "your orders")  # setup ends: a report goes out
            report = holding(settings.maildir, EMAIL[second], "WHAT HAPPENED")[-1]
            send(t.office.port, reply_to_prompt(report, EMAIL[second], "STATUS"), EMAIL[second], [str(report["Reply-To"])])
            await t.office.idle()
            return second

    second = asyncio.run(scenario())
    assert "STATUS: Turn 1" in text_of(last_ack(settings.maildir, EMAIL[second]))
    assert table.queued_orders(state_of(db), 3) == ()
    EMAIL.pop("Dora Smith")


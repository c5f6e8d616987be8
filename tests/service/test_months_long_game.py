"""A scripted game of three turns by real mail, as a group plays for months (issue 13's whole story).

Everything goes through `pbem serve`'s post office on loopback: players and
the moderator answer their letters with smtplib from their Maildirs; the
clock is the test's, so deadlines, reminders and absences fall where the
script says. On the way: orders sent before one's turn, a time zone, press,
a pause and a resumption, an absence that holds a deadline, a reminder
answered, a missed deadline with its warning and the moderator asked, a
replacement whose reply address works across phases while the old one is
dead, and `pbem verify` over the whole log at the end.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from pbem.rules import table
from pbem.rules.engine import pending
from pbem.service.deadlines import pass_deadlines
from pbem.service.demo import reply_to_prompt, suggested_orders
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.reminders import send_reminders
from pbem.service.server import PostOffice
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import last_ack, latest, letters, send, subjects, text_of, topic

PEOPLE = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
MODERATOR = "mod@example.org"
DAN = "dan@example.com"
T0 = datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)
OPTIONS = {"missed-limit": "1", "absence": "extend", "absence-days": "5", "reminder-hours": "12", "deadline-hours": "48"}


class Group:
    """The post office, its clock, and every person's mail client."""

    def __init__(self, db, settings):
        self.db, self.settings = db, settings
        self.now = T0
        self.office = PostOffice(db, settings, clock=lambda: self.now, outbox_every=0.05, deadlines_every=3600)
        self.email = {p.name: p.email for p in PEOPLE}
        self.answered: set[str] = set()

    def state(self):
        with UnitOfWork(self.db) as uow:
            return load_state(uow, "g1")

    def asked(self) -> list[str]:
        state = self.state()
        return [state.player(p.player_id).name for p in pending(state).values()]

    def name_of(self, nation: str) -> str:
        return next(p.name for p in self.state().players if p.nation == nation)

    async def send(self, name: str, letter, text: str) -> None:
        address = MODERATOR if name == "moderator" else self.email[name]
        await asyncio.to_thread(send, self.office.port, reply_to_prompt(letter, address, text), address,
                                [str(letter["Reply-To"])])
        await self.office.idle()

    async def moderate(self, text: str) -> None:
        await self.send("moderator", latest(self.settings.maildir, MODERATOR, "You moderate"), text)

    def prompt_for(self, name: str):
        return latest(self.settings.maildir, self.email[name], "your orders")

    async def answer(self, name: str, text: str | None = None) -> None:
        """``name`` answers his newest prompt (or reminder): the block as it stands, or ``text``."""
        fresh = [m for m in letters(self.settings.maildir, self.email[name])
                 if "your orders" in topic(m) and m["Message-ID"] not in self.answered]
        letter = fresh[-1] if fresh else self.prompt_for(name)
        self.answered.update(m["Message-ID"] for m in fresh)
        block = text if text is not None else suggested_orders(text_of(self.prompt_for(name)))
        await self.send(name, letter, block)

    async def play_until(self, done, silent: frozenset[str] = frozenset(), most: int = 400) -> None:
        """Everyone asked (but the ``silent``) answers with his order block as it stands, until ``done()``."""
        for _ in range(most):
            if done():
                return
            speaking = [n for n in self.asked() if n not in silent]
            if not speaking:
                return
            await self.answer(speaking[0])
        raise AssertionError(f"the game did not get there: {self.state().turn} {self.state().phase}")

    async def clock(self, hours: float) -> list[str]:
        """Time passes: the deadlines and reminders now due are handled as `pbem serve`'s clock does."""
        self.now += timedelta(hours=hours)
        moved = await asyncio.to_thread(pass_deadlines, self.db, self.settings, now=self.now)
        await asyncio.to_thread(send_reminders, self.db, self.settings, now=self.now)
        await self.office.idle()
        return moved

    def due(self) -> datetime:
        return datetime.strptime(self.state().deadline, "%Y-%m-%d %H:%M UTC").replace(tzinfo=timezone.utc)


def notes(settings, address: str, word: str) -> list[str]:
    return [text_of(m) for m in letters(settings.maildir, address) if word in topic(m)]


def test_three_turns_by_mail_with_absence_reminder_missed_deadline_replacement_pause_and_press(sqlite_url, tmp_path):
    settings = replace(Settings(), gather_minutes=0, db_url=sqlite_url, maildir=tmp_path / "mail", listen_port=0, board_pictures=False)
    db = make_engine(sqlite_url)
    ensure_schema(db)
    g = Group(db, settings)

    async def scenario():
        await g.office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PEOPLE, seed="months", options=OPTIONS,
                                    moderator_email=MODERATOR, now=g.now)
            await g.office.idle()

            # -- setup: the last player sends his choice at once, before his turn; it waits and is played
            state = g.state()
            first, second, last = (state.player(pid).name for pid in state.place_order)
            await g.send(last, latest(settings.maildir, g.email[last], "new game"), "NATION Crete\nPLACE Knossos\nTIMEZONE Europe/Berlin")
            await g.answer(first, "NATION Africa\nPLACE Sahara")
            await g.answer(second, "NATION Italy\nPLACE Etruria")
            assert {p.name: p.nation for p in g.state().players} == {first: "Africa", second: "Italy", last: "Crete"}
            assert "played: NATION Crete" in notes(settings, g.email[last], "early orders")[-1]

            # -- turn 1: press, then a pause that no deadline passes, then a resumption with a fresh deadline
            await g.play_until(lambda: g.state().turn == 1 and bool(g.asked()))
            await g.send("Ann", g.prompt_for("Ann"), "PRESS TO ALL: Peace on the Nile this turn?")
            await g.moderate("PAUSE the moderator is away until Monday")
            assert await g.clock(72) == []  # long past the deadline, but the game is paused
            await g.moderate("RESUME back at my desk")
            assert g.due() == g.now + timedelta(hours=48)

            # -- an absence announced in advance holds the deadline that falls inside it
            away = g.asked()[0]
            due = g.due()
            await g.send(away, g.prompt_for(away),
                         f"ABSENT {due.date().isoformat()} {(due + timedelta(days=1)).date().isoformat()} a wedding")
            assert await g.clock(48) == ["g1"]  # the deadline came: it moved instead of passing
            assert g.due() > due and away in g.asked()
            await g.answer(away)

            # -- a reminder before the deadline, answered by replying to it
            reminded = g.asked()[0]
            asked_for = [p.step for p in pending(g.state()).values()]
            await g.clock((g.due() - g.now).total_seconds() / 3600 - 6)
            await g.clock(1)  # the clock passes again: still one reminder for this step
            reminders = [m for m in letters(settings.maildir, g.email[reminded]) if "Reminder" in topic(m)]
            assert len(reminders) == 1 and "due" in topic(reminders[0])
            version = g.state().version
            await g.send(reminded, reminders[0], suggested_orders(text_of(g.prompt_for(reminded))))
            assert g.state().version > version and [p.step for p in pending(g.state()).values()] != asked_for

            # -- Crete's player goes silent: he misses a deadline, is warned, the moderator is asked
            crete = g.name_of("Crete")
            await g.play_until(lambda: crete in g.asked(), silent=frozenset({crete}))
            old_prompt = g.prompt_for(crete)
            await g.clock((g.due() - g.now).total_seconds() / 3600 + 1)
            assert "the default was applied" in text_of(latest(settings.maildir, g.email[crete], "You missed a deadline"))
            assert f"[g1] {crete} has missed 1 deadline" in subjects(settings.maildir, MODERATOR)

            # -- the moderator hands Crete to Dan, who plays on with his own reply address and SECRET
            await g.moderate(f"REPLACE Crete WITH Dan {DAN} {crete} has left the group")
            ack = text_of(last_ack(settings.maildir, MODERATOR))
            assert f"\n  REPLACE Crete WITH Dan {DAN} {crete} has left the group" in ack  # the nation, not a number
            g.email["Dan"] = DAN
            start = latest(settings.maildir, DAN, "You take over Crete")
            taken = " ".join(text_of(start).split())
            assert "SECRET " in taken and f"you take over Crete in the game of Advanced Civilization \"g1\", from {crete}." in taken
            assert f"The moderator's reason: {crete} has left the group" in taken
            assert "HAND of Crete: trade cards" in taken and "BOARD:" in taken and "STATUS: Turn " in taken
            await g.play_until(lambda: g.state().turn >= 2 and "Dan" in g.asked())
            await g.answer("Dan")
            assert "Orders received" in topic(latest(settings.maildir, DAN, "Orders"))
            # Cy's old reply address is dead, even though a phase has passed since the replacement
            before = g.state().version
            await g.send(crete, old_prompt, "HALT")
            assert g.state().version == before
            gone = latest(settings.maildir, g.email[crete], "You no longer play")
            assert "You no longer play Crete in game g1" in " ".join(text_of(gone).split())
            assert "Nothing in your message was applied" in text_of(gone)

            # -- on to the end of turn 3, everyone answering his prompts
            await g.play_until(lambda: g.state().turn >= 4 or g.state().finished)
            return away
        finally:
            await g.office.stop()

    away = asyncio.run(scenario())
    state = g.state()
    assert state.turn >= 4 or state.finished
    assert table.timezone_of(state, next(p.id for p in state.players if p.nation == "Crete")) == "UTC"  # a new seat
    press = notes(settings, "ben@example.net", "Press from")
    assert press and "Peace on the Nile this turn?" in press[0]
    assert not notes(settings, "ann@example.org", "Press from")  # never to its own sender
    for person in PEOPLE:
        assert not notes(settings, person.email, "From the moderator")  # each letter's subject says what happened
        assert any("The moderator paused the game: the moderator is away until Monday." in t
                   for t in notes(settings, person.email, "] Game paused"))
        assert any("The moderator resumed the game: back at my desk." in t
                   for t in notes(settings, person.email, "] Game resumed: deadline "))
        assert any(f"{away}" in t and "will be away from" in t and "a wedding" in t
                   for t in notes(settings, person.email, "will be away"))
        assert any("The deadline was extended by" in t and f"{away} is away until" in t
                   for t in notes(settings, person.email, "] Deadline extended to "))
        assert any("The moderator handed Crete from" in t and "to Dan" in t
                   for t in notes(settings, person.email, "] Crete is now played by Dan"))
    assert notes(settings, DAN, "Report"), "Dan gets the reports from his seat on"
    for_moderator = notes(settings, MODERATOR, "For the moderator")
    assert any(away in t and "will be away from" in t and "a wedding" in t for t in for_moderator)
    assert any("The deadline was extended by" in t for t in notes(settings, MODERATOR, "] Deadline extended to "))
    # the whole log re-derives, table events and all
    verified = subprocess.run([sys.executable, "-m", "pbem.cli", "--db", sqlite_url, "verify", "g1"],
                              capture_output=True, text=True, timeout=300)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "re-derivation ok" in verified.stdout

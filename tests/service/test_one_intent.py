"""A message is one intent (issue 29), through `pbem submit`'s use case and `take_orders` as mail calls it.

A refused line holds the orders of its message that close a step; a game may
hold the whole message (``errors=hold``); a second HALT at one's own 3a is
kept for 3b; a line edited in a quote of our letter is played or named.
"""

from __future__ import annotations

import email
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from email.policy import default as default_policy

import pytest

from pbem.orders.language import Actor
from pbem.rules import table
from pbem.rules.engine import pending
from pbem.rules.phases.movement.turns import census_turns
from pbem.service.batch import retrying
from pbem.service.games import GameError, NewPlayer, create_game, submit, take_orders
from pbem.service.projector import load_state
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import topic

PEOPLE = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
T0 = datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)
STARTS = {"Italy": ("Etruria", "Roma"), "Crete": ("Knossos", "Phaestos"), "Thrace": ("Scythia", "Dacia")}


class Table:
    """One game brought to step 3a of the first turn, with what the tests ask of it."""

    def __init__(self, url: str, tmp_path, options: dict[str, str] | None = None) -> None:
        self.settings = replace(Settings(), gather_minutes=0, db_url=url, maildir=tmp_path / "mail")
        self.db = make_engine(url)
        ensure_schema(self.db)
        create_game(self.db, self.settings, "g1", PEOPLE, seed="early", options=options, now=T0)
        for nation in STARTS:
            self.submit(self.asked(), f"NATION {nation}\nPLACE {STARTS[nation][0]}")
        assert self.state().step == "ships"

    def state(self):
        with UnitOfWork(self.db) as uow:
            return load_state(uow, "g1")

    def asked(self) -> str:
        s = self.state()
        (prompt,) = pending(s).values()
        return s.player(prompt.player_id).name

    def nation_of(self, name: str) -> str:
        return next(p.nation for p in self.state().players if p.name == name)

    def submit(self, who: str, text: str):
        return submit(self.db, self.settings, "g1", who, text, now=T0)

    def last_ack(self, address: str):
        with UnitOfWork(self.db) as uow:
            rows = [r for r in uow.outbox.due(T0 + timedelta(days=9), limit=1000) if r.recipient == address]
        return email.message_from_bytes(bytes(rows[-1].raw), policy=default_policy)  # the acknowledgement comes last


def _body(message) -> str:
    return message.get_body(preferencelist=("plain",)).get_content()


def _address(name: str) -> str:
    return next(p.email for p in PEOPLE if p.name == name)


def test_a_refused_line_holds_the_halt_and_the_acknowledgement_says_the_step_is_open(sqlite_url, tmp_path):
    game = Table(sqlite_url, tmp_path)
    who = game.asked()
    home = STARTS[game.nation_of(who)][0]
    receipt = game.submit(who, f"mvoe 1 {home} Atlantis\nHALT")
    assert [e["line"] for e in receipt.errors] == [1]
    assert receipt.accepted == []
    assert game.asked() == who, "the HALT was held: his ship step is still open"
    assert receipt.subject == "Step still open: 1 line refused"
    assert receipt.headline == ("Your step is still open: line 1 was refused, so HALT was not played. "
                                "Correct line 1 and send it again with HALT.")
    ack = game.last_ack(_address(who))
    assert "Step still open: 1 line refused" in topic(ack)
    text = _body(ack)
    assert text.strip().splitlines()[0] == receipt.headline
    assert "Nothing more is needed from you now" not in text
    assert "Correct it and send it again" not in text


def test_a_line_refused_by_the_engine_after_the_halt_holds_it_too(sqlite_url, tmp_path):
    game = Table(sqlite_url, tmp_path)
    who = game.asked()
    receipt = game.submit(who, "HALT\nSCRAP Babylonia")  # no ship of his there: the engine refuses it
    assert [e["line"] for e in receipt.errors] == [2] and receipt.accepted == []
    assert game.asked() == who
    assert receipt.headline.startswith("Your step is still open: line 2 was refused, so HALT was not played.")


def test_a_message_without_a_refused_line_closes_the_step_as_before(sqlite_url, tmp_path):
    game = Table(sqlite_url, tmp_path)
    who = game.asked()
    receipt = game.submit(who, "HALT")
    assert receipt.errors == [] and receipt.accepted == ["HALT"] and receipt.headline == ""
    assert game.asked() != who


def test_a_game_may_hold_the_whole_message(sqlite_url, tmp_path):
    game = Table(sqlite_url, tmp_path, options={"errors": "hold"})
    who = game.asked()
    before = game.state().version
    receipt = game.submit(who, "TIMEZONE Europe/Berlin\nSCRAP Babylonia\nHALT")
    assert [e["line"] for e in receipt.errors] == [2] and receipt.accepted == []
    assert game.state().version == before, "nothing of the message was played"
    assert receipt.subject == "Nothing played: 1 line refused"
    assert receipt.headline.startswith("Nothing of your message was played: line 2 was refused")
    ack = game.last_ack(_address(who))
    assert "Nothing played" in topic(ack) and _body(ack).strip().splitlines()[0] == receipt.headline
    assert game.submit(who, "HALT").accepted == ["HALT"], "a message without a refused line is played"


def test_the_errors_option_takes_step_or_hold(sqlite_url, tmp_path):
    settings = replace(Settings(), gather_minutes=0, db_url=sqlite_url, maildir=tmp_path / "mail")
    db = make_engine(sqlite_url)
    ensure_schema(db)
    with pytest.raises(GameError, match="errors takes step"):
        create_game(db, settings, "g2", PEOPLE, options={"errors": "maybe"}, now=T0)


def test_halt_halt_at_ones_own_ship_step_keeps_the_second_for_the_moves(sqlite_url, tmp_path):
    game = Table(sqlite_url, tmp_path)
    s = game.state()
    first = census_turns(s)[0]
    who = s.player(s.nations[first].player_id).name
    assert game.asked() == who
    receipt = game.submit(who, "HALT\nHALT")
    assert receipt.errors == []
    assert receipt.accepted == ["HALT", "HALT  (kept: played when your turn comes, if still legal)"]
    assert any("second HALT is kept for your movement (3b)" in n for n in receipt.notes)
    assert table.queued_orders(game.state(), s.nations[first].player_id) == ("HALT",)
    while game.state().step == "ships":
        game.submit(game.asked(), "HALT")
    after = game.state()
    assert after.step == "moves" and game.asked() != who, "his kept HALT ended his movement when his turn came"
    assert table.queued_orders(after, s.nations[first].player_id) == ()


def test_a_refused_line_holds_a_kept_halt_too(sqlite_url, tmp_path):
    game = Table(sqlite_url, tmp_path)
    s = game.state()
    last = census_turns(s)[-1]
    who = s.player(s.nations[last].player_id).name
    assert game.asked() != who
    receipt = game.submit(who, "MOVE 1 Knossos Nowhereland\nHALT")
    assert [e["line"] for e in receipt.errors] == [1]
    assert table.queued_orders(game.state(), s.nations[last].player_id) == ()
    assert receipt.subject == "Step still open: 1 line refused"
    assert not any("Nothing more is needed from you now" in o for o in receipt.on_file)


def _quoted(game: Table, who: str, text: str, quoted: tuple[str, ...]):
    player_id = next(p.id for p in game.state().players if p.name == who)

    def work(uow):
        return take_orders(uow, game.settings, "g1", Actor(player_id=player_id), text, now=T0, source="mail:test",
                           message_id="<q1@example.org>", quoted_orders=quoted)

    return retrying(game.db, work)


def test_every_order_line_written_in_a_quote_is_played_or_named(sqlite_url, tmp_path):
    game = Table(sqlite_url, tmp_path)
    who = game.asked()
    receipt = _quoted(game, who, "", ("SCRAP Babylonia", "Thanks for the game, see you soon", "KEPE Roma", "HALT"))
    named = [n for n in receipt.notes if "in the quoted block was not played" in n]
    assert [n.split("'")[1] for n in named] == ["> SCRAP Babylonia", "> KEPE Roma"]
    assert not any("Thanks for the game" in n for n in receipt.notes), "prose in a quote is no error"
    assert receipt.accepted == ["HALT"] and game.asked() != who


def test_the_moderators_orders_for_a_player_are_one_intent_too(sqlite_url, tmp_path):
    game = Table(sqlite_url, tmp_path)
    who = game.asked()
    nation = game.nation_of(who)
    receipt = game.submit("moderator", f"FOR {nation}: HALT\nFOR {nation}: SCRAP Babylonia")
    assert [e["line"] for e in receipt.errors] == [2] and receipt.accepted == []
    assert game.asked() == who and receipt.subject == "Step still open: 1 line refused"
    receipt = game.submit("moderator", f"FOR {nation}: HALT")
    assert receipt.errors == [] and game.asked() != who


def test_the_held_headline_leads_the_html_part_too(sqlite_url, tmp_path):
    game = Table(sqlite_url, tmp_path)
    who = game.asked()
    receipt = game.submit(who, "KEPE Roma\nHALT")
    html = game.last_ack(_address(who)).get_body(preferencelist=("html",)).get_content()
    assert receipt.headline in html and "Nothing more is needed from you now" not in html


def test_a_misspelt_move_holds_the_halt_at_ones_own_move_step(sqlite_url, tmp_path):
    game = Table(sqlite_url, tmp_path)
    while game.state().step == "ships":
        game.submit(game.asked(), "HALT")
    who = game.asked()
    home, away = STARTS[game.nation_of(who)]
    receipt = game.submit(who, f"MOVE 1 {home} Nowhereland\nHALT")
    assert [e["line"] for e in receipt.errors] == [1] and receipt.accepted == []
    assert game.state().step == "moves" and game.asked() == who, "the move is not lost: his turn is still open"
    assert any(o.startswith("Still needed from you:") for o in receipt.on_file)
    receipt = game.submit(who, f"MOVE 1 {home} {away}\nHALT")
    assert receipt.errors == [] and receipt.accepted == [f"MOVE 1 {home} > {away}", "HALT"]

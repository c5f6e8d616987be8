"""Civil War (phase 9, §30.41, D-1, Q-S6): REBELS orders, refusals, defaults, verify, narration, bots."""

from __future__ import annotations

import random
import re

import pytest

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.rejection import Rejection
from pbem.rules.engine import describe_event
from pbem.rules.phases.calamities.war import ChooseFaction

from .botplay import random_board, resolve_by_bots
from .casefile import position

DRAWS = Draws("civil-war")
NATIONS = {"Egypt": {"stock": 10}, "Crete": {"stock": 30}, "Babylon": {"stock": 20}}
AREAS = {
    "Thebes": {"city": "Egypt"},
    "Memphis": {"city": "Egypt"},
    "Gaza": {"city": "Egypt"},
    "Tanis": {"tokens": {"Egypt": 8}},
    "Fayum": {"tokens": {"Egypt": 7}},
    "Buhen": {"tokens": {"Egypt": 6}},
    "Jericho": {"tokens": {"Egypt": 5}},
}


def game(nations=None, areas=None, **extra):
    case = {"players": 3, "phase": "calamity-resolution", "nations": nations or NATIONS, "areas": areas or AREAS,
            "calamities": [["Civil War", "Egypt", ""]]}
    case.update(extra)
    state = position(case)
    return E.fold(state, until(E.resume(state, DRAWS))), case


def until(events):
    for i, e in enumerate(events):
        if e.type == "PhaseEnded":
            return events[: i + 1]
    return events


def parse(text, state, player_id=1):
    (line,) = parse_orders(text, state, Actor(player_id=player_id)).lines
    return line


def decide(state, text, player_id=1):
    events = E.decide(state, parse(text, state, player_id).command, DRAWS)
    return E.fold(state, until(events)), events


def test_faction_is_read_forgivingly_and_written_back():
    state, _ = game()
    line = parse("reb tanis 8, gaza city, fayum 2", state)
    assert line.command == ChooseFaction(1, (("Tanis", "tokens", 8), ("Gaza", "city", 1), ("Fayum", "tokens", 2)))
    assert parse("REBELS", state).error
    assert parse("REBELS Tanis lots", state).error


def test_prompt_choices_all_work_and_default_is_stated():
    state, _ = game()
    (prompt,) = E.pending(state).values()
    assert prompt.who == "egypt" and prompt.step == "civil-war-faction"
    assert "Crete" in " ".join(prompt.situation)
    assert prompt.default.startswith("REBELS Buhen 6, Fayum 7, Jericho 2")
    assert 1 < len(prompt.choices) <= 60
    for choice in prompt.choices:
        after, events = decide(state, choice)
        assert events[0].type == "CivilWarUnitsChosen"
        assert E.pending(after).keys() == {"crete"} or after.step == "ended"  # one answer left: taken at once


def test_refusals():
    state, _ = game()
    for text, pid, words in (
        ("REBELS Tanis 8", 1, "exactly 15"),
        ("REBELS Tanis 9, Fayum 6", 1, "Tanis"),
        ("REBELS Thebes CITY, Knossos CITY, Tanis 5", 1, "not a city of Egypt"),
        ("REBELS Tanis 8, Fayum 7", 2, "no Civil War asks you"),
    ):
        with pytest.raises(Rejection, match=re.escape(words)):
            decide(state, text, pid)


def test_deadline_defaults_verify_and_gained_cities():
    state, _ = game()
    events = E.decide(state, PassDeadline(), DRAWS)
    chosen = next(e for e in events if e.type.startswith("CivilWar"))
    assert chosen.type == "CivilWarUnitsChosen" and chosen.data["by_default"] and not E.is_input(chosen)
    state = E.fold(state, until(events))
    assert E.pending(state).keys() == {"crete"}
    before = state
    state, events = decide(state, "REBELS Thebes CITY, Memphis CITY, Gaza CITY, Tanis 5", 2)
    assert E.is_input(events[0])
    assert E.decide(before, E.command_for(before, events[0]), DRAWS) == events
    assert [e.type for e in events][-1] == "CivilWarSplit"
    (keep,) = E.pending(state).values()
    assert keep.who == "egypt" and keep.step == "civil-war-keep" and keep.choices == ("FACTION 1", "FACTION 2")
    assert keep.situation[0].startswith("Faction 1 (35 unit points): Buhen 6, Fayum 7, Gaza city")
    assert keep.situation[1].startswith("Faction 2 (6 unit points): Jericho 3, Tanis 3")
    assert keep.default.startswith("FACTION 1")
    split = state
    state, events = decide(state, "faction two")
    assert events[0].type == "CivilWarFactionKept" and E.is_input(events[0])
    assert E.decide(split, E.command_for(split, events[0]), DRAWS) == events
    assert [e.type for e in until(events)][-3:] == ["CivilWarFought", "CalamityResolved", "PhaseEnded"]
    assert before.area("Thebes").city == "Egypt" and state.area("Thebes").city == "Crete"
    assert dict(state.area("Jericho").tokens) == {"Egypt": 3, "Crete": 2}
    assert {"Thebes", "Memphis", "Gaza"} <= set(state.gained_this_turn)
    assert not {"beneficiary", "faction", "faction2", "kept"} & set(state.filed)
    fought = next(e for e in events if e.type == "CivilWarFought")
    text = describe_event(split, fought, "observer")
    assert text.startswith("Civil War (Egypt) with beneficiary Crete: Egypt kept faction 2;") and "the city in Thebes to Crete" in text


def test_victim_keeps_the_larger_faction_by_default():
    """Fact sheet §2.12: the victim keeps one faction, his choice; the default keeps the one worth more."""
    state, _ = game()
    state = E.fold(state, until(E.decide(state, PassDeadline(), DRAWS)))
    state = E.fold(state, until(E.decide(state, PassDeadline(), DRAWS)))
    assert E.pending(state)["egypt"].step == "civil-war-keep"
    assert "FACTION 1 or FACTION 2" in parse("FACTION 3", state).error
    for text, pid, words in (("FACTION 1", 2, "Egypt is to answer"),):
        with pytest.raises(Rejection, match=re.escape(words)):
            decide(state, text, pid)
    assert parse("FACTION many", state).error
    events = E.decide(state, PassDeadline(), DRAWS)
    kept = next(e for e in events if e.type == "CivilWarFactionKept")
    assert kept.data["kept"] == 1 and kept.data["by_default"] and not E.is_input(kept)
    assert "keeps faction 1 (by default)" in describe_event(state, kept, "player:egypt")
    state = E.fold(state, until(events))
    assert state.cities_on_board("Egypt") == 2 and state.cities_on_board("Crete") == 1  # faction 2: a city and a token


def test_narration_of_beginning_and_averted():
    _, case = game()
    events = E.resume(position(case), DRAWS)
    assert describe_event(position(case), events[0], "observer").startswith("Civil War (Egypt): the beneficiary is Crete")
    nations = {"Egypt": {"stock": 40}, "Crete": {"stock": 5}, "Babylon": {"stock": 5}}
    _, case = game(nations, {**AREAS, "Knossos": {"city": "Crete"}, "Babylon": {"city": "Babylon"}, "Mari": {"city": "Babylon"}, "Susa": {"city": "Babylon"}, "Cyprus": {"city": "Crete"}, "Corinth": {"city": "Crete"}})
    events = E.resume(position(case), DRAWS)
    assert events[0].type == "CivilWarAverted"
    assert "ranks first" in describe_event(position(case), events[0], "player:crete")


def test_bots_always_finish_civil_war():
    lands = ["Thebes", "Memphis", "Alexandria", "Aleppo", "Athens", "Corinth", "Cyrene", "Knossos", "Sparta", "Babylon", "Susa", "Ur"]
    nations = ["Egypt", "Crete", "Babylon"]
    cards = ["Music", "Drama & Poetry", "Democracy", "Military", "Philosophy", "Law"]
    for seed in range(40):
        rng = random.Random(seed)
        areas = random_board(rng, lands, nations, 6)
        spec = {n: {"civ_cards": rng.sample(cards, 2), "stock": rng.randint(0, 30)} for n in nations}
        options = {"beneficiary-rule": rng.choice(["seed", "1991"])}
        state, _ = game(spec, areas, options=options)
        state = resolve_by_bots(state, rng, DRAWS, f"seed {seed}", steps=10)

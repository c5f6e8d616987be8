"""Phase 9: Volcanic Eruption / Earthquake and Flood (§30.21, §30.212, §30.51): prompts, defaults, verify, narration, bots."""

from __future__ import annotations

import random
import re

import pytest

from pbem.rules import engine as E
from pbem.rules.board.losses import LoseUnits
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.rejection import Rejection
from pbem.rules.engine import describe_event
from pbem.rules.phases.calamities.choosing import PickCities
from pbem.rules.phases.calamities.nature import FLOOD, VOLCANO, plain_points

from .botplay import resolve_by_bots
from .casefile import position
from .test_calamities import DRAWS, parse, until


def game(phase, areas, **extra):
    """The position folded up to the end of phase 9 (not into the next turn)."""
    case = {"players": 3, "phase": phase, "nations": {"Egypt": {}, "Crete": {}, "Babylon": {}}, "areas": areas}
    case.update(extra)
    state = position(case)
    events = until(E.resume(state, DRAWS), phase)
    return E.fold(state, events), events


def decide(state, text, player_id=1):
    events = E.decide(state, parse(text, state, player_id).command, DRAWS)
    return E.fold(state, until(events, "calamity-resolution")), events

TIE = {"Neapolis": {"city": "Crete"}, "Syracus": {"city": "Crete"}, "Campania": {"tokens": {"Egypt": 2}}, "Milazzo": {"tokens": {"Babylon": 2}}}
QUAKE = {"Knossos": {"city": "Egypt"}, "Thebes": {"city": "Egypt"}, "Rhodes": {"city": "Crete"}, "Phaestos": {"city": "Babylon"}}
NILE = {
    "Memphis": {"city": "Egypt"},
    "Fayum": {"tokens": {"Egypt": 4}},
    "Tanis": {"tokens": {"Egypt": 5}},
    "Upper Egypt": {"tokens": {"Egypt": 4, "Babylon": 6}},
    "Alexandria": {"tokens": {"Crete": 9}},
}


def test_eruption_tie_prompt_choices_default_and_verify():
    state, _ = game("calamity-resolution", areas=TIE, calamities=[[VOLCANO, "Crete", ""]])
    (prompt,) = E.pending(state).values()
    assert prompt.who == "crete" and prompt.choices == ("PICK Neapolis", "PICK Syracus")
    assert "Vesuvius" in prompt.question and "Etna" in prompt.question and "Neapolis" in prompt.default
    for choice in prompt.choices:
        after, events = decide(state, choice, 2)
        assert events[0].type == "CalamityCitiesChosen" and E.is_input(events[0])
        assert E.decide(state, E.command_for(state, events[0]), DRAWS) == events
    events = E.decide(state, PassDeadline(), DRAWS)
    assert events[1].data["by_default"] and events[1].data["cities"][0]["volcano"] == "Vesuvius"
    after = E.fold(state, until(events, "calamity-resolution"))
    assert after.area("Neapolis").city is None and not after.area("Campania").tokens
    assert after.area("Syracus").city == "Crete" and after.nations["Egypt"].stock == state.nations["Egypt"].stock + 2


def test_eruption_narration_names_the_volcano_and_the_losses():
    state, _ = game("calamity-resolution", areas=TIE, calamities=[[VOLCANO, "Crete", ""]])
    _, events = decide(state, "PICK Syracus", 2)
    text = describe_event(state, events[0], "observer")
    assert "Etna erupts over Syracus: Crete's city destroyed" in text
    assert "Etna erupts over Milazzo: 2 Babylon tokens destroyed" in text and "chosen by Crete" in text


def test_earthquake_refusals_and_secondary_prompt():
    state, events = game("calamity-resolution", areas=QUAKE, calamities=[[VOLCANO, "Egypt", ""]])
    assert events[0].type == "CalamityStruck" and events[0].data["cities"][0]["area"] == "Knossos"
    (prompt,) = E.pending(state).values()
    assert prompt.step == "calamity-secondary" and prompt.choices == ("PICK Phaestos", "PICK Rhodes")
    for text, pid, words in (
        ("PICK Thebes", 1, "not a city you may choose"),
        ("PICK Thebes, Knossos", 1, "only 0 of the cities you named can be chosen and 1 is needed"),
        ("PICK Rhodes", 2, "no calamity asks you"),
    ):
        with pytest.raises(Rejection, match=re.escape(words)):
            decide(state, text, pid)
    after, events = decide(state, "pick rhod", 1)
    assert after.area("Rhodes").city is None and after.area("Phaestos").city == "Babylon"
    assert "Crete's Rhodes reduced to 2 tokens" in describe_event(state, events[0], "player:babylon")


def test_earthquake_without_neighbours_any_city_and_no_secondary():
    state, _ = game("calamity-resolution", areas={"Thebes": {"city": "Egypt"}, "Aleppo": {"city": "Egypt"}}, calamities=[[VOLCANO, "Egypt", ""]])
    (prompt,) = E.pending(state).values()
    assert prompt.choices == ("PICK Aleppo", "PICK Thebes")
    after, events = decide(state, "PICK Thebes")
    assert [e.type for e in until(events, "calamity-resolution")][-2:] == ["CalamityResolved", "PhaseEnded"]
    assert after.area("Thebes").city is None


def test_earthquake_victim_without_cities_nothing_happens():
    state, events = game("calamity-resolution", areas={"Thebes": {"tokens": {"Egypt": 3}}}, calamities=[[VOLCANO, "Egypt", ""]])
    assert [e.type for e in events][:1] == ["CalamityResolved"] and state.area("Thebes").tokens["Egypt"] == 3


def test_flood_loss_only_on_the_plain_prompt_verify_and_narration():
    state, events = game("calamity-resolution", areas={**NILE, "Thebes": {"tokens": {"Egypt": 5}}}, calamities=[[FLOOD, "Egypt", ""]])
    assert events[0].type == "FloodStruck" and events[0].data["plain"] == "nile"
    assert "nile plain (Alexandria, Fayum, Memphis, Tanis, Upper Egypt) floods" in describe_event(position({"players": 3, "phase": "calamity-resolution", "nations": {"Egypt": {}, "Crete": {}, "Babylon": {}}}), events[0], "observer")
    (prompt,) = E.pending(state).values()
    assert prompt.step == "calamity-loss-primary" and "Thebes" not in " ".join(prompt.choices)
    assert prompt.situation[1].startswith("Your cities: Memphis.")
    for choice in prompt.choices:
        _, evs = decide(state, choice)
        assert sum(c["points"] for c in evs[0].data["losses"]) == 17
        assert E.decide(state, E.command_for(state, evs[0]), DRAWS) == evs
    with pytest.raises(Rejection, match=re.escape("Thebes")):
        E.decide(state, LoseUnits(1, (("Thebes", "tokens", 5), ("Fayum", "tokens", 4), ("Tanis", "tokens", 5), ("Upper Egypt", "tokens", 3))), DRAWS)


def test_flood_give_prompt_caps_at_units_on_the_plain():
    state, _ = game("calamity-resolution", areas=NILE, calamities=[[FLOOD, "Egypt", ""]])
    state = E.fold(state, until(E.decide(state, PassDeadline(), DRAWS), "calamity-resolution"))
    (prompt,) = E.pending(state).values()
    assert prompt.step == "calamity-assign" and prompt.who == "egypt"
    assert plain_points(state, "Crete", "nile") == 9 and plain_points(state, "Babylon", "nile") == 6
    assert prompt.choices[0] == "GIVE Crete 9, Babylon 1"
    with pytest.raises(Rejection, match=re.escape("at most 9")):
        decide(state, "GIVE Crete 10")


def test_flood_tied_plains_prompt_default_verify_and_narration():
    areas = {"Memphis": {"tokens": {"Egypt": 3}}, "Ur": {"tokens": {"Egypt": 3}}, "Alexandria": {"tokens": {"Crete": 2}}}
    state, events = game("calamity-resolution", areas=areas, calamities=[[FLOOD, "Egypt", ""]])
    assert events == []
    (prompt,) = E.pending(state).values()
    assert prompt.step == "flood-plain" and prompt.choices == ("PICK Memphis", "PICK Ur") and "nile" in prompt.default
    for choice in prompt.choices:
        _, evs = decide(state, choice)
        assert evs[0].type == "FloodPlainChosen" and E.is_input(evs[0])
        assert E.decide(state, E.command_for(state, evs[0]), DRAWS) == evs
    for text, pid, words in (("PICK Memphis, Ur", 1, "name one area"), ("PICK Memphis", 2, "Egypt names")):
        with pytest.raises(Rejection, match=re.escape(words)):
            decide(state, text, pid)
    events = E.decide(state, PassDeadline(), DRAWS)
    chosen = events[1]
    assert chosen.type == "FloodPlainChosen" and chosen.data["by_default"] and chosen.data["plain"] == "nile"
    assert describe_event(state, chosen, "observer").startswith("Flood (Egypt): the nile plain (Egypt's choice, by default)")
    after = E.fold(state, until(events, "calamity-resolution"))
    assert "Memphis" not in [a for a, x in after.areas.items() if x.tokens.get("Egypt")]
    assert after.area("Ur").tokens["Egypt"] == 3 and not after.area("Alexandria").tokens


def test_flood_coastal_city_pick_written_back():
    state, _ = game("calamity-resolution", areas={"Cyrene": {"city": "Egypt"}, "Athens": {"city": "Egypt"}}, calamities=[[FLOOD, "Egypt", ""]])
    line = parse("PICK athens", state)
    assert line.command == PickCities(1, ("Athens",))
    (prompt,) = E.pending(state).values()
    assert prompt.choices == ("PICK Athens", "PICK Cyrene") and "eliminated" in prompt.question


def test_bots_always_finish_volcano_and_flood():
    lands = ["Neapolis", "Campania", "Syracus", "Milazzo", "Thera", "Knossos", "Phaestos", "Rhodes", "Athens", "Thebes",
             "Memphis", "Alexandria", "Fayum", "Tanis", "Upper Egypt", "Susa", "Ur", "Babylonia", "Charax", "Cyrene"]
    nations = ["Egypt", "Crete", "Babylon", "Thrace"]
    for seed in range(80):
        rng = random.Random(seed)
        areas = {}
        for land in lands:
            owner = rng.choice(nations)
            kind = rng.choice(["city", "tokens", "tokens", "empty"])
            if kind == "city":
                areas[land] = {"city": owner}
            elif kind == "tokens":
                areas[land] = {"tokens": {o: rng.randint(1, 4) for o in rng.sample(nations, rng.randint(1, 2))}}
        spec = {n: {"civ_cards": ["Engineering"] if rng.random() < 0.4 else []} for n in nations}
        calamities = [[VOLCANO, rng.choice(nations), ""], [FLOOD, rng.choice(nations), ""]]
        case = {"players": 4, "phase": "calamity-resolution", "nations": spec, "areas": areas, "calamities": calamities,
                "options": {"unplayable-phases": "skip"}}
        state = position(case)
        state = E.fold(state, until(E.resume(state, DRAWS), "calamity-resolution"))
        state = resolve_by_bots(state, rng, DRAWS, f"seed {seed}", steps=40,
                                check_prompt=lambda p: assert_choices_offered(p))


def assert_choices_offered(prompt) -> None:
    assert 1 <= len(prompt.choices) <= 60


def test_earthquake_choice_names_the_cities_of_others_each_answer_puts_at_risk():
    """Issue 31: the victim choosing his city is told, for each, whose cities next to it the quake then reduces."""
    areas = {"Knossos": {"city": "Egypt"}, "Sparta": {"city": "Egypt"}, "Rhodes": {"city": "Crete"},
             "Phaestos": {"city": "Babylon"}}
    state, _ = game("calamity-resolution", areas=areas, calamities=[[VOLCANO, "Egypt", ""]])
    (prompt,) = E.pending(state).values()
    assert prompt.step == "calamity-primary" and prompt.choices == ("PICK Knossos", "PICK Sparta")
    assert "Knossos: Babylon's Phaestos, Crete's Rhodes; Sparta: Babylon's Phaestos." in prompt.question

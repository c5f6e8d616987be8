"""Barbarian Hordes (phase 9, §30.52, fact sheet §2.12): the tie question, refusals, defaults, verify, narration, bots."""

from __future__ import annotations

import random

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.board.ranking import BARBARIANS
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.rejection import Rejection
from pbem.rules.engine import describe_event
from pbem.rules.invariants import broken_invariants
from pbem.rules.phases.calamities import barbarians as B
from pbem.rules.phases.calamities.choosing import PickCities
from pbem.rules.ruleset.rulebook import ruleset_of

from .botplay import resolve_by_bots
from .casefile import position

DRAWS = Draws("barbarians")
FOUR = {"Egypt": {}, "Babylon": {}, "Assyria": {}, "Asia": {}}
# Thebes is the start area doing most damage; then Nubia and Ptolemais tie (1 token each).
TIE = {
    "Thebes": {"tokens": {"Egypt": 3}},
    "Nubia": {"tokens": {"Egypt": 1}},
    "Ptolemais": {"tokens": {"Egypt": 1}},
    "Eastern Desert": {"tokens": {"Egypt": 1}},
}


def case(areas=None, nations=None, giver="Babylon", players=4, **extra):
    out = {"players": players, "phase": "calamity-resolution", "nations": nations or FOUR, "areas": areas or TIE,
           "calamities": [["Barbarian Hordes", "Egypt", giver]]}
    out.update(extra)
    return out


def until(events):
    for i, e in enumerate(events):
        if e.type == "PhaseEnded":
            return events[: i + 1]
    return events


def game(**kw):
    state = position(case(**kw))
    events = until(E.resume(state, DRAWS))
    return E.fold(state, events), events


def parse(text, state, player_id):
    (line,) = parse_orders(text, state, Actor(player_id=player_id)).lines
    return line


def decide(state, text, player_id):
    events = E.decide(state, parse(text, state, player_id).command, DRAWS)
    return E.fold(state, until(events)), events


def player(state, nation):
    return state.nations[nation].player_id


# -- the tie question ---------------------------------------------------------------------------


def test_tie_prompt_states_situation_choices_and_default():
    state, events = game()
    assert [e.type for e in events] == ["BarbariansAppear"]
    (prompt,) = E.pending(state).values()
    assert prompt.who == "babylon" and prompt.step == "barbarian-route"
    assert prompt.choices == ("PICK Nubia", "PICK Ptolemais")
    assert prompt.template == "PICK Nubia"
    assert prompt.default == "the first by area name (PICK Nubia)"
    assert "10 Barbarians leave Thebes" in prompt.question and "each cost Egypt 1 unit point" in prompt.question
    assert "you traded the card" in prompt.question
    assert prompt.situation == (
        "Nubia (limit 1): Egypt 1; Egypt would lose 1 unit point.",
        "Ptolemais (limit 2): Egypt 1; Egypt would lose 1 unit point.",
    )
    assert "§30.5251" in prompt.cites


def test_untraded_tie_goes_to_the_top_of_the_beneficiary_ranking_without_the_victim():
    nations = {"Egypt": {}, "Babylon": {}, "Assyria": {}, "Asia": {}}
    areas = {**TIE, "Kuban": {"tokens": {"Asia": 1}}, "Susa": {"city": "Babylon"}}
    state, _ = game(areas=areas, nations=nations, giver="")
    (prompt,) = E.pending(state).values()
    # Babylon has a city on the board, Asia a token: Assyria has most in stock (D-1 seed), Egypt is left out.
    assert prompt.who == "assyria"
    assert "not traded and you rank first for beneficiary" in prompt.question


def test_every_choice_is_accepted_written_back_and_verified():
    state, _ = game()
    (prompt,) = E.pending(state).values()
    for choice in prompt.choices:
        line = parse(choice, state, prompt.player_id)
        assert not line.error and isinstance(line.command, PickCities)
        events = E.decide(state, line.command, DRAWS)
        assert events[0].type == "BarbarianRouteChosen" and E.is_input(events[0])
        assert E.decide(state, E.command_for(state, events[0]), DRAWS) == events
    assert parse("pick ptolemais", state, prompt.player_id).command == PickCities(prompt.player_id, ("Ptolemais",))


def test_refusals_name_the_reason():
    state, _ = game()
    refusals = {
        ("PICK Nubia", "Egypt"): "Babylon chooses where the Barbarians go",
        ("PICK Buhen", "Babylon"): "Buhen: the Barbarians cannot go there now; choose Nubia or Ptolemais",
        ("PICK Nubia, Ptolemais", "Babylon"): "name one area for the Barbarians: Nubia or Ptolemais",
    }
    for (text, nation), reason in refusals.items():
        try:
            decide(state, text, player(state, nation))
        except Rejection as exc:
            assert reason in str(exc) and "§30.5251" in str(exc)
        else:
            raise AssertionError(f"{nation} {text} was accepted")


def test_deadline_takes_the_first_area_by_name_and_is_no_input():
    state, _ = game()
    events = E.decide(state, PassDeadline(), DRAWS)
    chosen = next(e for e in events if e.type == "BarbarianRouteChosen")
    assert chosen.data["area"] == "Nubia" and chosen.data["by_default"] and not E.is_input(chosen)
    assert describe_event(state, chosen, "player:egypt") == (
        "Barbarian Hordes (Egypt): Babylon sends the Barbarians to Nubia (by default) (tied: Nubia, Ptolemais).")
    moved = next(e for e in events if e.type == "BarbariansMove")
    assert moved.data["area"] == "Nubia" and moved.data["chooser"] == "Babylon"
    assert "§30.5251" in moved.cites


def test_placement_among_third_parties_only_when_unavoidable_is_a_tie():
    # Egypt has no units in its start areas, and each of them holds another player's units.
    areas = {"Buhen": {"tokens": {"Babylon": 1}}, "Nubia": {"tokens": {"Babylon": 1}}, "Siwa": {"tokens": {"Assyria": 1}},
             "Thebes": {"tokens": {"Asia": 1}}, "Upper Egypt": {"tokens": {"Asia": 1}}, "Memphis": {"city": "Egypt"}}
    state, events = game(areas=areas)
    assert events == []
    (prompt,) = E.pending(state).values()
    assert prompt.who == "babylon" and len(prompt.choices) == 5
    assert "none is free of other players' units" in prompt.question and "choose where they appear" in prompt.question
    state, events = decide(state, "PICK Siwa", player(state, "Babylon"))
    appear = next(e for e in events if e.type == "BarbariansAppear")
    assert appear.data["area"] == "Siwa" and appear.data["reason"] == "third-parties"
    assert appear.data["clash"]["lost"] == {"Assyria": {"points": 1, "tokens": 1, "left": 0, "city": False}}


# -- the rules themselves -----------------------------------------------------------------------


def test_supply_counts_the_sets_nobody_plays():
    state = position(case())
    assert B.supply(state) == 5 * 55  # nine sets, four players
    eight = position(case(players=8, areas={"Thebes": {"city": "Egypt"}, "Germania": {"tokens": {BARBARIANS: 5}}}))
    assert B.supply(eight) == 50


def test_damage_is_the_victims_unit_points_lost_there():
    state = position(case(areas={"Thebes": {"city": "Egypt"}, "Buhen": {"tokens": {"Egypt": 3, "Babylon": 0}},
                                 "Memphis": {"city": "Egypt", "tokens": {"Egypt": 1}}}))
    assert B.damage(state, "Thebes", 15, "Egypt") == 5      # the city, its 6 tokens all lost
    assert B.damage(state, "Thebes", 6, "Egypt") == 0       # too few to attack: the city stands
    assert B.damage(state, "Buhen", 15, "Egypt") == 3
    assert B.damage(state, "Buhen", 1, "Egypt") == 0        # 1 + 3 within the limit of 3: they co-exist
    assert B.damage(state, "Siwa", 15, "Egypt") == 0        # nothing of Egypt there
    clash = B.clash(state, "Memphis", 8, "Egypt")
    assert clash["fight"] == {"before": {BARBARIANS: 8, "Egypt": 1}, "after": {BARBARIANS: 8}}
    assert clash["attack"]["succeeded"] and clash["attack"]["placed"] == 6 and clash["city_after"] is None


def test_moves_cross_water_but_never_open_sea_and_stay_on_the_board():
    state = position(case())
    assert "Sinai" in B.neighbours(state, "Ptolemais")        # a water boundary
    assert "Sinai" not in ruleset_of(state).land_adjacency["Ptolemais"]
    assert all(a in ruleset_of(state).areas for a in B.neighbours(state, "Ptolemais"))  # land areas only
    assert "Jalo" not in B.neighbours(state, "Siwa")          # not on the four-player board
    pirates = position(case(areas={"Nubia": {"city": "Pirates"}}))
    assert "Nubia" not in B.neighbours(pirates, "Thebes")      # a pirate city's area is never entered


def test_narration_of_a_whole_march():
    areas = {"Thebes": {"city": "Egypt"}, "Ptolemais": {"tokens": {"Asia": 2}}, "Sinai": {"tokens": {"Egypt": 1}}}
    _, events = game(areas=areas)
    before = position(case(areas=areas))
    told = []
    for e in events:
        told.append(describe_event(before, e, "observer"))
        before = E.fold(before, [e])
    assert told[0].startswith("Barbarian Hordes (Egypt): 15 Barbarian tokens appear in Thebes, the start area where they do Egypt the most damage.")
    assert "the Barbarians attack Egypt's city with 15 (7 needed) and take it: it becomes 6 Egypt tokens, no trade card, no pillage" in told[0]
    assert "Egypt loses 5 unit points (its city)" in told[0]
    # 10 left in Thebes, 7 move: no neighbour holds Egypt; Ptolemais (Asia's) leads to Sinai.
    assert "7 Barbarians above the limit move from Thebes to Ptolemais, no neighbouring area lets them hurt Egypt" in told[1]
    assert "Asia loses 2 unit points (2 tokens)" in told[1]
    assert "across the water to Sinai" in told[2] and "Egypt loses 1 unit point (1 token)" in told[2]
    assert told[3].startswith("Barbarian Hordes (Egypt): the ") and "lost 6 unit points to them in all" in told[3]
    assert told[-2] == "Barbarian Hordes (Egypt) is resolved."


def test_crete_and_an_empty_supply_are_told():
    state = position({"players": 3, "phase": "calamity-resolution", "nations": {"Crete": {}, "Italy": {}, "Thrace": {}},
                      "areas": {"Knossos": {"city": "Crete"}}, "calamities": [["Barbarian Hordes", "Crete", ""]]})
    averted = E.resume(state, DRAWS)[0]
    assert describe_event(state, averted, "observer") == (
        "Barbarian Hordes (Crete): Crete can never be the primary victim of Barbarian Hordes (§30.527); nothing happens.")
    full = {a: {"tokens": {BARBARIANS: 5}} for a in ("Germania", "Danube", "Pannonia", "Moesia", "Babylonia", "Fayum",
                                                     "Alexandria", "Assyria", "Upper Egypt", "Dacia", "Armenia")}
    empty = position(case(players=8, areas={**full, "Thebes": {"city": "Egypt"}}))
    assert B.supply(empty) == 0
    averted = E.resume(empty, DRAWS)[0]
    assert averted.type == "BarbariansAverted" and "no Barbarian tokens are left" in describe_event(empty, averted, "observer")


# -- bots ---------------------------------------------------------------------------------------


LANDS = ["Thebes", "Buhen", "Nubia", "Siwa", "Upper Egypt", "Ptolemais", "Eastern Desert", "Fayum", "Memphis", "Tanis",
         "Alexandria", "Western Desert", "Sinai", "Gaza", "Cyrenaica", "Media", "Parthia", "Susa", "Elam", "Babylonia",
         "Kuban", "Mikop", "Caucasus", "Nalchik"]


def test_bots_always_finish_barbarian_hordes_with_invariants_holding():
    nations = ["Egypt", "Babylon", "Assyria", "Asia"]
    cards = ["Engineering", "Metalworking"]
    for seed in range(60):
        rng = random.Random(seed)
        areas = {}
        for land in LANDS:
            limit = 3 if land in ("Thebes", "Memphis", "Susa") else 2
            kind = rng.choice(["city", "tokens", "tokens", "shared", "empty", "empty"])
            if kind == "city":
                areas[land] = {"city": rng.choice(nations + ["Pirates"])}
            elif kind == "tokens":
                areas[land] = {"tokens": {rng.choice(nations + [BARBARIANS]): rng.randint(1, limit)}}
            elif kind == "shared":
                a, b = rng.sample(nations, 2)
                areas[land] = {"tokens": {a: 1, b: 1}}
        spec = {n: {"civ_cards": [c for c in cards if rng.random() < 0.3]} for n in nations}
        victim = rng.choice(nations)
        giver = rng.choice([""] + [n for n in nations if n != victim])
        c = {"players": 4, "phase": "calamity-resolution", "nations": spec, "areas": areas,
             "calamities": [["Barbarian Hordes", victim, giver]], "options": {"beneficiary-rule": rng.choice(["seed", "1991"])}}
        state = position(c)
        state = E.fold(state, until(E.resume(state, DRAWS)))
        state = resolve_by_bots(state, rng, DRAWS, f"seed {seed}", steps=60,
                                check_prompt=lambda p: assert_route_prompt(p))
        assert not broken_invariants(state), f"seed {seed}: {broken_invariants(state)}"
        rules = ruleset_of(state)
        for name, area in state.areas.items():  # §30.5232: no Barbarians above a limit once they stop
            if name in rules.areas:
                assert area.tokens.get(BARBARIANS, 0) <= max(rules.areas[name].population_limit, areas.get(name, {}).get("tokens", {}).get(BARBARIANS, 0)), f"seed {seed}: {name}"
        assert "barbarians" not in state.filed and "barbarian-route" not in state.filed


def assert_route_prompt(prompt) -> None:
    assert prompt.step == "barbarian-route" and 2 <= len(prompt.choices) <= 60

"""Phase 5 (seed 001: 5A-5C, §25, §26): orders, prompts, defaults, D-6, D-7, narration, verify."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.board.support import (
    ReduceCity,
    reduction_candidates,
    support_shortfall,
    surplus,
)
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import FrozenMap
from pbem.rules.core.rejection import Rejection
from pbem.rules.engine import describe_event
from pbem.rules.phases.cities.construction import AS_NEEDED, BuildCities, FinishOrders
from pbem.rules.ruleset.loader import PACKAGED_DATA

from .casefile import position, within_phase

DRAWS = Draws("cities")


def game(areas, nations=None, **extra):
    case = {"players": 6, "phase": "city-construction", "nations": nations or {"Egypt": {}, "Babylon": {}}, "areas": areas}
    case.update(extra)
    state = position(case)
    return E.fold(state, here(E.resume(state, DRAWS)))


def parse(text, state, player_id=1):
    (line,) = parse_orders(text, state, Actor(player_id=player_id)).lines
    return line


def here(events):
    """Only the events of phase 5: after it the engine goes on to phase 6, which these tests are not about."""
    return within_phase("city-construction", events)


def decide(state, text, player_id=1):
    events = here(E.decide(state, parse(text, state, player_id).command, DRAWS))
    return E.fold(state, events), events


SUPPORT = {"Sinai": {"tokens": {"Egypt": 1}}, "Gaza": {"tokens": {"Egypt": 1}},
           "Eastern Desert": {"tokens": {"Egypt": 1}}, "Sidon": {"tokens": {"Egypt": 1}}}


# -- the order language ------------------------------------------------------------------------


def test_build_done_and_reduce_are_read_forgivingly():
    state = game({"Thebes": {"tokens": {"Egypt": 6}}})
    assert parse("BUILD Thebes, Upper Egypt", state).command == BuildCities(1, (("Thebes", 0), ("Upper Egypt", 0)))
    assert parse("bui thebes memphis", state).command == BuildCities(1, (("Thebes", 0), ("Memphis", 0)))
    line = parse("build Thebes treasury 2, Memphis", state)
    assert line.command == BuildCities(1, (("Thebes", 2), ("Memphis", 0)))
    assert line.canonical == "BUILD Thebes TREASURY 2, Memphis"
    line = parse("BUILD Upper Egypt TREASURY", state)
    assert line.command == BuildCities(1, (("Upper Egypt", AS_NEEDED),))
    assert line.canonical == "BUILD Upper Egypt TREASURY"
    assert parse("BUILD Thebes T 3", state).command == BuildCities(1, (("Thebes", 3),))
    assert parse("done", state).command == FinishOrders(1) and parse("Done.", state).canonical == "DONE"
    assert parse("DONE Thebes", state).error
    assert parse("BUILD", state).error
    assert parse("red thebes", state).command == ReduceCity(1, "Thebes")
    assert parse("REDUCE Thebes", state).canonical == "REDUCE Thebes"


# -- prompts and defaults ------------------------------------------------------------------------


def test_the_build_prompt_offers_complete_answers_that_all_work():
    state = game(
        {"Thebes": {"tokens": {"Egypt": 6}}, "Memphis": {"tokens": {"Egypt": 4}}, **SUPPORT},
        {"Egypt": {"treasury": 5, "civ_cards": ["Architecture"]}, "Babylon": {}},
    )
    prompt = E.pending(state)["egypt"]
    assert prompt.step == "build-cities" and prompt.default == "no city is built"
    assert prompt.choices == ("BUILD Thebes, Memphis TREASURY 2", "BUILD Memphis TREASURY 2", "BUILD Thebes", "DONE")
    assert prompt.template == "BUILD Thebes"
    assert any("Memphis (4 tokens, 2 from treasury)" in line for line in prompt.situation)
    for choice in prompt.choices:
        after, _ = decide(state, choice)
        assert after.phase != "city-construction" or after.step == "ended"


def test_a_missed_deadline_builds_nothing_and_says_so():
    state = game({"Thebes": {"tokens": {"Egypt": 6}}, **SUPPORT})
    events = here(E.decide(state, PassDeadline(), DRAWS))
    done = next(e for e in events if e.type == "CityOrdersDone")
    assert done.data == {"nation": "Egypt", "by_default": True}
    assert describe_event(state, done) == "Egypt has completed its city orders (deadline passed: no city)."
    assert E.fold(state, events).area("Thebes").city is None


def test_done_from_a_player_with_nothing_to_build_is_refused():
    state = game({"Thebes": {"tokens": {"Egypt": 6}}, "Susa": {"tokens": {"Babylon": 2}}})
    with pytest.raises(Rejection) as err:
        here(E.decide(state, FinishOrders(2), DRAWS))
    assert "nothing is asked of you" in str(err.value)


def test_a_second_build_line_adds_while_others_are_still_to_file():
    state = game({"Thebes": {"tokens": {"Egypt": 6}}, "Memphis": {"tokens": {"Egypt": 6}}, "Susa": {"tokens": {"Babylon": 6}}, **SUPPORT})
    state, _ = decide(state, "BUILD Thebes")
    assert set(E.pending(state)) == {"babylon"}
    state, _ = decide(state, "BUILD Memphis")
    with pytest.raises(Rejection):
        decide(state, "BUILD Memphis")
    state, _ = decide(state, "DONE", player_id=2)
    assert state.area("Thebes").city == state.area("Memphis").city == "Egypt"


def test_reduce_prompt_default_and_refusal():
    state = game(
        {"Thebes": {"city": "Egypt"}, "Memphis": {"city": "Egypt"}, "Sinai": {"tokens": {"Egypt": 1}}},
    )
    prompt = E.pending(state)["egypt"]
    assert prompt.step == "reduce-city"
    assert prompt.choices == ("REDUCE Memphis", "REDUCE Thebes")
    assert prompt.default.startswith("reduce Memphis")
    with pytest.raises(Rejection) as err:
        decide(state, "REDUCE Sinai")
    assert "not a city of yours" in str(err.value)
    with pytest.raises(Rejection):
        decide(state, "REDUCE Memphis", player_id=2)
    events = here(E.decide(state, PassDeadline(), DRAWS))
    chosen = next(e for e in events if e.type == "CityReductionChosen")
    assert chosen.data == {"nation": "Egypt", "area": "Memphis", "tokens": 3, "due": 3, "by_default": True}
    assert describe_event(state, chosen) == "Egypt could not support its cities; Memphis was reduced to 3 tokens (by default)."


def test_an_empty_stock_with_every_city_lost_asks_nothing():
    state = position(
        {"players": 6, "phase": "city-construction", "nations": {"Egypt": {"stock": 0}},
         "areas": {"Thebes": {"city": "Egypt"}, "Memphis": {"city": "Egypt"}}}
    )
    events = here(E.resume(state, DRAWS))
    after = E.fold(state, events)
    assert [e.type for e in events][:4] == ["CityOrdersRevealed", "CityReduced", "CityReduced", "PhaseEnded"]
    assert describe_event(state, events[0]) is None  # nobody was asked: nothing to tell
    assert after.cities_on_board("Egypt") == 0 and after.nations["Egypt"].stock == 0
    assert describe_event(state, events[1]) == "Egypt could not support its cities; Memphis was eliminated: no tokens left in stock."


# -- D-6 and D-7 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value, allowed", [("seed", ["X"]), ("1991", ["X", "Y"])])
def test_d6_reduction_order_as_stated(value, allowed):
    """Test D-6: X built in 5a this turn, Y gained by Treachery in phase 9, Z held since an earlier turn."""
    state = position(
        {"players": 6, "phase": "surplus-removal", "nations": {"Crete": {}}, "options": {"support-reduction-order": value},
         "areas": {"Knossos": {"city": "Crete"}, "Phaestos": {"city": "Crete"}, "Cyrene": {"city": "Crete"}}}
    )
    state = replace(state, built_this_turn=("Knossos",), gained_this_turn=("Phaestos",))
    names = {"Knossos": "X", "Phaestos": "Y", "Cyrene": "Z"}
    assert [names[a] for a in reduction_candidates(state, "Crete")] == allowed


def test_a_city_that_revolts_counts_as_gained_this_turn_until_the_next_turn():
    state = position({"players": 6, "phase": "tax-collection", "nations": {"Crete": {}, "Egypt": {}},
                      "areas": {"Thebes": {"city": "Egypt"}}})
    state = replace(state, filed=FrozenMap({"revolts": (("Egypt", 1),)}), step="revolts")
    state = E.apply(state, Event("CitiesRevolted", {"victim": "Egypt", "beneficiary": "Crete", "areas": ["Thebes"]}))
    assert state.gained_this_turn == ("Thebes",)
    state = E.apply(state, Event("PhaseBegan", {"turn": 1, "phase": "population-expansion"}))
    assert state.gained_this_turn == ("Thebes",)
    state = E.apply(state, Event("PhaseBegan", {"turn": 2, "phase": "tax-collection"}))
    assert state.gained_this_turn == ()


@pytest.fixture
def zero_limit_map(tmp_path):
    """A house map where Sinai (no city site) has population limit 0."""
    folder = tmp_path / "advciv"
    shutil.copytree(PACKAGED_DATA, folder)
    areas = folder / "areas.csv"
    lines = areas.read_text(encoding="utf-8").splitlines()
    lines = [("Sinai,main,0," + line.split(",", 3)[3]) if line.startswith("Sinai,") else line for line in lines]
    areas.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(folder)


@pytest.mark.parametrize("value", ["seed", "1991"])
def test_d7_zero_limit_area(zero_limit_map, value):
    """Test D-7 (synthetic map): 12 tokens of one player, with Agriculture, in a limit-0 area without a site."""
    options = {"ruleset-data": zero_limit_map, "zero-limit-city-ban": value}
    state = game(
        {"Sinai": {"tokens": {"Egypt": 12}}, "Thebes": {"tokens": {"Egypt": 6}}, "Gaza": {"tokens": {"Egypt": 1}},
         "Memphis": {"tokens": {"Egypt": 3}}},
        {"Egypt": {"civ_cards": ["Agriculture"]}},
        options=options,
    )
    assert "egypt" in E.pending(state)
    if value == "seed":
        with pytest.raises(Rejection) as err:
            decide(state, "BUILD Sinai")
        assert err.value.cite == "D-7" and "population limit 0" in str(err.value)
        assert "BUILD Sinai" not in E.pending(state)["egypt"].choices
    else:
        assert "BUILD Sinai" in E.pending(state)["egypt"].choices
        after, _ = decide(state, "BUILD Sinai")
        assert after.area("Sinai").city == "Egypt" and after.area("Sinai").tokens == {}


# -- verify and narration ------------------------------------------------------------------------


def test_verify_re_decides_every_order_of_the_phase():
    state = game(
        {"Thebes": {"tokens": {"Egypt": 4}}, "Susa": {"tokens": {"Babylon": 6}}, "Babylon": {"tokens": {"Babylon": 6}}, **SUPPORT},
        {"Egypt": {"treasury": 5, "civ_cards": ["Architecture"]}, "Babylon": {}},
    )
    for text, pid in (("BUILD Thebes TREASURY", 1), ("BUILD Susa, Babylon", 2), ("REDUCE Susa", 2)):
        before = state
        state, events = decide(state, text, pid)
        order = events[0]
        assert E.is_input(order)
        assert here(E.decide(before, E.command_for(before, order), DRAWS)) == events
    assert state.nations["Egypt"].treasury == 3
    assert state.area("Susa").tokens == {"Babylon": 3} and state.area("Babylon").city == "Babylon"


def test_city_orders_stay_secret_until_revealed():
    state = game({"Thebes": {"tokens": {"Egypt": 6}}, "Susa": {"tokens": {"Babylon": 6}}, **SUPPORT})
    _, events = decide(state, "BUILD Thebes")
    order = events[0]
    assert describe_event(state, order, "player:babylon") == "Egypt has given its city orders."
    assert describe_event(state, order, "observer") == "Egypt has given its city orders."
    assert describe_event(state, order, "player:egypt") == "Egypt orders: BUILD Thebes."
    assert describe_event(state, order, "auditor") == "Egypt orders: BUILD Thebes."


def test_narration_of_the_outcomes():
    state = game(
        {"Thebes": {"tokens": {"Egypt": 6}}, "Memphis": {"tokens": {"Egypt": 5}}, **SUPPORT},
        {"Egypt": {"treasury": 5, "civ_cards": ["Architecture"]}},
    )
    state, events = decide(state, "BUILD Thebes, Memphis TREASURY 1")
    told = {e.type: describe_event(state, e) for e in events}
    assert told["CityOrdersRevealed"] == "City orders are in: Egypt builds in Thebes, Memphis."
    assert told["CitiesBuilt"] == "Egypt built 2 cities: Thebes, Memphis, 1 tokens from treasury (Architecture)."
    removed = Event("SurplusRemoved", {"nation": "Egypt", "removed": {"Gaza": 1, "Sinai": 2}})
    assert describe_event(state, removed) == "Egypt removed 3 surplus tokens: Gaza 1, Sinai 2."
    reduced = Event("CityReduced", {"nation": "Egypt", "area": "Thebes", "tokens": 1, "due": 3})
    assert describe_event(state, reduced) == "Egypt could not support its cities; Thebes was reduced to 1 tokens (stock short: 3 due)."
    nobody = Event("CityOrdersRevealed", {"builds": {}, "asked": ["Egypt"]})
    assert describe_event(state, nobody) == "City orders are in: nobody builds a city."


# -- any position: every choice is accepted and the phase leaves a legal board ------------------

LANDS = {"Egypt": ["Thebes", "Memphis", "Upper Egypt", "Sinai", "Gaza", "Damascus", "Buhen"],
         "Babylon": ["Susa", "Media", "Babylon", "Ur", "Niniveh", "Parthia"]}


@st.composite
def positions(draw):
    areas = {}
    nations = {}
    for nation, lands in LANDS.items():
        cards = draw(st.lists(st.sampled_from(["Agriculture", "Architecture"]), unique=True))
        nations[nation] = {"civ_cards": cards, "treasury": draw(st.integers(0, 8))}
        for land in lands:
            kind = draw(st.sampled_from(["empty", "tokens", "city"]))
            if kind == "tokens":
                areas[land] = {"tokens": {nation: draw(st.integers(1, 13))}}
            elif kind == "city":
                areas[land] = {"city": nation}
        on_board = sum(a.get("tokens", {}).get(nation, 0) for a in areas.values())
        nations[nation]["stock"] = draw(st.integers(0, max(0, 55 - on_board - nations[nation]["treasury"])))
    built = [a for a, spec in areas.items() if spec.get("city") and draw(st.booleans())]
    return {"players": 6, "phase": "city-construction", "nations": nations, "areas": areas, "built_this_turn": built}


@settings(max_examples=150, deadline=None)
@given(case=positions(), picks=st.randoms(use_true_random=False), miss=st.sampled_from([0.0, 0.5]))
def test_any_position_resolves_to_a_legal_board(case, picks, miss):
    """Bots answer every prompt with one of its choices (or miss the deadline): the phase ends, tokens
    are conserved, and every nation is left without surplus and with its cities supported."""
    state = position(case)
    state = E.fold(state, here(E.resume(state, DRAWS)))
    total = {n: state.nations[n].stock + state.tokens_on_board(n) + state.nations[n].treasury for n in state.nations}
    for _ in range(200):
        prompts = E.pending(state)
        if not prompts:
            break
        prompt = prompts[min(prompts)]
        if picks.random() < miss:
            events = here(E.decide(state, PassDeadline(), DRAWS))
        else:
            events = []
            for line in parse_orders(picks.choice(prompt.choices), state, Actor(player_id=prompt.player_id)).lines:
                assert line.command is not None, line.error
                events += here(E.decide(E.fold(state, events), line.command, DRAWS))
        state = E.fold(state, events)
    assert state.phase != "city-construction" or state.step == "ended"
    for n in state.nations:
        assert state.nations[n].stock + state.tokens_on_board(n) + state.nations[n].treasury == total[n]
        assert state.nations[n].stock >= 0 and state.nations[n].treasury >= 0
        assert state.cities_on_board(n) <= 9
        assert support_shortfall(state, n) == 0  # 5C: reduced (or eliminated) until supported
        assert surplus(state, n) == {}  # 5B: nothing above a limit, nothing in a city area

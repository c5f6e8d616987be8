"""Phase 4 (conflict): the order language of ORDER / DEFER / DRAW / PILLAGE / SPOILS, prompts, defaults, narration.

The rules themselves are checked by the case files in tests/rules/cases/conflict/.
"""

from __future__ import annotations

import copy

import pytest

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.board.battle import removal_steps
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.engine import describe_event
from pbem.rules.invariants import broken_invariants
from pbem.rules.phases.conflict.attacks import (
    ChooseCityOrder,
    ChooseDeferral,
    ChooseSpoils,
)

from .casefile import play, position


def _case(areas, nations, players=3, options=None, orders=()):
    return copy.deepcopy({
        "title": "unit", "cites": ["unit"], "players": players, "phase": "conflict",
        "options": options or {}, "nations": nations, "areas": areas, "orders": list(orders),
    })


def _events(outcome, type_):
    return [e for e in outcome.events if e.type == type_]


# -- the order language ----------------------------------------------------------------------------------


@pytest.fixture
def state():
    return position(_case({"Roma": {"city": "Italy"}}, {"Italy": {"stock": 20}, "Crete": {"stock": 20}}))


@pytest.mark.parametrize(
    "text, command, canonical",
    [
        ("ORDER Roma, Carthago", ChooseCityOrder(1, ("Roma", "Carthago")), "ORDER Roma, Carthago"),
        ("ord roma carthago", ChooseCityOrder(1, ("Roma", "Carthago")), "ORDER Roma, Carthago"),
        ("DEFER Thapsus", ChooseDeferral(1, "Thapsus"), "DEFER Thapsus"),
        ("def no", ChooseDeferral(1, None), "DEFER no"),
        ("DRAW yes", ChooseSpoils(1, draw=True), "DRAW yes"),
        ("draw n", ChooseSpoils(1, draw=False), "DRAW no"),
        ("DRAW", ChooseSpoils(1, draw=True), "DRAW yes"),
        ("PILLAGE 2", ChooseSpoils(1, pillage=2), "PILLAGE 2"),
        ("pil 0", ChooseSpoils(1, pillage=0), "PILLAGE 0"),
        ("SPOILS yes 3", ChooseSpoils(1, True, 3), "SPOILS yes 3"),
        ("spo no, 1", ChooseSpoils(1, False, 1), "SPOILS no 1"),
    ],
)
def test_conflict_verbs_read_short_forms(state, text, command, canonical):
    (line,) = parse_orders(text, state, Actor(player_id=1)).lines
    assert line.error is None, line.error
    assert line.command == command
    assert line.canonical == canonical


@pytest.mark.parametrize(
    "text, reason",
    [
        ("DRAW maybe", "yes or no"),
        ("PILLAGE two", "not a number"),
        ("SPOILS yes", "SPOILS <yes|no>"),
        ("ORDER", "name your attacked cities"),
        ("DEFER Atlantis", "Atlantis"),
    ],
)
def test_conflict_verbs_explain_bad_lines(state, text, reason):
    (line,) = parse_orders(text, state, Actor(player_id=1)).lines
    assert line.command is None and reason in line.error


def test_three_letter_prefixes_are_unique(state):
    for text, verb in (("pil 1", ChooseSpoils), ("dra yes", ChooseSpoils), ("def no", ChooseDeferral),
                       ("ord roma", ChooseCityOrder), ("spo yes 1", ChooseSpoils)):
        (line,) = parse_orders(text, state, Actor(player_id=1)).lines
        assert isinstance(line.command, verb), (text, line.error)


# -- the removal procedure -----------------------------------------------------------------------------------


def test_removal_steps_r31b():
    steps = removal_steps({"Italy": 1, "Crete": 3, "Thrace": 4}, 2, set())
    assert steps == [["Italy"], ["Crete"], ["Thrace"], ["Crete"], ["Thrace"], ["Crete"]]


def test_removal_steps_equal_counts_together_and_city_needs_one_party():
    assert removal_steps({"Italy": 1, "Crete": 1}, 1, set()) == [["Crete", "Italy"]]
    # In a city area only "one party left" ends the conflict, however small the total.
    assert removal_steps({"Italy": 2, "Crete": 1}, None, set()) == [["Crete"]]
    assert removal_steps({"Italy": 1, "Crete": 1}, None, set()) == [["Crete", "Italy"]]


def test_removal_steps_metalworking_after_non_holders():
    assert removal_steps({"Italy": 2, "Crete": 3}, 2, {"Italy"}) == [["Crete"], ["Italy"], ["Crete"]]


# -- order of attacks (D-18, Q-S12) ---------------------------------------------------------------------------


def test_pirate_cities_first_by_attacker_rank_then_defenders_by_rank():
    case = _case(
        {
            "Athens": {"city": "Pirates", "tokens": {"Crete": 7}},
            "Roma": {"city": "Pirates", "tokens": {"Italy": 7}},
            "Carthago": {"city": "Africa", "tokens": {"Crete": 7}},
            "Thapsus": {"city": "Thrace", "tokens": {"Italy": 7}},
            "Corinth": {"city": "Italy", "tokens": {"Crete": 7}},
        },
        {"Africa": {"stock": 20}, "Italy": {"stock": 20}, "Thrace": {"stock": 20}, "Crete": {"stock": 20}},
    )
    (found,) = _events(play(case), "CityAttacksFound")
    assert [a[0] for a in found.data["attacks"]] == ["Roma", "Athens", "Carthago", "Corinth", "Thapsus"]


def test_defender_order_by_ast_rank_not_area_name():
    case = _case(
        {"Athens": {"city": "Thrace", "tokens": {"Crete": 7}}, "Roma": {"city": "Italy", "tokens": {"Crete": 7}}},
        {"Italy": {"stock": 20}, "Thrace": {"stock": 20}, "Crete": {"stock": 0}},
    )
    (found,) = _events(play(case), "CityAttacksFound")
    assert [a[0] for a in found.data["attacks"]] == ["Roma", "Athens"]


# -- prompts: every choice is a complete, legal order; defaults are stated ------------------------------------


def _prompted(case):
    outcome = play(case)
    prompts = E.pending(outcome.state)
    assert len(prompts) == 1
    return outcome.state, next(iter(prompts.values()))


D3_POSITION = (
    {
        "Carthago": {"city": "Africa", "tokens": {"Babylon": 7}},
        "Thapsus": {"city": "Africa", "tokens": {"Babylon": 7}},
        "Thebes": {"city": "Egypt", "tokens": {"Africa": 3}},
        "Niniveh": {"city": "Assyria", "tokens": {"Africa": 3}},
    },
    {"Africa": {"stock": 0}, "Babylon": {"stock": 20}, "Egypt": {"stock": 20, "hand": ["Salt"]}, "Assyria": {"stock": 20}},
)


@pytest.mark.parametrize(
    "case, step",
    [
        (_case(*D3_POSITION, players=8), "city-order"),
        (_case(*D3_POSITION, players=8, orders=[{"nation": "Africa", "text": "ORDER Carthago"}]), "city-defer"),
        (_case({"Thebes": {"city": "Egypt", "tokens": {"Italy": 7}}},
               {"Italy": {"stock": 20}, "Egypt": {"stock": 20, "hand": ["Salt", "Oil"]}}, players=8), "city-spoils"),
        (_case({"Thebes": {"city": "Egypt", "tokens": {"Italy": 7}}},
               {"Italy": {"stock": 20}, "Egypt": {"stock": 20, "hand": ["Salt", "Oil"]}}, players=8,
               options={"city-capture-spoils": "1991"}), "city-spoils"),
        (_case({"Carthago": {"city": "Pirates", "tokens": {"Italy": 7}}}, {"Italy": {"stock": 20}}), "city-spoils"),
    ],
)
def test_every_choice_is_a_legal_complete_order(case, step):
    state, prompt = _prompted(case)
    assert prompt.step == step
    assert prompt.default and prompt.template and prompt.question
    assert 0 < len(prompt.choices) <= 60
    nation = next(n for n, ns in state.nations.items() if ns.player_id == prompt.player_id)
    for choice in (*prompt.choices, prompt.template):
        parsed = parse_orders(choice, state, Actor(player_id=prompt.player_id))
        assert not parsed.errors, (choice, parsed.errors)
        events = E.decide(state, parsed.commands[0][1], Draws("case"))
        assert events and events[0].type in ("CityOrderChosen", "DeferralChosen", "SpoilsChosen"), choice
        assert events[0].data.get("defender", events[0].data.get("attacker")) == nation


def test_spoils_prompt_asks_only_what_is_left():
    case = _case({"Thebes": {"city": "Egypt", "tokens": {"Italy": 7}}},
                 {"Italy": {"stock": 20}, "Egypt": {"stock": 20, "hand": ["Salt"]}}, players=8,
                 orders=[{"nation": "Italy", "text": "DRAW yes"}])
    _, prompt = _prompted(case)
    assert prompt.choices == ("PILLAGE 3", "PILLAGE 2", "PILLAGE 1", "PILLAGE 0")
    assert prompt.default == "pillage 3"


def test_defaults_are_what_the_prompt_says():
    case = _case(*D3_POSITION, players=8)
    state, prompt = _prompted(case)
    assert prompt.default == "by area name (Carthago, Thapsus)"
    events = E.decide(state, PassDeadline(), Draws("case"))
    order = next(e for e in events if e.type == "CityOrderChosen")
    assert order.data == {"defender": "Africa", "areas": ["Carthago", "Thapsus"], "by_default": True}
    state = E.fold(state, events)
    prompt = E.pending(state)["africa"]
    assert prompt.step == "city-defer" and prompt.default == "defer to your first pending attack, in Niniveh"
    assert prompt.choices == ("DEFER Niniveh", "DEFER Thebes", "DEFER no")
    events = E.decide(state, PassDeadline(), Draws("case"))
    defer = next(e for e in events if e.type == "DeferralChosen")
    assert defer.data["area"] == "Niniveh" and defer.data["by_default"]


def test_declining_the_deferral_keeps_it_for_a_later_city():
    case = _case(*D3_POSITION, players=8, orders=[
        {"nation": "Africa", "text": "ORDER Carthago"},
        {"nation": "Africa", "text": "DEFER no"},
        {"nation": "Babylon", "text": "PILLAGE 0"},
    ])
    outcome = play(case)
    assert not outcome.rejections
    prompt = E.pending(outcome.state)["africa"]
    assert prompt.step == "city-defer" and "Thapsus" in prompt.question


def test_no_deferral_without_a_pending_attack_of_ones_own():
    case = _case({"Roma": {"city": "Italy", "tokens": {"Crete": 7}}}, {"Italy": {"stock": 0}, "Crete": {"stock": 20}})
    _, prompt = _prompted(case)
    assert prompt.step == "city-spoils" and prompt.who == "crete"


def test_orders_out_of_turn_are_refused():
    case = _case(*D3_POSITION, players=8, orders=[
        {"nation": "Babylon", "text": "ORDER Carthago"},
        {"nation": "Africa", "text": "PILLAGE 1"},
        {"nation": "Africa", "text": "DEFER Thebes"},
    ])
    outcome = play(case)
    assert len(outcome.rejections) == 3
    assert "no order of attacked cities is asked of you now" in outcome.rejections[0]


# -- narration: the card taken as spoils is named only to those who may know it (Q-S20) -------------------------


def test_spoils_card_is_named_only_to_attacker_defender_moderator_auditor():
    case = _case({"Thebes": {"city": "Egypt", "tokens": {"Italy": 7}}},
                 {"Italy": {"stock": 20}, "Egypt": {"stock": 20, "hand": ["Salt"]}, "Crete": {"stock": 20}}, players=8,
                 orders=[{"nation": "Italy", "text": "SPOILS yes 2"}])
    outcome = play(case)
    (taken,) = _events(outcome, "SpoilsTaken")
    assert taken.data["card"] == "Salt" and taken.data["pillage"] == 2
    before = position(case)
    for viewer in ("player:italy", "player:egypt", "moderator", "auditor"):
        assert "Salt" in describe_event(before, taken, viewer)
    for viewer in ("player:crete", "observer"):
        text = describe_event(before, taken, viewer)
        assert "Salt" not in text and "took a trade card at random from Egypt's hand" in text
        assert "pillaged 2" in text
    assert outcome.state.nations["Italy"].hand == ("Salt",) and outcome.state.nations["Egypt"].hand == ()


def test_every_conflict_event_has_a_sentence():
    from pbem.rules.phases.conflict import RULES

    case = _case(*D3_POSITION, players=8, options={"pirate-city-attack": "1991"})
    case["areas"]["Knossos"] = {"city": "Pirates", "tokens": {"Italy": 7}}
    case["areas"]["Thessaly"] = {"tokens": {"Italy": 1, "Thrace": 2}}
    case["nations"].update({"Italy": {"stock": 20}, "Thrace": {"stock": 20}})
    seen = set()
    state = position(case)
    log = E.resume(state, Draws("case"))
    for _ in range(20):
        for event in log:
            if event.type in RULES.narrate:
                seen.add(event.type)
                assert describe_event(state, event, "observer"), event
            state = E.apply(state, event)
        for nation, n in state.nations.items():
            start = position(case).nations[nation]
            assert n.stock + n.treasury + state.tokens_on_board(nation) == start.stock + start.treasury + position(case).tokens_on_board(nation)
        assert not [p for p in broken_invariants(state) if "!=" not in p]  # the allotment check does not fit this position
        if not E.pending(state):
            break
        log = E.decide(state, PassDeadline(), Draws("case"))
    assert {"TokenConflictResolved", "CityAttacksFound", "CityOrderChosen", "CityAttackSucceeded", "DeferralChosen",
            "CityAttackFailed", "CityReplaced", "BarbariansRemoved", "SpoilsChosen", "SpoilsTaken"} <= seen


# -- verify: every order event re-decides to the same events ------------------------------------------------------


def test_order_events_re_decide_identically():
    case = _case(*D3_POSITION, players=8, orders=[
        {"nation": "Africa", "text": "ORDER Thapsus"},
        {"nation": "Africa", "text": "DEFER Thebes"},
        {"nation": "Babylon", "text": "PILLAGE 1"},
    ])
    outcome = play(case)
    assert not outcome.rejections
    log: list[Event] = outcome.events
    state = position(case)
    checked = 0
    for event in log:
        if E.is_input(event):
            command = E.command_for(state, event)
            again = E.decide(state, command, Draws("case"))
            assert again[0] == event
            checked += 1
        state = E.apply(state, event)
    assert checked == 3


# -- mutual attacks terminate (D-3 both values) ------------------------------------------------------------------


@pytest.mark.parametrize("value", ["seed", "1991"])
def test_two_short_players_attacking_each_other(value):
    case = _case(
        {"Carthago": {"city": "Africa", "tokens": {"Egypt": 7}}, "Thebes": {"city": "Egypt", "tokens": {"Africa": 7}}},
        {"Africa": {"stock": 0}, "Egypt": {"stock": 0}}, players=8,
        options={"city-defender-deferral": value}, orders=[{"deadline": True}] if value == "seed" else [],
    )
    outcome = play(case)
    assert outcome.state.step == "ended"
    assert outcome.state.cities_on_board("Africa") == 0 and outcome.state.cities_on_board("Egypt") == 0
    replaced = [e.data["area"] for e in _events(outcome, "CityReplaced")]
    if value == "1991":
        # The city that came up first (Africa's, rank 1) is replaced without waiting for Africa's attack on Thebes.
        assert replaced == ["Carthago", "Thebes"]
        assert not _events(outcome, "AttacksResolvedFirst")
    else:
        # Africa defers (by default) to its attack on Thebes; Egypt cannot defer to the attack already under way.
        assert replaced == ["Thebes", "Carthago"]
        assert [e.data["area"] for e in _events(outcome, "DeferralChosen")] == ["Thebes"]


def test_state_mid_phase_survives_snapshot_and_log_replay():
    from pbem.rules.core.codec import state_from_json, state_to_json

    case = _case(*D3_POSITION, players=8, orders=[{"nation": "Africa", "text": "ORDER Carthago"}])
    outcome = play(case)
    assert state_from_json(state_to_json(outcome.state)) == outcome.state
    state = position(case)
    for event in outcome.events:
        state = E.apply(state, Event.from_payload(event.type, event.payload()))
    assert state == outcome.state

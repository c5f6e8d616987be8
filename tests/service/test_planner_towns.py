"""The planner under Small Cities: towns only where they become a city, or save tokens surplus removal would take.

Each case is a position in phase 5 (tests/rules/casefile.py); the planner
answers the prompt a player would be sent, and its order goes through the
order language and the engine as mail does.
"""

from __future__ import annotations

from rules.casefile import position

from pbem.service.bots.movement import supported_after_building
from pbem.service.bots.towns import town_plan

from .phase_five import planner_builds

SMALL = {"variant-small-cities": "on"}


def _case(areas: dict, **egypt) -> dict:
    return {"nations": {"Egypt": egypt, "Crete": {}}, "phase": "city-construction", "options": SMALL,
            "areas": {"Knossos": {"tokens": {"Crete": 1}}, **areas}}


def _answer(case: dict) -> tuple[str, object]:
    """The planner's answer to Egypt's phase-5 prompt, and the game once it is carried out."""
    return planner_builds(case)[1:]


def test_four_towns_and_two_tokens_on_a_site_become_a_city():
    text, state = _answer(_case({"Thebes": {"towns": {"Egypt": 4}, "tokens": {"Egypt": 2}},
                                 "Upper Egypt": {"tokens": {"Egypt": 4}}}))
    assert text == "TOWN Thebes 2\nDONE"
    assert state.area("Thebes").city == "Egypt" and not state.area("Thebes").towns.get("Egypt")


def test_six_tokens_on_a_site_build_a_city_the_ordinary_way():
    text, state = _answer(_case({"Memphis": {"tokens": {"Egypt": 6}}, "Upper Egypt": {"tokens": {"Egypt": 4}}}))
    assert text == "BUILD Memphis\nDONE"
    assert state.area("Memphis").city == "Egypt"


def test_tokens_above_the_limit_of_a_site_are_banked_as_towns():
    """Memphis holds 3; two of five would go as surplus. As towns all five stay, one token supports the excess."""
    text, state = _answer(_case({"Memphis": {"tokens": {"Egypt": 5}}, "Upper Egypt": {"tokens": {"Egypt": 4}}}))
    assert text == "TOWN Memphis 5\nDONE"
    assert state.area("Memphis").towns.get("Egypt") == 5


def test_no_towns_that_the_nation_could_not_support():
    """Five towns where three are allowed need one token elsewhere (SC-6); with none there, the tokens stay tokens."""
    state = position(_case({"Memphis": {"tokens": {"Egypt": 5}}}))
    assert town_plan(state, "Egypt") == ([], {})


def test_no_towns_below_the_limit_where_tokens_still_grow():
    state = position(_case({"Memphis": {"tokens": {"Egypt": 3}}, "Thebes": {"tokens": {"Egypt": 2}},
                            "Upper Egypt": {"tokens": {"Egypt": 4}}}))
    assert town_plan(state, "Egypt") == ([], {})


def test_no_towns_beside_another_nations_tokens():
    state = position({**_case({"Upper Egypt": {"tokens": {"Egypt": 4}}}),
                      "areas": {"Memphis": {"tokens": {"Egypt": 5, "Crete": 1}}, "Upper Egypt": {"tokens": {"Egypt": 4}}}})
    assert town_plan(state, "Egypt") == ([], {})


def test_twelve_tokens_where_there_is_no_site_build_a_city():
    """Movement gathers twelve tokens off a site (§25.1); under Small Cities the planner must build there too,
    or surplus removal takes all but the area's limit of them."""
    text, state = _answer(_case({"Sinai": {"tokens": {"Egypt": 12}}, "Upper Egypt": {"tokens": {"Egypt": 4}}}))
    assert text == "BUILD Sinai\nDONE"
    assert state.area("Sinai").city == "Egypt"
    assert state.area("Sinai").tokens.get("Egypt", 0) == 0


def test_movement_gathers_no_city_that_the_towns_above_their_limit_leave_unsupported():
    """Memphis holds 4 towns over a limit of 3, so one of Egypt's 4 remaining tokens supports them (SC-6): a second
    city of twelve tokens in Sinai would need 2 x 2 + 1 = 5. Gathering it anyway loses the twelve to surplus removal,
    since construction (rightly) refuses to build it. Without Small Cities the same position can build it."""
    areas = {"Thebes": {"city": "Egypt"}, "Memphis": {"towns": {"Egypt": 4}},
             "Sinai": {"tokens": {"Egypt": 12}}, "Upper Egypt": {"tokens": {"Egypt": 4}}}
    small = position(_case(areas))
    assert not supported_after_building(small, "Egypt", {"Sinai"})
    base = position({**_case({k: v for k, v in areas.items() if k != "Memphis"}), "options": {}})
    assert supported_after_building(base, "Egypt", {"Sinai"})

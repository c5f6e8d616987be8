"""The planner's city construction: the most cities it can keep, even when the prompt does not list that set.

A phase-5 prompt lists every city the nation could build at once and each
alone, not the sets in between. Each case is a position in phase 5
(tests/rules/casefile.py); the planner answers the prompt a player would be
sent, and its order goes through the order language and the engine as mail
does, on to the end of phase 5.
"""

from __future__ import annotations

from .phase_five import planner_builds


FOUR_SITES = {
    "Thebes": {"tokens": {"Egypt": 6}}, "Memphis": {"tokens": {"Egypt": 6}},
    "Alexandria": {"tokens": {"Egypt": 6}}, "Damascus": {"tokens": {"Egypt": 6}},
}


def _answer(areas: dict) -> tuple[object, str, object]:
    """Egypt's phase-5 prompt, the planner's answer, and the game once phase 5 has ended."""
    return planner_builds({"nations": {"Egypt": {}, "Crete": {}}, "phase": "city-construction",
                           "areas": {"Knossos": {"tokens": {"Crete": 1}}, **areas}})


def test_three_of_four_sites_when_four_cities_could_not_be_supported():
    """Four sites of six and 5 tokens besides: four cities would need 8 tokens to support them (§26.3), three need
    6 of the 11 left. The prompt offers all four or one alone; the planner builds three."""
    prompt, text, state = _answer({**FOUR_SITES, "Upper Egypt": {"tokens": {"Egypt": 4}}, "Sinai": {"tokens": {"Egypt": 1}}})
    assert not any(c.count(",") == 2 for c in prompt.choices), prompt.choices  # no set of three among the choices
    assert text.startswith("BUILD ") and text.splitlines()[0].count(",") == 2, text
    assert state.cities_on_board("Egypt") == 3


def test_every_site_when_the_nation_can_support_them_all():
    prompt, text, state = _answer({**FOUR_SITES, "Upper Egypt": {"tokens": {"Egypt": 4}},
                                   "Sinai": {"tokens": {"Egypt": 1}}, "Gaza": {"tokens": {"Egypt": 1}},
                                   "Cyrene": {"tokens": {"Egypt": 2}}})
    assert state.cities_on_board("Egypt") == 4, text

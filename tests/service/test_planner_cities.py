"""The planner's city construction: the most cities it can keep, even when the prompt does not list that set.

A phase-5 prompt lists every city the nation could build at once and each
alone, not the sets in between. Each case is a position in phase 5
(tests/rules/casefile.py); the planner answers the prompt a player would be
sent, and its order goes through the order language and the engine as mail
does, on to the end of phase 5.
"""

from __future__ import annotations

import random

from rules.casefile import position

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.service.bots import bot_orders

FOUR_SITES = {
    "Thebes": {"tokens": {"Egypt": 6}}, "Memphis": {"tokens": {"Egypt": 6}},
    "Alexandria": {"tokens": {"Egypt": 6}}, "Damascus": {"tokens": {"Egypt": 6}},
}


def _answer(areas: dict) -> tuple[object, str, object]:
    """Egypt's phase-5 prompt, the planner's answer, and the game once phase 5 has ended."""
    draws = Draws("cities")
    case = {"nations": {"Egypt": {}, "Crete": {}}, "phase": "city-construction",
            "areas": {"Knossos": {"tokens": {"Crete": 1}}, **areas}}
    state = E.fold(position(case), E.resume(position(case), draws))
    prompt = E.pending(state)["egypt"]
    text = bot_orders(prompt, random.Random(0), state, "planner")
    for line in parse_orders(text, state, Actor(player_id=prompt.player_id)).lines:
        assert not line.error, (text, line.error)
        if line.command is not None:
            state = E.fold(state, E.decide(state, line.command, draws))
    state = E.fold(state, E.decide(state, PassDeadline(), draws))  # Crete sends nothing: orders are revealed
    return prompt, text, state


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

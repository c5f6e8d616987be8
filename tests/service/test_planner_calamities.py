"""The planner's standing order under No-Trading: a nation with a city or none rolls for calamities (NT-8, NT-9).

Each case is a position at the start of phase 3 (tests/rules/casefile.py):
the planner answers Africa's movement prompt, the only one every nation with
tokens is sent each turn, and its orders go through the order language and
the engine as mail does.
"""

from __future__ import annotations

import random

from rules.casefile import position

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.draws import Draws
from pbem.rules.phases.calamities.dice import exempt, rollers
from pbem.rules.phases.movement.turns import MOVE_STEP
from pbem.service.bots import bot_orders

NO_TRADING = {"variant-no-trading": "on"}


def _moved(areas: dict, options: dict, volunteers: bool = False) -> tuple[str, object]:
    draws = Draws("volunteer")
    case = {"players": 3, "phase": "movement", "options": options, "areas": areas,
            "nations": {"Africa": {"volunteers": volunteers, "ast_position": 5}, "Italy": {}}}
    state = position(case)
    state = E.fold(state, E.resume(state, draws))
    while (prompt := E.pending(state).get("africa")) is not None and state.phase == "movement":
        text = bot_orders(prompt, random.Random(0), state, "planner")
        for line in parse_orders(text, state, Actor(player_id=prompt.player_id)).lines:
            assert not line.error, (text, line.error)
            if line.command is not None:
                state = E.fold(state, E.decide(state, line.command, draws))
        if prompt.step == MOVE_STEP:
            return text, state
    raise AssertionError("Africa was never asked for its moves")


ONE_CITY = {"Tunisia": {"city": "Africa"}, "Sabrata": {"tokens": {"Africa": 2}}, "Roma": {"city": "Italy"}}
TWO_CITIES = {**ONE_CITY, "Thapsus": {"city": "Africa"}}


def test_a_nation_with_one_city_volunteers_to_roll():
    """Exempt (its next A.S.T. space asks for more cities), it still rolls: as High it would gain, as Low lose little."""
    text, state = _moved(ONE_CITY, NO_TRADING)
    assert text.splitlines()[0] == "VOLUNTEER"
    assert state.nations["Africa"].volunteers
    assert exempt(state, "Africa") and "Africa" in rollers(state)


def test_a_volunteer_with_two_cities_withdraws():
    text, state = _moved(TWO_CITIES, NO_TRADING, volunteers=True)
    assert text.splitlines()[0] == "VOLUNTEER OFF"
    assert not state.nations["Africa"].volunteers


def test_nothing_is_said_when_the_standing_order_already_fits():
    text, _ = _moved(ONE_CITY, NO_TRADING, volunteers=True)
    assert "VOLUNTEER" not in text


def test_no_volunteering_outside_no_trading():
    text, _ = _moved(ONE_CITY, {})
    assert "VOLUNTEER" not in text

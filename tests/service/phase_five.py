"""A planner bot's answer to a phase-5 (city construction) prompt, carried out as mail would be."""

from __future__ import annotations

import random

from rules.casefile import position

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.state import GameState
from pbem.service.bots import bot_orders


def planner_builds(case: dict, seat: str = "egypt") -> tuple[Prompt, str, GameState]:
    """The seat's phase-5 prompt in the position ``case`` (tests/rules/casefile.py), the planner's answer, and the
    game once it is carried out and the others' silence has revealed the orders."""
    draws = Draws("cities")
    state = E.fold(position(case), E.resume(position(case), draws))
    prompt = E.pending(state)[seat]
    text = bot_orders(prompt, random.Random(0), state, "planner")
    for line in parse_orders(text, state, Actor(player_id=prompt.player_id)).lines:
        assert not line.error, (text, line.error)
        if line.command is not None:
            state = E.fold(state, E.decide(state, line.command, draws))
    state = E.fold(state, E.decide(state, PassDeadline(), draws))
    return prompt, text, state

"""`engine.pending` remembers the prompts of the last states asked about: the answer must stay the engine's own."""

from __future__ import annotations

import random

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.codec import state_from_json, state_to_json
from pbem.rules.core.draws import Draws, commitment
from pbem.service.bots import bot_orders


def _states(count: int) -> list:
    """Successive states of a 4-player game played by random bots."""
    draws = Draws("pending")
    rng = random.Random(5)
    state = E.fold(E.new_game("g"), E.create("g", [(i + 1, f"P{i}", None) for i in range(4)], {}, commitment("pending"), draws))
    out = [state]
    while len(out) < count and not state.finished:
        prompt = next(iter(E.pending(state).values()))
        for line in parse_orders(bot_orders(prompt, rng), state, Actor(player_id=prompt.player_id)).lines:
            state = E.fold(state, E.decide(state, line.command, draws))
        out.append(state)
    return out


def test_the_prompts_of_a_state_asked_again_are_those_of_an_equal_state_worked_out_afresh():
    states = _states(30)
    for state in states:
        first = E.pending(state)
        again = E.pending(state)
        fresh = E.pending(state_from_json(state_to_json(state)))  # equal, not the same object: worked out anew
        assert first == again == fresh
    for state in reversed(states):  # older states, long out of the remembered few, still get their own prompts
        assert E.pending(state) == E.pending(state_from_json(state_to_json(state)))


def test_a_caller_changing_its_dict_of_prompts_changes_nothing_for_the_next():
    state = _states(3)[-1]
    asked = E.pending(state)
    assert asked
    asked.clear()
    assert E.pending(state) == E.pending(state_from_json(state_to_json(state)))
    assert E.pending(state)

"""`engine.pending` remembers the prompts of the last states asked about: the answer must stay the engine's own."""

from __future__ import annotations

import random

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.codec import state_from_json, state_to_json
from pbem.rules.core.commands import PassDeadline, SetDeadline
from pbem.rules.core.draws import Draws, commitment
from pbem.rules.core.frozen import replace
from pbem.rules.engine import _asks_as
from pbem.service.bots import WAIT, bot_orders


def _states(count: int, strategy: str = "random") -> list:
    """Successive states of a 4-player game played by bots; the clock moves it on when they wait."""
    draws = Draws("pending")
    rng = random.Random(5)
    state = E.fold(E.new_game("g"), E.create("g", [(i + 1, f"P{i}", None) for i in range(4)], {}, commitment("pending"), draws))
    out = [state]
    while len(out) < count and not state.finished:
        prompt = next(iter(E.pending(state).values()), None)
        text = bot_orders(prompt, rng, state, strategy) if prompt is not None else WAIT
        if text == WAIT:
            state = E.fold(state, E.decide(state, PassDeadline("clock"), draws))
        for line in parse_orders(text, state, Actor(player_id=prompt.player_id)).lines if text != WAIT else ():
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


def test_a_deadline_set_leaves_the_prompts_of_the_state_before_it_and_they_are_the_engines_own():
    """The service sets a deadline after most orders: the state after it is answered from the one before
    (``_NOT_ASKED``), which holds only while no phase's prompts read the deadline or the version."""
    states = _states(400, "planner")
    assert len({(s.phase, s.step) for s in states}) > 10
    for i, state in enumerate(states):
        before = E.pending(state)
        later = E.fold(state, E.decide(state, SetDeadline(f"2026-01-{1 + i % 28:02d} 12:00 UTC"), Draws("pending")))
        assert later.deadline != state.deadline and later.version == state.version + 1
        assert E.pending(later) == before == E.pending(state_from_json(state_to_json(later)))


def test_a_state_that_differs_in_anything_else_gets_its_own_prompts():
    state = next(s for s in _states(40) if E.pending(s) and s.phase != "setup")
    E.pending(state)
    moved = replace(state, turn=state.turn + 1, deadline="2026-01-02 12:00 UTC")  # a field prompts may read
    assert E.pending(moved) == E.pending(state_from_json(state_to_json(moved)))
    assert _asks_as(state, replace(state, version=state.version + 7, deadline="x"))
    assert not _asks_as(state, moved)

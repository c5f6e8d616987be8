"""Reductions asked one city at a time (issue 29): the prompt says how many in all, several REDUCE lines answer it.

Phase 5c (§26.3, §26.41) and 11b (§29.8) ask one city at a time, since each
reduced city's tokens count at once. The prompt says how many cities it may
take in all (worked out from the board), its template names that many, and
REDUCE lines sent together are taken in turn, one more than needed refused
as not needed.
"""

from __future__ import annotations

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.board.support import reductions_needed
from pbem.rules.core.draws import Draws
from pbem.rules.core.rejection import Rejection

from .casefile import position

DRAWS = Draws("reductions")


def _asked(phase: str, tokens: int):
    """Egypt with 4 cities (limits 2, 3, 3, 3) and ``tokens`` tokens elsewhere, short of support."""
    areas = {a: {"city": "Egypt"} for a in ("Damascus", "Thebes", "Memphis", "Cyrene")}
    areas["Sinai"] = {"tokens": {"Egypt": tokens}}
    state = position({"players": 6, "phase": phase, "nations": {"Egypt": {}}, "areas": areas})
    state = E.fold(state, E.resume(state, DRAWS))
    (prompt,) = E.pending(state).values()
    return state, prompt


def _send(state, text):
    refused = []
    for line in parse_orders(text, state, Actor(player_id=state.nations["Egypt"].player_id)).lines:
        assert line.command is not None, line.error
        try:
            state = E.fold(state, E.decide(state, line.command, DRAWS))
        except Rejection as exc:
            refused.append(str(exc))
    return state, refused


def test_the_count_is_the_fewest_and_the_most_cities_whichever_go_first():
    state, _ = _asked("city-construction", 1)
    # 8 needed, 1 on the board: 7 short; a city covers 2 + its limit (4 or 5): 2 cities at best, 2 at worst
    assert reductions_needed(state, "Egypt") == (2, 2)
    state, _ = _asked("city-construction", 0)
    assert reductions_needed(state, "Egypt") == (2, 2)


def test_phase_5c_says_how_many_and_takes_several_reduce_lines_in_turn():
    state, prompt = _asked("city-construction", 1)
    assert prompt.step == "reduce-city"
    assert "2 of your cities must be reduced in all, one at a time" in prompt.question
    assert "up to 2 REDUCE lines, in order of preference" in prompt.question
    assert prompt.template == "REDUCE Cyrene\nREDUCE Damascus"
    after, refused = _send(state, "REDUCE Thebes\nREDUCE Knossos\nREDUCE Memphis\nREDUCE Cyrene")
    assert after.area("Thebes").city is None and after.area("Memphis").city is None
    assert after.area("Cyrene").city == "Egypt" and after.area("Damascus").city == "Egypt"
    assert any("Knossos is not a city of yours" in r for r in refused)
    assert refused[-1] == "no city of yours needs reducing now, so this REDUCE is not needed (seed 001: 5C)"


def test_phase_11_says_how_many_too():
    _, prompt = _asked("surplus-removal", 1)
    assert prompt.step == "reduce-city" and "2 of your cities must be reduced in all" in prompt.question

"""The planner's movement: pirate cities next door are attacked when the nation can afford it.

Each case is a position at the start of phase 3 (tests/rules/casefile.py);
the planner answers every prompt Africa is sent, its orders go through the
order language and the engine as mail does, and the turn runs on to the end
of phase 4 (conflict), where the attack is resolved.
"""

from __future__ import annotations

import random

from rules.casefile import position

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.service.bots import WAIT, bot_orders


def _through_conflict(areas: dict) -> tuple[list[str], object]:
    """Africa's movement orders, and the game once phase 4 has ended."""
    draws = Draws("retake")
    state = position({"players": 3, "phase": "movement", "nations": {"Africa": {}}, "areas": areas})
    state = E.fold(state, E.resume(state, draws))
    rng, moves = random.Random(0), []
    while state.phase in ("movement", "conflict"):
        prompt = E.pending(state).get("africa")
        text = bot_orders(prompt, rng, state, "planner") if prompt is not None else WAIT
        if text == WAIT:
            state = E.fold(state, E.decide(state, PassDeadline(), draws))
            continue
        moves += [line for line in text.splitlines() if line.startswith("MOVE")] if state.phase == "movement" else []
        for line in parse_orders(text, state, Actor(player_id=prompt.player_id)).lines:
            assert not line.error, (text, line.error)
            if line.command is not None:
                state = E.fold(state, E.decide(state, line.command, draws))
    return moves, state


def test_a_pirate_city_walling_the_nation_in_is_attacked_with_seven_tokens():
    """Tripoli's pirate city borders Sabrata, Tripolitania and Libya, which hold 8 of Africa's tokens; 7 take it
    (§24.34, Q-S11), and the 3 left (one here, two in Jalo) still support the city in Tunisia (§26.3)."""
    moves, state = _through_conflict({
        "Tripoli": {"city": "Pirates"}, "Tunisia": {"city": "Africa"},
        "Sabrata": {"tokens": {"Africa": 4}}, "Tripolitania": {"tokens": {"Africa": 2}},
        "Libya": {"tokens": {"Africa": 2}}, "Jalo": {"tokens": {"Africa": 2}},
    })
    assert sum(int(m.split()[1]) for m in moves if m.endswith(" Tripoli")) == 7, moves
    assert state.area("Tripoli").city is None
    assert state.area("Tunisia").city == "Africa"


def test_no_attack_that_would_leave_the_nations_city_unsupported():
    """The same wall without Jalo's two: after losing 7 to the pirates, 1 token could not support Tunisia."""
    moves, state = _through_conflict({
        "Tripoli": {"city": "Pirates"}, "Tunisia": {"city": "Africa"},
        "Sabrata": {"tokens": {"Africa": 4}}, "Tripolitania": {"tokens": {"Africa": 2}},
        "Libya": {"tokens": {"Africa": 2}},
    })
    assert not [m for m in moves if m.endswith(" Tripoli")], moves
    assert state.area("Tripoli").city == "Pirates"

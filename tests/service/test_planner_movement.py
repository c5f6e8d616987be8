"""The planner's movement: pirate cities next door are attacked when the nation can afford it, and inland sites
go first where the dice deal the calamities.

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


def _through_conflict(areas: dict, nation: str = "Africa", options: dict | None = None,
                      players: int = 3) -> tuple[list[str], object]:
    """The nation's movement orders, and the game once phase 4 has ended."""
    draws = Draws("retake")
    state = position({"players": players, "phase": "movement", "nations": {nation: {}}, "areas": areas,
                      "options": options or {}})
    state = E.fold(state, E.resume(state, draws))
    rng, moves = random.Random(0), []
    while state.phase in ("movement", "conflict"):
        prompt = E.pending(state).get(nation.lower())
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


# Alexandria (coastal) and Memphis (inland) each hold 3 of Egypt's tokens; the Western Desert between them can
# spare the 3 that make one of them a city, not both.
TWO_SITES = {"Alexandria": {"tokens": {"Egypt": 3}}, "Memphis": {"tokens": {"Egypt": 3}},
             "Western Desert": {"tokens": {"Egypt": 4}}}


def test_where_the_dice_deal_calamities_the_inland_site_is_gathered_first():
    """Under No-Trading Piracy takes two coastal cities of whoever rolls Low (NT-9, §30.9), several times a turn."""
    moves, state = _through_conflict(TWO_SITES, "Egypt", {"variant-no-trading": "on"}, players=5)
    assert [m for m in moves if m.endswith(" Memphis")] and not [m for m in moves if m.endswith(" Alexandria")], moves
    assert state.area("Memphis").tokens.get("Egypt") == 6


def test_in_the_base_game_sites_go_by_how_full_they_are_then_by_name():
    moves, state = _through_conflict(TWO_SITES, "Egypt", players=5)
    assert [m for m in moves if m.endswith(" Alexandria")] and not [m for m in moves if m.endswith(" Memphis")], moves

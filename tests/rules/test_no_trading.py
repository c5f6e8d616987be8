"""The No-Trading variant's dice (RULINGS.md NT-7 to NT-9), where a case file cannot fix the rolls.

Case files in `cases/no_trading/` play the variant through the engine; here
the roll-off is driven by scripted dice, so every tie rule is shown.
"""

from __future__ import annotations

import pytest

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.draws import Draws
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import AreaState
from pbem.rules.phases.calamities.dice import (
    Volunteer,
    exempt,
    most_advanced_epoch,
    roll_off,
)

from .casefile import position


class Scripted(Draws):
    """Dice that fall as the test says: each 2d6 total in turn, by roller, for the labels asked."""

    def __init__(self, totals: dict[str, list[int]]) -> None:
        super().__init__("scripted")
        self.left = {n: list(t) for n, t in totals.items()}

    def below(self, n: int, label: str) -> int:
        nation = label.split(":")[-1].split("/")[0]
        total = self.left[nation][0]
        if label.endswith("/a"):
            return min(5, total - 2)
        self.left[nation].pop(0)
        return total - 2 - min(5, total - 2)


def test_a_single_lowest_and_highest_need_no_reroll():
    rolls, low, high = roll_off(Scripted({"Egypt": [4], "Crete": [9], "Africa": [7]}), ["Egypt", "Crete", "Africa"], "x")
    assert (low, high) == ("Egypt", "Crete")
    assert rolls == {"Egypt": [4], "Crete": [9], "Africa": [7]}


def test_ties_for_lowest_are_rolled_again_among_the_tied_only():
    """NT-9: a reroll for lowest never makes anyone High."""
    dice = Scripted({"Egypt": [4, 11], "Crete": [9], "Africa": [4, 3]})
    rolls, low, high = roll_off(dice, ["Egypt", "Crete", "Africa"], "x")
    assert (low, high) == ("Africa", "Crete")  # Egypt's 11 on the reroll does not make him High
    assert rolls == {"Egypt": [4, 11], "Crete": [9], "Africa": [4, 3]}


def test_ties_at_both_ends_are_settled_apart():
    dice = Scripted({"Egypt": [5, 6], "Crete": [10, 2], "Africa": [5, 8], "Babylon": [10, 12]})
    _, low, high = roll_off(dice, ["Egypt", "Crete", "Africa", "Babylon"], "x")
    assert (low, high) == ("Egypt", "Babylon")  # Crete's 2 on the high reroll does not make him Low


def test_two_rollers_who_tie_both_roll_again_and_that_settles_both_ends():
    rolls, low, high = roll_off(Scripted({"Egypt": [7, 3], "Crete": [7, 8]}), ["Egypt", "Crete"], "x")
    assert (low, high) == ("Egypt", "Crete")
    assert rolls == {"Egypt": [7, 3], "Crete": [7, 8]}


def test_everyone_tying_rolls_again_together():
    dice = Scripted({"Egypt": [6, 6, 5], "Crete": [6, 6, 9], "Africa": [6, 6, 7]})
    rolls, low, high = roll_off(dice, ["Egypt", "Crete", "Africa"], "x")
    assert (low, high) == ("Egypt", "Crete") and rolls["Africa"] == [6, 6, 7]


def test_one_roller_is_low_with_no_high_and_nobody_rolling_gives_neither():
    """Q-NT6."""
    assert roll_off(Scripted({"Egypt": [5]}), ["Egypt"], "x")[1:] == ("Egypt", None)
    assert roll_off(Scripted({}), [], "x") == ({}, None, None)


def _game(**nations):
    spec = {"players": 3, "phase": "calamity-resolution", "options": {"variant-no-trading": "on"},
            "nations": {n: v for n, v in nations.items()}}
    return position(spec)


def test_exemption_by_the_cities_of_the_next_space():
    """NT-8a: Egypt on space 3 (Early Bronze from 4) with 1 city is exempt; NT-8b: Africa on space 2 with none is not."""
    state = _game(Egypt={"ast_position": 3}, Africa={"ast_position": 2}, Crete={})
    state = state.with_area("Thebes", AreaState(city="Egypt"))
    assert exempt(state, "Egypt") and not exempt(state, "Africa")


def test_the_most_advanced_epoch_is_read_on_each_nation_s_own_track():
    """NT-7: Egypt's space 4 is Early Bronze; Africa's space 4 is still Stone Age."""
    assert most_advanced_epoch(_game(Egypt={"ast_position": 4}, Africa={}, Crete={})) == "Early Bronze Age"
    assert most_advanced_epoch(_game(Egypt={}, Africa={"ast_position": 4}, Crete={})) == "Stone Age"


def test_volunteer_is_a_standing_order_given_at_any_time():
    state = _game(Egypt={}, Africa={}, Crete={})
    (line,) = parse_orders("volunteer", state, Actor(player_id=1)).lines
    assert line.command == Volunteer(1, True) and line.canonical == "VOLUNTEER"
    state = E.fold(state, E.decide(state, line.command, Draws("x")))
    assert state.nations["Egypt"].volunteers
    (line,) = parse_orders("VOLUNTEER OFF", state, Actor(player_id=1)).lines
    state = E.fold(state, E.decide(state, line.command, Draws("x")))
    assert not state.nations["Egypt"].volunteers
    without = position({"players": 3, "phase": "trade", "nations": {"Egypt": {}, "Africa": {}, "Crete": {}}})
    (line,) = parse_orders("VOLUNTEER", without, Actor(player_id=1)).lines
    with pytest.raises(Rejection, match="No-Trading"):
        E.decide(without, line.command, Draws("x"))

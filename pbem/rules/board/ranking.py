"""Orders of play: A.S.T.-ranking, census order, and the beneficiary.

A.S.T.-ranking is the fixed printed order of the nations (seed 003, RULINGS
§0); the Barbarians rank after every nation. The beneficiary is ranked as
option `beneficiary-rule` says (D-1), at the moment it is needed.
"""

from __future__ import annotations

from collections.abc import Iterable

from pbem.rules.core.state import GameState
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import ruleset_of

BARBARIANS = "Barbarians"


def ast_rank(state: GameState, nation: str) -> int:
    if nation == BARBARIANS:
        return 99
    return ruleset_of(state).nations[nation].ast_order


def in_ast_order(state: GameState, nations: Iterable[str]) -> list[str]:
    return sorted(nations, key=lambda n: ast_rank(state, n))


def cities_in_stock(state: GameState, nation: str) -> int:
    return ruleset_of(state).cities_per_nation - state.cities_on_board(nation)


def census_order(state: GameState) -> list[str]:
    """Most tokens on the board first, ties by A.S.T.-ranking; Military holders after all others (§21.1, §22.11)."""

    def key(nation: str) -> tuple[int, int, int]:
        military = 1 if "Military" in state.nations[nation].civ_cards else 0
        return (military, -state.tokens_on_board(nation), ast_rank(state, nation))

    return sorted(state.nations, key=key)


def beneficiary_ranking(state: GameState, excluding: Iterable[str] = ()) -> list[str]:
    """Candidates for beneficiary, best first (D-1: `seed` or `1991`)."""
    left = [n for n in state.nations if n not in set(excluding)]
    points = ruleset_of(state).numbers
    if options_of(state).beneficiary_rule == "1991":
        def key(n: str) -> tuple[int, ...]:
            units = points["city_unit_points"] * cities_in_stock(state, n) + state.nations[n].stock
            return (-units, ast_rank(state, n))
    else:
        def key(n: str) -> tuple[int, ...]:
            return (-cities_in_stock(state, n), -state.nations[n].stock, ast_rank(state, n))
    return sorted(left, key=key)

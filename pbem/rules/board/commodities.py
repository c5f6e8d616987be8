"""Commodity cards in a hand and what their sets are worth (§28.51, §28.53 Mining).

Buying civilization cards (phase 12) and entering the Late Iron Age by card
points (phase 13) both count a nation's commodities; the counting lives here.
Calamity cards are held in the same hand but are not money.
"""

from __future__ import annotations

from typing import Any

from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of


def commodity_kinds(state: GameState) -> dict[str, Any]:
    """Every commodity of the ruleset by name (its face value and set values)."""
    return {c.name: c for s in ruleset_of(state).stacks for c in s.commodities}


def commodity_counts(state: GameState, nation: str) -> dict[str, int]:
    """Commodity name -> cards of it in the nation's hand (calamities are not money)."""
    known = commodity_kinds(state)
    out: dict[str, int] = {}
    for card in state.nations[nation].hand:
        if card in known:
            out[card] = out.get(card, 0) + 1
    return dict(sorted(out.items()))


def mining_commodities(state: GameState, nation: str) -> tuple[str, ...]:
    """Commodities Mining may enlarge for this nation now (empty: no Mining, or used this turn)."""
    n = state.nations[nation]
    if n.mining_used_turn == state.turn and state.turn:
        return ()
    cards = ruleset_of(state).civ_cards
    out: list[str] = []
    for held in n.civ_cards:
        if held in cards:
            for effect in cards[held].effects_of("set-value-bonus"):
                out.extend(effect.get("commodities", ()))
    return tuple(out)


def sets_value(state: GameState, sets: dict[str, int], mining: tuple[str, ...] = ()) -> tuple[int, str | None]:
    """(value, the commodity Mining enlarged or None): n² × face value per set (§28.51), Mining once (§28.53)."""
    known = commodity_kinds(state)
    plain = {name: known[name].set_value(n) for name, n in sets.items() if n}
    total = sum(plain.values())
    best, boosted = 0, None
    for name, n in sorted(sets.items()):
        if n and name in mining:
            gain = known[name].set_value(n + 1) - plain[name]
            if gain > best:
                best, boosted = gain, name
    return total + best, boosted

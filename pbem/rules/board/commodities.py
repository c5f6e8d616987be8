"""Commodity cards in a hand and what their sets are worth (§28.51, §28.53 Mining).

Buying civilization cards (phase 12) and entering the Late Iron Age by card
points (phase 13) both count a nation's commodities; the counting lives here.
Calamity cards are held in the same hand but are not money.

Under No-Trading the money cards take the commodities' place for every
purpose (NT-13): each card ("Water 7") is a kind of its own whose cards add
their face values, with no set multiplier and no Mining (Q-NT8, Q-NT9).
"""

from __future__ import annotations

from typing import Any

from pbem.rules.core.state import GameState
from pbem.rules.ruleset.parts import MoneyKind
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

__all__ = ["MoneyKind"]  # the money cards' kind, read by the audit's explanations


def commodity_kinds(state: GameState) -> dict[str, Any]:
    """Every commodity of the ruleset by name (its face value and set values); under No-Trading every money card."""
    return parts_of(state).deck.kinds(ruleset_of(state))


def commodity_counts(state: GameState, nation: str) -> dict[str, int]:
    """Commodity name -> cards of it in the nation's hand (calamities are not money)."""
    known = commodity_kinds(state)
    out: dict[str, int] = {}
    for card in state.nations[nation].hand:
        if card in known:
            out[card] = out.get(card, 0) + 1
    return dict(sorted(out.items()))


def card_word(state: GameState) -> str:
    """What the cards that pay are called in this game: commodity cards, or money cards under No-Trading."""
    return parts_of(state).deck.paying_card


def spendable_counts(state: GameState, nation: str) -> dict[str, int]:
    """The commodity cards the nation may pay with now: all of them, less Water set aside against a Famine (NT-12)."""
    held = commodity_counts(state, nation)
    for card in state.nations[nation].set_aside:
        if held.get(card):
            held[card] -= 1
    return {name: n for name, n in held.items() if n}


def hand_limit(state: GameState) -> int:
    """Commodity (or money) cards a nation keeps after 12a (§31.71; NT-13)."""
    return parts_of(state).deck.hand_limit(ruleset_of(state))


def mining_commodities(state: GameState, nation: str) -> tuple[str, ...]:
    """Commodities Mining may enlarge for this nation now (empty: no Mining, or used this turn; never money, Q-NT8)."""
    n = state.nations[nation]
    if (n.mining_used_turn == state.turn and state.turn) or not parts_of(state).deck.mining:
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

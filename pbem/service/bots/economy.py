"""Tokens for a planner bot: a tax rate its stock can pay, and treasury turned back into stock.

Tokens go round: tax moves them from stock to treasury (§19), buying
civilization cards or cards from stack 9 moves them back (§31.56, §27.5).
A nation whose treasury only grows runs its stock dry and its cities revolt
at the next tax (§19.3). So a planner holding Coinage taxes no more than
its stock can pay, and buys from stack 9 when its stock would not cover the
next tax, or when a card is worth more than it costs: under No-Trading a
money card of the nation's highest pile (NT-5) usually is; a Gold or Ivory
card at 18 is not (and Piracy lies in stack 9).
"""

from __future__ import annotations

from pbem.rules.core.state import GameState
from pbem.rules.phases.trade_cards import price, purchase_number
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

TAX_PER_CITY = 2  # §19.1


def stock_short(state: GameState, nation: str, margin: int = 4) -> int:
    """Tokens the stock lacks to pay next turn's tax with a little to spare."""
    return max(0, TAX_PER_CITY * state.cities_on_board(nation) + margin - state.nations[nation].stock)


def tax_rate_order(state: GameState, nation: str) -> str:
    """TAX: the highest rate (1 to 3 per city, Coinage, §19.2) the stock can pay."""
    cities = max(1, state.cities_on_board(nation))
    stock = state.nations[nation].stock
    return f"TAX {max(1, min(3, stock // cities))}"


def card_value(state: GameState, nation: str) -> float:
    """What a card bought now is worth on average, to pay for civilization cards with."""
    rules = ruleset_of(state)
    if parts_of(state).deck.buys_own_pile and rules.money_piles:
        pile = next(p for p in rules.money_piles if p.number == purchase_number(state, nation))
        copies = sum(pile.values.values())
        return sum(value * n for value, n in pile.values.items()) / copies
    stack = rules.stacks[rules.purchase_stack - 1]
    return sum(c.value * c.copies for c in stack.commodities) / sum(c.copies for c in stack.commodities)


def stack_nine_order(state: GameState, nation: str) -> str:
    """BUY: cards from stack 9 (or the highest money pile) when stock needs the treasury back, or at a bargain."""
    each = price(state)
    affordable = state.nations[nation].treasury // each
    if card_value(state, nation) > each:
        return f"BUY {affordable}"
    return f"BUY {min(affordable, -(-stock_short(state, nation) // each))}"

"""Tokens for a planner bot: a tax rate its stock can pay, and treasury turned back into stock.

Tokens go round: tax moves them from stock to treasury (§19), buying
civilization cards or cards from stack 9 moves them back (§31.56, §27.5).
A nation whose treasury only grows runs its stock dry and its cities revolt
at the next tax (§19.3). Worse, tax is paid in phase 1 and population
grows in phase 2 from what is left in stock (§20): every token taxed is
one that cannot grow that turn, and cities are built from grown tokens.
A city draws a trade card each turn worth more than the tax it pays, and
the last A.S.T. spaces hold a marker for want of cities far more often
than for want of card points (docs/bots.md). So a planner holding Coinage
taxes at its lowest rate, 1 a city. Taxing at the highest rate the stock
could pay (as before) ended 23 and 24 of 30 three-player Small Cities and
base games and 18 of 30 No-Trading; at rate 1, 29, 28 and 21.

It buys from stack 9 when its stock would not cover the next tax, or
when a card is worth more than it costs: under No-Trading a money card of
the nation's highest pile (NT-5) usually is; a Gold or Ivory card at 18
is not (and Piracy lies in stack 9).
"""

from __future__ import annotations

from pbem.rules.core.state import GameState
from pbem.rules.phases.trade_cards import price, purchase_number
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

TAX_PER_CITY = 2  # §19.1
LOWEST_RATE = 1  # Coinage's lowest rate (§19.2)


def stock_short(state: GameState, nation: str, margin: int = 4) -> int:
    """Tokens the stock lacks to pay next turn's tax with a little to spare."""
    return max(0, TAX_PER_CITY * state.cities_on_board(nation) + margin - state.nations[nation].stock)


def tax_rate_order(state: GameState, nation: str) -> str:
    """TAX 1: the lowest rate Coinage allows (§19.2), so the tokens stay in stock to grow and build cities."""
    return f"TAX {LOWEST_RATE}"


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

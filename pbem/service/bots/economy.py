"""Tokens for a planner bot: a tax rate its stock can pay, and treasury turned back into stock.

Tokens go round: tax moves them from stock to treasury (§19), buying
civilization cards or cards from stack 9 moves them back (§31.56, §27.5).
A nation whose treasury only grows runs its stock dry and its cities revolt
at the next tax (§19.3). So a planner holding Coinage taxes no more than
its stock can pay, and buys from stack 9 when its stock would not cover the
next tax (not otherwise: Piracy lies in stack 9).
"""

from __future__ import annotations

from pbem.rules.core.state import GameState

TAX_PER_CITY = 2  # §19.1
STACK_NINE_PRICE = 18  # §27.5


def stock_short(state: GameState, nation: str, margin: int = 4) -> int:
    """Tokens the stock lacks to pay next turn's tax with a little to spare."""
    return max(0, TAX_PER_CITY * state.cities_on_board(nation) + margin - state.nations[nation].stock)


def tax_rate_order(state: GameState, nation: str) -> str:
    """TAX: the highest rate (1 to 3 per city, Coinage, §19.2) the stock can pay."""
    cities = max(1, state.cities_on_board(nation))
    stock = state.nations[nation].stock
    return f"TAX {max(1, min(3, stock // cities))}"


def stack_nine_order(state: GameState, nation: str) -> str:
    """BUY: cards from stack 9 when treasury should go back to stock."""
    treasury = state.nations[nation].treasury
    affordable = treasury // STACK_NINE_PRICE
    for_stock = -(-stock_short(state, nation) // STACK_NINE_PRICE)
    return f"BUY {min(affordable, for_stock)}"

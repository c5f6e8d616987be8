"""Orders of phase 6 (§27.51): BUY <n> cards from stack 9 straight after one's own draw."""

from __future__ import annotations

from pbem.rules.core.state import GameState
from pbem.rules.phases.trade_cards import BuyTradeCards

from .grammar import Actor, LineError, Parser, count, player_of


def _buy(state: GameState, actor: Actor, rest: str, notes: list[str]) -> BuyTradeCards:
    words = rest.split()
    if not words:
        raise LineError("say how many cards to buy, e.g. BUY 1 (BUY 0 buys none)")
    if len(words) > 1:
        raise LineError("BUY takes one number: how many cards to buy from stack 9")
    text = words[0].lower()
    return BuyTradeCards(player_of(actor), 0 if text in ("none", "no") else count(text, "number of cards"))


VERBS: dict[str, tuple[Parser, str]] = {
    "BUY": (_buy, "BUY <n>  (cards from stack 9; BUY 0 buys none)"),
}
CANONICAL = {BuyTradeCards: lambda c: f"BUY {c.count}"}

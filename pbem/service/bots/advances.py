"""Phase 12 for a bot: which civilization cards to buy together, how to pay, which trade cards to keep.

Purchases are secret and resolved together, so looking one step ahead shows
nothing: every purchase looks alike until the turn ends. A bot judges them
by its own plan instead. Each card it may buy is worth its face value (what
the Late Iron Age and the final score count), plus part of the credits it
gives towards the cards still to buy, plus what the next epoch asks for (a
group not yet covered, the nine cards of the Early Iron Age). The bot then
buys the set of cards worth most that its commodities and treasury can pay
for (a small knapsack over the price after credits), as many cards a turn as
it can afford.

It pays so that its stock can meet next turn's tax: treasury spent goes back
to stock, so when stock runs short it pays more from treasury and keeps
commodity cards for larger sets later.
"""

from __future__ import annotations

from itertools import product

from pbem.rules.board.commodities import (
    commodity_counts,
    commodity_kinds,
    hand_limit,
    mining_commodities,
    sets_value,
    spendable_counts,
)
from pbem.rules.core.state import GameState
from pbem.rules.phases.advances.payment import buyable, price
from pbem.rules.phases.advances.purchase import order_line, pay_text
from pbem.rules.ruleset.rulebook import ruleset_of

from .economy import stock_short

_PAYMENTS_TRIED = 6_000


def card_worth(state: GameState, nation: str, card: str) -> float:
    """What a civilization card is worth to this nation now (see the module docstring)."""
    rules = ruleset_of(state)
    n = state.nations[nation]
    owned = set(n.civ_cards)
    face = rules.civ_cards[card].cost
    future = sum(rules.credit(card, other) for other in rules.civ_cards if other not in owned and other != card)
    covered = {g for c in owned if c in rules.civ_cards for g in rules.civ_cards[c].groups}
    new_groups = len(set(rules.civ_cards[card].groups) - covered)
    worth = face + 0.6 * future + 200 * new_groups  # five groups for the Early Iron Age hold nations longest
    if len(owned) < 9:
        worth += 40  # the Early Iron Age asks for nine cards
    eases = sum(1 for calamity in rules.calamities.values() if card in calamity.reduced_by)
    worth += 25 * eases  # fewer cities lost to calamities
    return worth


def _knapsack(items: list[tuple[str, int, float]], budget: int) -> tuple[str, ...]:
    """The cards worth most whose prices (after credits) add up to at most ``budget``."""
    best: dict[int, tuple[float, tuple[str, ...]]] = {0: (0.0, ())}
    for card, due, worth in items:
        for spent, (value, cards) in sorted(best.items(), reverse=True):
            total = spent + due
            if total > budget:
                continue
            if total not in best or best[total][0] < value + worth:
                best[total] = (value + worth, cards + (card,))
    return max(best.values(), key=lambda v: (v[0], -len(v[1])))[1]


def payment(state: GameState, nation: str, due: int, treasury_wanted: int) -> tuple[dict[str, int], int] | None:
    """Commodity cards and treasury for ``due``: least waste, and treasury up to ``treasury_wanted`` first.

    Treasury may only make up what the cards leave (§31.56), so spending more
    of it means paying with fewer cards."""
    held = spendable_counts(state, nation)
    treasury = state.nations[nation].treasury
    mining = mining_commodities(state, nation)
    names = sorted(held)
    ranges = [range(held[name] + 1) for name in names]
    size = 1
    for r in ranges:
        size *= len(r)
    if size > _PAYMENTS_TRIED:
        ranges = [(0, held[name]) for name in names]  # type: ignore[misc]
    best = None
    for counts in product(*ranges):
        if size > _PAYMENTS_TRIED and 2 ** len(names) > _PAYMENTS_TRIED:
            break
        sets = {name: c for name, c in zip(names, counts) if c}
        value, _ = sets_value(state, sets, mining)
        from_treasury = max(0, due - value)
        if from_treasury > treasury:
            continue
        key = (max(0, value - due) + max(0, treasury_wanted - from_treasury), sum(counts))
        if best is None or key < best[0]:
            best = (key, sets, from_treasury)
    return None if best is None else (best[1], best[2])


def plan_purchase(state: GameState, nation: str) -> str:
    """The ADVANCE order this nation's plan calls for (ADVANCE NONE when nothing is worth buying)."""
    n = state.nations[nation]
    held = spendable_counts(state, nation)
    budget = sets_value(state, held, mining_commodities(state, nation))[0] + n.treasury
    items = []
    for card in buyable(state, nation):
        due = price(state, nation, (card,))[2]
        if due <= budget:
            items.append((card, due, card_worth(state, nation, card)))
    chosen = _knapsack(items, budget)
    while chosen:
        due = price(state, nation, chosen)[2]
        paid = payment(state, nation, due, min(stock_short(state, nation), n.treasury))
        if paid is not None:
            return order_line(chosen, paid[0], paid[1])
        chosen = chosen[:-1]  # a payment may fail where whole sets were the only ones tried
    return "ADVANCE NONE"


def keep_best(state: GameState, nation: str, discard: int) -> dict[str, int]:
    """The ``discard`` commodity cards whose loss lowers the hand's set value least, one at a time."""
    held = commodity_counts(state, nation)
    known = commodity_kinds(state)
    gone: dict[str, int] = {}
    for _ in range(discard):
        def loss(name: str) -> tuple[int, int]:
            return (known[name].set_value(held[name]) - known[name].set_value(held[name] - 1), held[name])

        name = min((c for c in held if held[c] > 0), key=lambda c: (loss(c), c))
        held[name] -= 1
        gone[name] = gone.get(name, 0) + 1
    return gone


def hand_limit_order(state: GameState, nation: str) -> str:
    """DISCARD the cards above the hand limit that the hand's sets miss least (§31.71)."""
    over = sum(commodity_counts(state, nation).values()) - hand_limit(state)
    return "DISCARD " + pay_text(dict(sorted(keep_best(state, nation, max(0, over)).items())), 0)

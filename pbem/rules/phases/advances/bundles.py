"""Phase 12: civilization cards a nation can afford together, for the purchase prompt (§31, §31.54).

A player buys cards on one ADVANCE line, so the prompt's ready-made choices
should be the purchases he may really make: several cards at once, with
their cost after credits. Credits come only from cards owned before this
turn (§31.54), so a card's credit does not depend on the others bought with
it and a set's price is the sum of its cards' prices.

The search is a depth-first search over the buyable cards, one set size at
a time from the largest a nation can afford down, pruned by the budget (all
its spendable cards and treasury) and bounded, so a rich nation late in the
game is answered as fast as a poor one. The ranking is the one a player
would use: most cards first (each card is a step on the A.S.T. and a credit
next turn), then the highest face value (what the Late Iron Age A.S.T.
spaces and the score count), then the least to pay. A set is listed only
when no larger affordable set contains it: he would rather see the larger.
"""

from __future__ import annotations

from dataclasses import dataclass

from pbem.rules.core.state import GameState
from pbem.rules.phases.advances.payment import (
    Payments,
    buyable,
    credits,
    most_payable,
    price,
)
from pbem.rules.ruleset.rulebook import ruleset_of

BEST_BUNDLES = 12  # multi-card purchases a prompt offers ready-made
EXAMINED_LIMIT = 4_000  # search nodes examined at most: the prompt stays fast for any hand


@dataclass(frozen=True)
class Bundle:
    """Several civilization cards bought together, what they cost and the payment the engine would choose.

    ``cards`` are in the order of ``buyable`` (cheapest first), so the same
    set is always written the same way."""

    cards: tuple[str, ...]
    cost: int
    credit: int
    due: int
    pay: dict[str, int]
    treasury: int

    @property
    def price_text(self) -> str:
        """'Pottery + Mysticism 95 − 10 credit = 85', as the prompt's situation shows it."""
        text = f"{' + '.join(self.cards)} {self.cost}"
        return text + (f" − {self.credit} credit = {self.due}" if self.credit else "")


@dataclass(frozen=True)
class _Search:
    """The fixed data of one search: candidates in the order tried, their net prices, the budget.

    ``suffix_cheapest[i]`` holds the net prices of candidates ``i..`` sorted
    ascending as running sums, so the least any ``r`` more cards can add is
    one lookup (the bound that prunes a branch)."""

    names: tuple[str, ...]
    nets: tuple[int, ...]
    budget: int
    suffix_cheapest: tuple[tuple[int, ...], ...]


def _search_data(state: GameState, nation: str, cards: list[str], budget: int) -> _Search:
    """Candidates tried highest face value first, so a bounded search finds the most valuable sets first."""
    rules = ruleset_of(state)
    credit = credits(state, nation, tuple(cards))
    names = tuple(sorted(cards, key=lambda c: (-rules.civ_cards[c].cost, c)))
    nets = tuple(rules.civ_cards[c].cost - credit[c] for c in names)
    suffixes = []
    for i in range(len(names) + 1):
        running, sums = 0, [0]
        for net in sorted(nets[i:]):
            running += net
            sums.append(running)
        suffixes.append(tuple(sums))
    return _Search(names, nets, budget, tuple(suffixes))


def _largest_size(search: _Search) -> int:
    """How many cards the nation can afford at most: the cheapest net prices added up within the budget."""
    sums = search.suffix_cheapest[0]
    return max(k for k in range(len(sums)) if sums[k] <= search.budget)


def _sets_of_size(search: _Search, size: int, allowance: int) -> tuple[list[tuple[int, ...]], int]:
    """Every set of ``size`` candidates whose net price fits the budget, as index tuples, and the nodes examined.

    Stops after ``allowance`` nodes: what is found by then is still correct,
    only possibly not every set of that size."""
    found: list[tuple[int, ...]] = []
    examined = 0
    chosen: list[int] = []

    def extend(start: int, total: int) -> None:
        nonlocal examined
        left = size - len(chosen)
        if left == 0:
            found.append(tuple(chosen))
            return
        for i in range(start, len(search.names) - left + 1):
            if examined >= allowance:
                return
            examined += 1
            with_it = total + search.nets[i]
            if with_it + search.suffix_cheapest[i + 1][left - 1] > search.budget:
                continue  # even the cheapest cards after it would overspend
            chosen.append(i)
            extend(i + 1, with_it)
            chosen.pop()

    extend(0, 0)
    return found, examined


def _is_maximal(search: _Search, chosen: tuple[int, ...]) -> bool:
    """No card outside the set could be added within the budget (then a larger set is affordable)."""
    total = sum(search.nets[i] for i in chosen)
    outside = [search.nets[i] for i in range(len(search.names)) if i not in chosen]
    return not outside or total + min(outside) > search.budget


def affordable_bundles(
    state: GameState, nation: str, limit: int = BEST_BUNDLES, payments: Payments | None = None
) -> list[Bundle]:
    """The best purchases of two cards or more the nation can pay for now, best first (at most ``limit``).

    Each comes with the payment ``auto_payment`` chooses for its total due, so
    it can be written as a complete order the engine accepts (``payments``:
    the nation's, when the caller has them already)."""
    cards = buyable(state, nation)
    budget = most_payable(state, nation)
    if len(cards) < 2 or limit < 1:
        return []
    search = _search_data(state, nation, cards, budget)
    largest = _largest_size(search)
    order = {c: i for i, c in enumerate(cards)}
    found: list[tuple[str, ...]] = []
    allowance = EXAMINED_LIMIT
    for size in range(largest, 1, -1):
        sets, examined = _sets_of_size(search, size, allowance)
        allowance -= examined
        for chosen in sets:
            if size == largest or _is_maximal(search, chosen):
                found.append(tuple(sorted((search.names[i] for i in chosen), key=order.__getitem__)))
        if len(found) >= limit or allowance <= 0:
            break  # smaller sets rank below these in any case
    return _ranked(state, nation, found, order, limit, payments or Payments(state, nation))


def _ranked(
    state: GameState, nation: str, found: list[tuple[str, ...]], order: dict[str, int], limit: int, payments: Payments
) -> list[Bundle]:
    """Most cards, then highest face value, then least due, then the cards' order: the first ``limit`` payable."""
    priced = [(cards, price(state, nation, cards)) for cards in found]
    priced.sort(key=lambda p: (-len(p[0]), -p[1][0], p[1][2], [order[c] for c in p[0]]))
    most = most_payable(state, nation)
    out: list[Bundle] = []
    for cards, (cost, credit, due) in priced:
        if len(out) >= limit:
            break
        if due > most:
            continue
        paid = payments.choose(due)
        if paid is None:
            continue
        out.append(Bundle(cards, cost, credit, due, paid[0], paid[1]))
    return out

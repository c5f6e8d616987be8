"""Phase 12: which civilization cards a nation may buy, what they cost after credits, and how it pays (§31, §28.51, §28.53).

When a player leaves the payment to the engine, it pays with the least
excess, then the least treasury, then the fewest cards.
"""

from __future__ import annotations

from itertools import product

from pbem.rules.board.commodities import (
    commodity_kinds,
    mining_commodities,
    sets_value,
    spendable_counts,
)
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.model import money_value
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import ruleset_of

PHASE = "civilization-advances"
MAX_CHOICES = 60
_SEARCH_LIMIT = 4_000  # payment combinations tried when the engine chooses what to pay


def buyable(state: GameState, nation: str) -> list[str]:
    """Cards the nation may buy this turn: not owned, prerequisite owned before this turn, not sold out."""
    rules = ruleset_of(state)
    owned = state.nations[nation].civ_cards
    out = []
    for name, card in rules.civ_cards.items():
        if name in owned or (card.prerequisite and card.prerequisite not in owned):
            continue
        if owners(state, name) >= rules.civ_card_copies:
            continue
        out.append(name)
    return sorted(out, key=lambda c: (rules.civ_cards[c].cost, c))


def owners(state: GameState, card: str) -> int:
    return sum(1 for n in state.nations.values() if card in n.civ_cards)


def credits(state: GameState, nation: str, buying: tuple[str, ...]) -> dict[str, int]:
    """Card bought -> credit from every card owned before this turn, once each (§31.54)."""
    rules = ruleset_of(state)
    owned = [c for c in state.nations[nation].civ_cards if c in rules.civ_cards]
    return {card: sum(rules.credit(o, card) for o in owned) for card in buying}


def price(state: GameState, nation: str, buying: tuple[str, ...]) -> tuple[int, int, int]:
    """(printed cost, credits, still to pay) for a set of cards bought together."""
    rules = ruleset_of(state)
    cost = sum(rules.civ_cards[c].cost for c in buying)
    credit = sum(credits(state, nation, buying).values())
    return cost, credit, max(0, cost - credit)


def most_payable(state: GameState, nation: str) -> int:
    value, _ = sets_value(state, spendable_counts(state, nation), mining_commodities(state, nation))
    return value + state.nations[nation].treasury


def affordable(state: GameState, nation: str) -> list[str]:
    """Cards the nation could pay for on its own (each alone)."""
    most = most_payable(state, nation)
    return [c for c in buyable(state, nation) if price(state, nation, (c,))[2] <= most]


def auto_payment(state: GameState, nation: str, due: int) -> tuple[dict[str, int], int] | None:
    """The payment the engine chooses: least excess, then least treasury, then fewest cards (None: cannot pay)."""
    held = spendable_counts(state, nation)
    treasury = state.nations[nation].treasury
    if options_of(state).no_trading:
        return _money_payment(held, treasury, due)
    mining = mining_commodities(state, nation)
    names = list(held)
    ranges = [range(held[n] + 1) for n in names]
    size = 1
    for r in ranges:
        size *= len(r)
    if size > _SEARCH_LIMIT:  # whole sets only: still a valid, if not always the thriftiest, payment
        ranges = [(0, held[n]) for n in names]  # type: ignore[misc]
        if 2 ** len(names) > _SEARCH_LIMIT:
            return _greedy_payment(state, held, treasury, mining, due)
    plain, gains = _value_tables(state, names, held, mining)
    best: tuple[tuple[int, int, int, tuple[int, ...]], tuple[int, ...], int] | None = None
    for counts in product(*ranges):
        # sets_value's arithmetic from tables: this loop runs thousands of times for every prompt
        value = sum(table[c] for table, c in zip(plain, counts))
        value += max([0] + [g[c] for g, c in zip(gains, counts) if g is not None and c])
        from_treasury = max(0, due - value)
        if from_treasury > treasury:
            continue
        key = (max(0, value - due), from_treasury, sum(counts), tuple(counts))
        if best is None or key < best[0]:
            best = (key, counts, from_treasury)
    if best is None:
        return None
    return {n: c for n, c in zip(names, best[1]) if c}, best[2]


def _value_tables(
    state: GameState, names: list[str], held: dict[str, int], mining: tuple[str, ...]
) -> tuple[list[list[int]], list[list[int] | None]]:
    """Per commodity and count: the set's value, and what Mining would add to it (None: Mining cannot enlarge it).

    The same numbers ``sets_value`` gives (n² × face value, Mining's best gain once), looked up instead of recomputed."""
    known = commodity_kinds(state)
    plain = [[known[n].set_value(c) if c else 0 for c in range(held[n] + 1)] for n in names]
    gains: list[list[int] | None] = [
        [known[n].set_value(c + 1) - known[n].set_value(c) for c in range(held[n] + 1)] if n in mining else None
        for n in names
    ]
    return plain, gains


def _greedy_payment(
    state: GameState, held: dict[str, int], treasury: int, mining: tuple[str, ...], due: int
) -> tuple[dict[str, int], int] | None:
    """For very varied hands: whole sets from the least valuable up until treasury can make up the rest."""
    known = commodity_kinds(state)
    sets: dict[str, int] = {}
    for name in sorted(held, key=lambda n: (known[n].set_value(held[n]), n)):
        if sets_value(state, sets, mining)[0] + treasury >= due:
            break
        sets[name] = held[name]
    value, _ = sets_value(state, sets, mining)
    if value + treasury < due:
        return None
    return dict(sorted(sets.items())), max(0, due - value)


def _money_payment(held: dict[str, int], treasury: int, due: int) -> tuple[dict[str, int], int] | None:
    """No-Trading: the money cards adding up closest above what is due, by subset sums over their values.

    Values add (NT-13), so every total the cards can make is found once, with
    the fewest cards; then the same order as for commodities applies.
    """
    reach: dict[int, tuple[str, ...]] = {0: ()}
    for card in sorted(c for c, n in held.items() for _ in range(n)):
        for total, used in list(reach.items()):
            more = total + money_value(card)
            if more not in reach or len(reach[more]) > len(used) + 1:
                reach[more] = used + (card,)
    best: tuple[tuple[int, int, int], tuple[str, ...], int] | None = None
    for total, used in reach.items():
        from_treasury = max(0, due - total)
        if from_treasury > treasury:
            continue
        key = (max(0, total - due), from_treasury, len(used))
        if best is None or key < best[0]:
            best = (key, used, from_treasury)
    if best is None:
        return None
    pay: dict[str, int] = {}
    for card in best[1]:
        pay[card] = pay.get(card, 0) + 1
    return pay, best[2]


def take_from_hand(hand: tuple[str, ...], cards: dict[str, int]) -> tuple[tuple[str, ...], list[str]]:
    left = dict(cards)
    kept, gone = [], []
    for card in hand:
        if left.get(card, 0) > 0:
            left[card] -= 1
            gone.append(card)
        else:
            kept.append(card)
    return tuple(kept), gone


def sees_hand(viewer: str, nation: str) -> bool:
    return viewer in ("moderator", "auditor") or viewer == f"player:{nation.lower()}"

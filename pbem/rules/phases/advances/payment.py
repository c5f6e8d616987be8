"""Phase 12: which civilization cards a nation may buy, what they cost after credits, and how it pays (§31, §28.51, §28.53).

When a player leaves the payment to the engine, it pays with the least
excess, then the least treasury, then the fewest cards.
"""

from __future__ import annotations

from bisect import bisect_right

from pbem.rules.board.commodities import (
    commodity_kinds,
    mining_commodities,
    sets_value,
    spendable_counts,
)
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.model import money_value
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

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


def affords_a_card(state: GameState, nation: str) -> bool:
    """Whether `affordable` lists any card: priced up to the first it finds (phase 12 asks this of every nation
    whenever it settles)."""
    most = most_payable(state, nation)
    return any(price(state, nation, (c,))[2] <= most for c in buyable(state, nation))


def auto_payment(state: GameState, nation: str, due: int) -> tuple[dict[str, int], int] | None:
    """The payment the engine chooses: least excess, then least treasury, then fewest cards (None: cannot pay)."""
    return Payments(state, nation).choose(due)


class Payments:
    """`auto_payment` of one nation's hand for any sum due, the hand's payments listed once.

    A purchase prompt asks for the payment of every card and every bundle the
    nation can afford, from the same hand: listing the hand's payments (up
    to ``_SEARCH_LIMIT``) once and answering each sum from the list gives
    the same payments as listing them again for each.
    """

    def __init__(self, state: GameState, nation: str) -> None:
        self.held = spendable_counts(state, nation)
        self.treasury = state.nations[nation].treasury
        self._state = state
        self._greedy = self._money = False
        self._mining: tuple[str, ...] = ()
        if parts_of(state).deck.pays_face_values:  # NT-13: money cards pay their face values
            self._money = True
            return
        self._mining = mining_commodities(state, nation)
        names = list(self.held)
        ranges: list = [range(self.held[n] + 1) for n in names]
        size = 1
        for r in ranges:
            size *= len(r)
        if size > _SEARCH_LIMIT:  # whole sets only: still a valid, if not always the thriftiest, payment
            ranges = [(0, self.held[n]) for n in names]
            if 2 ** len(names) > _SEARCH_LIMIT:
                self._greedy = True
                return
        self._names = names
        # value -> the payment of that value with the fewest cards, then the least counts in the hand's order
        self._best: dict[int, tuple[int, tuple[int, ...]]] = {}
        for value, cards, counts in _payments(state, names, self.held, self._mining, ranges):
            known = self._best.get(value)
            if known is None or (cards, counts) < known:
                self._best[value] = (cards, counts)
        self._values = sorted(self._best)

    def choose(self, due: int) -> tuple[dict[str, int], int] | None:
        """Least excess, then least treasury, then fewest cards, then the least counts (None: cannot pay).

        Any payment of at most ``due`` that the treasury can make up has no
        excess, so the largest such value wins; failing one, the smallest
        value above ``due``, which needs no treasury."""
        if self._money:
            return _money_payment(self.held, self.treasury, due)
        if self._greedy:
            return _greedy_payment(self._state, self.held, self.treasury, self._mining, due)
        values = self._values
        at = bisect_right(values, due)  # values[:at] are at most due
        if at and due - values[at - 1] <= self.treasury:
            value = values[at - 1]
        elif at < len(values):
            value = values[at]
        else:
            return None
        counts = self._best[value][1]
        return {n: c for n, c in zip(self._names, counts) if c}, max(0, due - value)


def _payments(
    state: GameState, names: list[str], held: dict[str, int], mining: tuple[str, ...], ranges: list
) -> list[tuple[int, int, tuple[int, ...]]]:
    """(value, cards, counts) of every payment of ``ranges``' counts: sets_value's arithmetic from tables,
    each commodity's counts added to every payment of the ones before it."""
    plain, gains = _value_tables(state, names, held, mining)
    partial: list[tuple[int, int, int, tuple[int, ...]]] = [(0, 0, 0, ())]  # (plain value, cards, Mining's gain, counts)
    for values, gain, counts in zip(plain, gains, ranges):
        steps = [(c, values[c], gain[c] if gain is not None and c else 0) for c in counts]
        partial = [(v + add, k + c, g if g >= more else more, t + (c,))
                   for v, k, g, t in partial for c, add, more in steps]
    return [(v + g, k, t) for v, k, g, t in partial]


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

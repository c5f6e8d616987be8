"""Trade for a bot (phase 10): offers that improve its own hand, and the offers worth accepting.

A random bot takes a random choice. Greedy and planner bots trade as a
patient person would: accept an offer worth taking, otherwise make an offer
and wait for an answer (``WAIT``: the driver lets someone else act, or the
deadline close the phase), and finish once the turn has seen enough offers.

A planner values a hand as its commodity sets are worth (n² × face value,
§28.51) less a price for each calamity it holds. Its offers give away what
its sets miss least, with its tradable calamities among the unnamed cards
(§28.2 allows that), and ask by name for the cards that enlarge its largest
sets. It accepts an offer when the named cards it would receive, less its
fear of what the unnamed ones hide, are worth more than what it gives.
Bots see only their own hands and the offers to them, as people do; whether
an offer can still be taken (its offerer may have traded the cards away) is
what the prompt says, by listing it among its ACCEPT lines or not.

At a small table the two cards an offer names are seldom both in one
partner's hand, and an offer nobody takes used to end a planner's trading
for the turn. So once everyone it went to has passed it over for an offer
of his own, a planner at a table of three replaces it with one asking for
other cards, up to ``TABLE_OFFERS`` offers a turn (three players: 20 → 24
of 30 games ending by themselves, docs/bots.md). Under Small Cities the
three-player games stalled the same way (short of the money for the cards
of spaces 10 and 13 to 15), and there ``SMALL_CITIES_TABLE_OFFERS`` allows
eighteen (22 → 24 of 30); base games keep twelve, so they play as before.
"""

from __future__ import annotations

import random
from collections import Counter

from pbem.rules.board.commodities import commodity_kinds
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.state import GameState
from pbem.rules.phases.trade import open_offers, write_ask, write_cards, write_give
from pbem.rules.phases.trade.offers import Offer
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

from .lookahead import nation_of, try_orders

WAIT = ""  # no reply for now: the bot waits for an answer to its open offer
OFFERS_PER_PLAYER = 2  # offers a turn, per player, before bots stop offering
CALAMITY_PRICE = 25  # what holding a calamity costs a hand, to a planner
TABLE_OFFERS = 12  # a planner's offers a turn at a small table, asked anew while turned down
SMALL_CITIES_TABLE_OFFERS = 18  # the same under Small Cities (docs/bots.md, three-player games)
SMALL_TABLE = 3  # nations at most at a small table
UNSEEN_RISK = 1  # what an unnamed card in an offer is feared to cost, to a planner


def trade(prompt: Prompt, rng: random.Random, state: GameState, strategy: str) -> str:
    nation = nation_of(state, prompt)
    if strategy == "planner" and nation is not None:
        return _planned_trade(prompt, state, nation)
    accepts = [c for c in prompt.choices if c.startswith("ACCEPT")]
    if accepts:
        return rng.choice(accepts)
    if any(c.startswith("WITHDRAW") for c in prompt.choices):
        return WAIT
    offers = [c for c in prompt.choices if c.startswith("OFFER")]
    if offers and _offers_made(state) < OFFERS_PER_PLAYER * len(state.nations):
        return rng.choice(offers)
    return "FINISH"


def _offers_made(state: GameState) -> int:
    return int(state.filed.get("count", (0,))[0])


def hand_worth(state: GameState, hand: Counter) -> float:
    """Commodity sets at their value, less the price of each calamity held."""
    known = commodity_kinds(state)
    calamities = ruleset_of(state).calamities
    worth = 0.0
    for card, count in hand.items():
        if card in known:
            worth += known[card].set_value(count)
        elif card in calamities:
            worth -= CALAMITY_PRICE * count
    return worth


def _tradable(state: GameState, card: str) -> bool:
    rules = ruleset_of(state)
    return rules.calamities[card].tradable if card in rules.calamities else card in commodity_kinds(state)


def _cheapest(state: GameState, hand: Counter, count: int, keep: Counter | None = None) -> list[str]:
    """``count`` tradable cards whose loss costs the hand least: calamities first, then one at a time."""
    left = Counter(hand)
    keep = keep or Counter()
    out: list[str] = []
    for _ in range(count):
        options = [c for c in left if left[c] > keep[c] and _tradable(state, c)]
        if not options:
            break

        def loss(card: str) -> float:
            fewer = Counter(left)
            fewer[card] -= 1
            return hand_worth(state, left) - hand_worth(state, fewer)

        card = min(options, key=lambda c: (loss(c), c))
        left[card] -= 1
        out.append(card)
    return out


def _acceptance(state: GameState, nation: str, offer) -> tuple[float, tuple[str, ...]] | None:
    hand = Counter(state.nations[nation].hand)
    if any(hand[c] < k for c, k in Counter(offer.ask_named).items()):
        return None
    rest = Counter(hand)
    rest.subtract(Counter(offer.ask_named))
    extra = _cheapest(state, +rest, offer.ask_count - len(offer.ask_named))
    if len(extra) < offer.ask_count - len(offer.ask_named):
        return None
    giving = tuple(offer.ask_named) + tuple(extra)
    after = Counter(hand)
    after.subtract(Counter(giving))
    after.update(offer.give_named)
    gain = hand_worth(state, +after) - hand_worth(state, hand) - UNSEEN_RISK * len(offer.give_hidden)
    return gain, giving


def _stack_of(state: GameState) -> dict[str, int]:
    return {c.name: s.number for s in ruleset_of(state).stacks for c in s.commodities}


def _wanted(state: GameState, hand: Counter, count: int, asked: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The commodities (by name, possibly twice) that would raise the hand's worth most.

    Weighed by how likely another player holds one: every city draws from
    stack 1, only the ninth from stack 9 (§27.1)."""
    known = commodity_kinds(state)
    stack = _stack_of(state)
    out: list[str] = []
    grown = Counter(hand)
    power = 2 if _small(state) else 1  # two partners hold few cards: ask for those every city draws
    for _ in range(count):
        options = [c for c in known if c in grown and grown[c] < known[c].copies and c not in asked]
        if not options:
            break

        def likely_gain(c: str) -> float:
            return (known[c].set_value(grown[c] + 1) - known[c].set_value(grown[c])) / stack.get(c, 1) ** power

        card = max(options, key=lambda c: (likely_gain(c), c))
        grown[card] += 1
        out.append(card)
    return tuple(out)


def _planned_trade(prompt: Prompt, state: GameState, nation: str) -> str:
    offers = open_offers(state)
    takeable = {c.split()[1] for c in prompt.choices if c.startswith("ACCEPT ")}  # the prompt says which can be made
    worth_taking = []
    for offer in offers:
        if nation in offer.to and str(offer.number) in takeable:
            found = _acceptance(state, nation, offer)
            if found is not None and found[0] >= 0:
                worth_taking.append((-found[0], offer.number, f"ACCEPT {offer.number} GIVING {write_cards(found[1])}"))
    for _, _, line in sorted(worth_taking):
        if try_orders(state, prompt.player_id, line) is not None:
            return line
    numbers = ruleset_of(state).numbers
    others = sorted({n for c in prompt.choices if c.startswith("OFFER") for n in c[6:c.index(":")].split(", ")})
    mine = next((o for o in offers if o.offerer == nation), None)
    made = _offers_made(state)
    if mine is not None and not (_small(state) and _turned_down(offers, mine, others)):
        return WAIT
    hand = Counter(state.nations[nation].hand)
    size = numbers["trade_min_cards"]
    asked = frozenset(mine.ask_named) if mine is not None else frozenset()
    wanted = _wanted(state, hand, numbers["trade_named_cards"], asked)
    if not others or made >= _offer_limit(state) or len(wanted) < numbers["trade_named_cards"]:
        return WAIT if mine is not None else "FINISH"
    giving = _cheapest(state, hand, size, keep=Counter())
    named = [c for c in giving if c in commodity_kinds(state)][: numbers["trade_named_cards"]]
    if len(named) < numbers["trade_named_cards"] or len(giving) < size:
        return "FINISH"
    hidden = list(giving)
    for c in named:
        hidden.remove(c)
    replacing = f" REPLACES {mine.number}" if mine is not None else ""
    return (f"OFFER {', '.join(others)}: {write_give(tuple(named), tuple(hidden))} "
            f"FOR {write_ask(wanted, size)}{replacing}")


def _small(state: GameState) -> bool:
    """A table of three nations or fewer: where an offer's named cards are seldom in one partner's hand.

    Only there does a planner ask anew and weigh its asks by the square of the stack: at four players and
    more, asking anew traded no more games to their end and multiplied the trade letters each player reads
    (`make demo`'s mailbox, docs/performance.md: 10-12 letters a turn became 13-15)."""
    return len(state.nations) <= SMALL_TABLE


def _offer_limit(state: GameState) -> int:
    """Offers a turn before planners stop offering: TABLE_OFFERS at a small table, two per player elsewhere."""
    if not _small(state):
        return OFFERS_PER_PLAYER * len(state.nations)
    return SMALL_CITIES_TABLE_OFFERS if parts_of(state).pieces.towns else TABLE_OFFERS  # towns: Small Cities


def _turned_down(offers: list[Offer], mine: Offer, others: list[str]) -> bool:
    """Has everyone the offer went to passed it over for an offer of his own (so it is worth asking anew)?

    A bot that could take an offer takes it before it offers, so once each
    of them has an open offer of its own, the cards asked for are not to be
    had from them this turn. Only planners ask anew, up to the turn's offers."""
    offering = {o.offerer for o in offers}
    return bool(others) and all(n in offering for n in mine.to if n in others)

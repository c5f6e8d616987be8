"""What a bot's seat may know: the game with everything hidden from it replaced by a guess.

A person at the table sees his own hand, the board, the public counts, the
offers made to him and the calamities face up; he does not see another
hand, the order of a stack or of the calamity pile, the offers that pass
between two others, who traded a calamity to whom, or whether another
nation volunteers for calamities. A bot plays by the same visibility model
(pbem.rules.view) because it is given, instead of the game, `in_sight`:
the same game with each of those replaced by a guess it cannot tell from
the truth. Its lookahead then runs the pure engine on the guess, as a
person would reason about a board with face-down cards.

The guess: the cards of each pile (stack number, or money pile under
No-Trading) that the seat cannot see, in the other hands and in the pile,
are dealt out again at random, each hand keeping its size and how many
cards of each pile it holds. That keeps every count the engine checks
(stack sizes, hand sizes, the cards conserved). What the other hands
hold of each pile is the one thing the guess keeps that a player could
only estimate; no bot reads another hand, so it reaches only the engine's
own checks inside a lookahead. Cards a player has shown stay where they
are: those named in his open offers to the seat, and Water set aside
against a Famine (NT-12). The cards an offer gives without naming them
are guessed from its offerer's guessed hand, so an offer the prompt lists
as one to take can be taken in the guess too.

The guess is drawn from a generator seeded by the game, the version and
the nation (all public), not from the bot's own generator, so the bot's
choices stay reproducible from its seed and two workers make the same
guess.
"""

from __future__ import annotations

import random
from collections import Counter

from pbem.rules.core.frozen import FrozenMap, replace
from pbem.rules.core.state import GameState, NationState
from pbem.rules.phases.trade.offers import open_offers
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

__all__ = ["in_sight"]


def in_sight(state: GameState, nation: str | None) -> GameState:
    """``state`` as ``nation``'s seat may know it (the whole game when no nation is chosen yet: nothing is dealt)."""
    if nation is None or nation not in state.nations or not state.players:
        return state
    rng = random.Random(f"sight:{state.game_id}:{state.version}:{nation}")
    shown = _shown(state, nation)
    state = _dealt_again(state, nation, shown, rng)
    return _private_left_out(state, nation)


def _shown(state: GameState, nation: str) -> dict[str, Counter[str]]:
    """The cards each other nation has shown the seat: named in an open offer to it, or set aside (NT-12)."""
    shown: dict[str, Counter[str]] = {}
    for name, n in state.nations.items():
        if name != nation:
            shown[name] = Counter(n.set_aside)
    for offer in open_offers(state):
        if offer.offerer != nation and nation in offer.to:
            held = Counter(state.nations[offer.offerer].hand)
            wanted = shown[offer.offerer] | Counter(offer.give_named)
            shown[offer.offerer] = wanted & held  # what he no longer holds he cannot show
    return shown


def _pile_of(state: GameState) -> dict[str, int]:
    """Each card's pile: where its copies lie now, else the pile the game's deck returns it to (-1: none)."""
    piles = {card: number for number, cards in state.stacks.items() for card in cards}
    rules, deck = ruleset_of(state), parts_of(state).deck
    for n in state.nations.values():
        for card in n.hand:
            if card not in piles:
                try:
                    piles[card] = deck.pile_of(rules, card)
                except (KeyError, ValueError):
                    piles[card] = -1  # a card of no pile stays where it is
    return piles


def _dealt_again(state: GameState, nation: str, shown: dict[str, Counter[str]], rng: random.Random) -> GameState:
    piles = _pile_of(state)
    hidden: dict[int, list[str]] = {}  # pile -> the cards of it the seat cannot see
    slots: dict[str, Counter[int]] = {}  # other nation -> how many unseen cards of each pile it holds
    kept: dict[str, list[str]] = {}
    for name, n in state.nations.items():
        if name == nation:
            continue
        left = Counter(shown.get(name, Counter()))
        kept[name], slots[name] = [], Counter()
        for card in n.hand:
            pile = piles.get(card, -1)
            if left[card] > 0 or pile < 0:
                left[card] -= 1
                kept[name].append(card)
            else:
                slots[name][pile] += 1
                hidden.setdefault(pile, []).append(card)
    for number, cards in state.stacks.items():
        hidden.setdefault(number, []).extend(cards)
    for number in sorted(hidden):  # sorted first: the guess depends on which cards are unseen, never on where
        hidden[number].sort()
        rng.shuffle(hidden[number])
    nations = state.nations
    for name in sorted(slots):
        hand = list(kept[name])
        for pile in sorted(slots[name]):
            hand.extend(hidden[pile].pop() for _ in range(slots[name][pile]))
        nations = nations.set(name, replace(nations[name], hand=tuple(sorted(hand))))
    stacks = FrozenMap({number: tuple(hidden.get(number, ())) for number in state.stacks})
    pile = sorted(state.calamity_pile)
    rng.shuffle(pile)
    return replace(state, nations=nations, stacks=stacks, calamity_pile=tuple(pile))


def _hidden_guessed(state: GameState, record: tuple) -> tuple:
    """An offer to the seat with the cards it does not name guessed from the offerer's guessed hand.

    The seat sees how many unnamed cards an offer gives, not which; the engine checks that the offerer
    holds them all when the offer is taken, so in the guess he holds the ones the guess says."""
    number, offerer, to, named, hidden, *rest = record
    spare = Counter(state.nations[offerer].hand) - Counter(named)
    return (number, offerer, to, named, tuple(sorted(spare.elements())[:len(hidden)]), *rest)


def _private_left_out(state: GameState, nation: str) -> GameState:
    """Leave out what passes between others: their offers to each other, declines, calamity givers, volunteering."""
    filed = state.filed
    if "offers" in filed:
        seen = [r for r in filed["offers"] if r[1] == nation or nation in r[2]]
        filed = filed.set("offers", tuple(r if r[1] == nation else _hidden_guessed(state, r) for r in seen))
    if "declined" in filed:
        filed = filed.set("declined", tuple(r for r in filed["declined"] if nation in (r[1], r[2])))
    givers = tuple(g for g in state.calamity_givers if nation in (g[0], g[2]))
    nations = state.nations
    for name, n in state.nations.items():
        if name != nation and n.volunteers:
            nations = nations.set(name, replace(n, volunteers=NationState.volunteers))
    return replace(state, filed=filed, calamity_givers=givers, nations=nations)

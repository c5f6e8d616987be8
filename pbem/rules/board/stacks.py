"""The trade-card stacks between turns: cards returned during a turn, and 13b restacking.

Cards leave the game's hands in several phases (spent on civilization cards,
discarded over the hand limit, calamities once resolved) and wait in
``state.returned`` until 13b puts them under their stacks (R-2.4, D-22,
§29.7, §31.8). Every card is always in exactly one place: a stack, a hand, a
calamity being resolved, or waiting for 13b (`cards_not_conserved`).

Under No-Trading the stacks are the money piles and a card goes back to the
pile of its type; the calamities have a pile of their own, kept under number
0 while waiting; at 13b every pile that took a card back is shuffled whole
(NT-15).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import FrozenMap, replace
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.model import Ruleset
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of


def return_cards(state: GameState, cards: list[str]) -> GameState:
    """Cards leaving play this turn wait in ``state.returned``, by stack, for 13b."""
    rules = ruleset_of(state)
    deck = parts_of(state).deck
    returned = state.returned
    for card in cards:
        number = deck.pile_of(rules, card)
        returned = returned.set(number, tuple(returned.get(number, ())) + (card,))
    return replace(state, returned=returned)


def stacks_data(stacks: FrozenMap[int, tuple[str, ...]] | dict[int, Any]) -> dict[str, list[str]]:
    """The stacks as event data: stack number (as text) -> cards, the top card first."""
    return {str(n): list(cards) for n, cards in sorted(stacks.items())}


def stacks_from(data: dict[str, Any]) -> dict[int, tuple[str, ...]]:
    """The stacks from event data (the inverse of `stacks_data`)."""
    return {int(n): tuple(cards) for n, cards in data.items()}


def full_deck(ruleset: Ruleset) -> Counter[str]:
    """Every trade card of the game by name (fact sheet §4: 126 cards)."""
    deck: Counter[str] = Counter()
    for stack in ruleset.stacks:
        deck.update({c.name: c.copies for c in stack.commodities})
        deck.update(c for c in (stack.non_tradable_calamity, stack.tradable_calamity) if c)
    return deck


def money_deck(ruleset: Ruleset) -> Counter[str]:
    """No-Trading: every money card and every calamity (NT-2, NT-17)."""
    deck: Counter[str] = Counter(c for pile in ruleset.money_piles for c in pile.cards())
    deck.update(list(ruleset.calamities))
    return deck


def cards_not_conserved(state: GameState) -> list[str]:
    """Once the stacks are set up from the data, every card is in a stack, a hand, a calamity being resolved or waiting for 13b.

    Meant for whole games (bot games, replays); hand-made test positions with a
    few cards in the stacks do not hold the whole deck.
    """
    if not state.stacks:
        return []
    seen: Counter[str] = Counter()
    for cards in (*state.stacks.values(), *state.returned.values(), *(n.hand for n in state.nations.values())):
        seen.update(cards)
    if parts_of(state).deck.calamities_apart:  # a calamity being resolved is face up, and counted there (NT-2)
        seen.update(state.calamity_pile)
        seen.update(c for c, _ in state.calamities_face_up)
        deck = money_deck(ruleset_of(state))
    else:
        seen.update(c[0] for c in state.calamities)
        deck = full_deck(ruleset_of(state))
    if seen == deck:
        return []
    return [f"trade cards not conserved: missing {dict(deck - seen)}, extra {dict(seen - deck)}"]


def restack(state: GameState, draws: Draws) -> list[Event]:
    """13b: put every returned card under its stack (R-2.4, D-22, §29.7, §31.8).

    Per stack, the returned commodities and tradable calamities are shuffled and
    put under the stack, then the stack's non-tradable calamity (if it was
    returned) at the very bottom. Returns [] when nothing was returned.
    """
    if not any(state.returned.values()):
        return []
    if not parts_of(state).deck.returned_under_stacks:
        return [_reshuffle(state, draws)]  # NT-15
    ruleset = ruleset_of(state)
    result: dict[int, tuple[str, ...]] = {}
    returned: dict[str, list[str]] = {}
    for number, cards in sorted(state.returned.items()):
        if not cards:
            continue
        non_tradable = ruleset.stacks[number - 1].non_tradable_calamity if 0 < number <= len(ruleset.stacks) else None
        bottom = [c for c in cards if c == non_tradable]
        tradable = draws.shuffle([c for c in cards if c != non_tradable], f"{state.version}:restack:{number}")
        result[number] = tuple(state.stacks.get(number, ())) + tuple(tradable) + tuple(bottom)
        returned[str(number)] = list(cards)
    data = {"returned": returned, "stacks": stacks_data(result)}
    return [Event("CardsRestacked", data, ("R-2.4", "D-22", "§29.7", "§31.8"))]


def _reshuffle(state: GameState, draws: Draws) -> Event:
    """13b under No-Trading: each pile that took a card back this turn is shuffled as a whole (NT-15)."""
    piles: dict[int, tuple[str, ...]] = {}
    returned: dict[str, list[str]] = {}
    calamities: list[str] | None = None
    for number, cards in sorted(state.returned.items()):
        if not cards:
            continue
        returned[str(number)] = list(cards)
        if number == 0:
            calamities = draws.shuffle([*state.calamity_pile, *cards], f"{state.version}:reshuffle:calamities")
        else:
            piles[number] = tuple(draws.shuffle([*state.stacks.get(number, ()), *cards], f"{state.version}:reshuffle:{number}"))
    data = {"returned": returned, "stacks": stacks_data(piles), "calamities": calamities}
    return Event("PilesReshuffled", data, ("NT-15",))


def apply_reshuffled(state: GameState, data: dict[str, Any]) -> GameState:
    """``PilesReshuffled``: the piles after 13b under No-Trading; nothing waits any more."""
    stacks = state.stacks
    for number, cards in stacks_from(data["stacks"]).items():
        stacks = stacks.set(number, cards)
    pile = tuple(data["calamities"]) if data["calamities"] is not None else state.calamity_pile
    return replace(state, stacks=stacks, calamity_pile=pile, returned=FrozenMap())


def tell_reshuffled(state: GameState, event: Event, viewer: str) -> str:
    """What 13b did under No-Trading, in counts."""
    parts = [f"{len(c)} back into pile {n}" for n, c in sorted(stacks_from(event.data["returned"]).items()) if n]
    if event.data["calamities"] is not None:
        parts.append(f"{len(event.data['returned']['0'])} calamities back into the calamity pile")
    return "Piles that took cards back were shuffled whole: " + "; ".join(parts) + "."


def apply_restacked(state: GameState, data: dict[str, Any]) -> GameState:
    """``CardsRestacked``: the stacks after 13b; nothing waits any more."""
    stacks = state.stacks
    for number, cards in stacks_from(data["stacks"]).items():
        stacks = stacks.set(number, cards)
    return replace(state, stacks=stacks, returned=FrozenMap())


def tell_restacked(state: GameState, event: Event, viewer: str) -> str:
    """What 13b did, in counts: which stacks took how many cards back (names stay hidden)."""
    counts = ", ".join(f"{len(c)} under stack {n}" for n, c in sorted(stacks_from(event.data["returned"]).items()))
    return f"Returned trade cards were shuffled and put under their stacks: {counts}."

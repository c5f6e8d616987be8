"""What a variant changes, chosen once per game: the deck, the pieces on the board, the calamity procedure.

The phases do not test variant options by name. They ask the game's parts
(`rulebook.parts_of(state)`): the deck it plays with (the nine trade stacks of
§15.2, or the No-Trading money piles of RULINGS.md §4.2), the kinds of pieces
on its board (cities, or cities and the towns of Small Cities, §4.1) and its
calamity procedure (cards traded and drawn, or the No-Trading roll). Each part
is a plain class whose subclass overrides what its variant changes, the way a
per-title class overrides the base game's steps; every override names the
RULINGS clause (SC-n, NT-n) it implements. `parts_for` is the one place that
reads the variant options and chooses them (docs/architecture.md, "Where a
variant plugs in").

The parts hold no state of their own and no phase logic: they answer with
numbers, words and yes/no facts of the game, so the phases that ask them stay
the one place each procedure is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from pbem.rules.core.state import GameState
from pbem.rules.ruleset.model import Ruleset, money_type, money_value
from pbem.rules.ruleset.options import Options

# -- the deck ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MoneyKind:
    """A money card of No-Trading seen as a commodity: its cards pay their face values added up (NT-13)."""

    name: str
    value: int

    def set_value(self, count: int) -> int:
        return self.value * count


@lru_cache(maxsize=8)
def _money_kinds(ruleset: Ruleset) -> dict[str, MoneyKind]:
    return {card: MoneyKind(card, money_value(card)) for pile in ruleset.money_piles for card in pile.cards()}


class Deck:
    """The base game's deck: nine trade stacks of commodities, calamities shuffled in (§15.2, §27)."""

    #: A card drawn from it, and where it is drawn from, in the players' words.
    card = "trade card"
    pile = "stack"
    #: What the cards that pay for advances are called (§31).
    paying_card = "commodity"
    #: How a prompt names the deck's cards at the start of a sentence ("Trade cards are drawn ...").
    title = "Trade"
    #: Phases this deck renames (phase id -> title); the others keep `turn.PHASE_TITLES`.
    phase_titles: Mapping[str, str] = MappingProxyType({})
    #: A separate pile of calamities, set up and drawn apart from the deck (NT-2); here they are in the stacks.
    calamities_apart = False
    #: Cards go back under their own stacks at 13b (R-2.4, §29.7, §31.8); the money piles are reshuffled instead (NT-15).
    returned_under_stacks = True
    #: Commodities pay by sets, n cards n² times the value (§28.51); money cards pay their face values (NT-13).
    pays_face_values = False
    #: Mining may enlarge a set (Q-NT8: never a money card).
    mining = True
    #: Cards are bought from the buyer's own highest pile (NT-5) rather than the one purchase stack (§27.51).
    buys_own_pile = False
    #: The cites of one phase 6 draw (seed 001: 6A, Q-S3).
    draw_cites: tuple[str, ...] = ("seed 001: 6A", "Q-S3", "§27.1", "§27.4")
    #: The cites of one phase 6 purchase, and the rule a refused purchase names.
    buy_cites: tuple[str, ...] = ("seed 001: 6", "§27.51")
    buy_rule = "§27.51"
    #: The rule a refused discard at the hand limit names, and how the prompt says what to give up.
    hand_limit_rule = "§31.71"
    discard_help = "give up, e.g. DISCARD Ochre 2, Hides 1. They go back under their stacks; how many you keep is public."

    def missing_data(self, rules: Ruleset) -> tuple[str, str] | None:
        """Why a game cannot be played with this deck on ``rules`` (the reason and its ruling), or None."""
        return None

    def pile_count(self, rules: Ruleset) -> int:
        """How many stacks there are to draw from (§27.2)."""
        return len(rules.stacks)

    def pile_of(self, rules: Ruleset, card: str) -> int:
        """The stack a returned card goes back under at 13b (R-2.4, §29.7, §31.8)."""
        return rules.stack_of(card).number

    def price(self, rules: Ruleset) -> int:
        """Treasury paid for one card bought in phase 6 (§27.51)."""
        return rules.gold_ivory_price

    def purchase_number(self, rules: Ruleset, draws: int) -> int:
        """The stack cards are bought from: stack 9 (§27.51), whatever the buyer draws."""
        return rules.purchase_stack

    def hand_limit(self, rules: Ruleset) -> int:
        """Cards a nation keeps after 12a (§31.71)."""
        return rules.hand_limit

    def kinds(self, rules: Ruleset) -> dict[str, Any]:
        """Every paying card of the ruleset by name, with its face and set values (§28.51)."""
        return {c.name: c for s in rules.stacks for c in s.commodities}

    def seen_by_others(self, card: str) -> str | None:
        """What a player sees of another's card: nothing of a trade card (§27; only how many)."""
        return None


class MoneyPiles(Deck):
    """No-Trading: nine money piles, one per type, and the calamities in a pile of their own (RULINGS.md §4.2)."""

    card = "money card"  # NT-3
    pile = "pile"  # NT-3: the money piles
    paying_card = "money"  # NT-13
    title = "Money"  # NT-3
    phase_titles = MappingProxyType({"trade-card-acquisition": "6. Money cards acquisition"})  # NT-4
    calamities_apart = True  # NT-2
    returned_under_stacks = False  # NT-15: the piles are reshuffled at 13b
    pays_face_values = True  # NT-13, Q-NT9
    mining = False  # Q-NT8
    buys_own_pile = True  # NT-5, Q-NT3
    draw_cites = ("NT-4", "Q-NT2")
    buy_cites = ("NT-5", "Q-NT12")
    buy_rule = "NT-5"
    hand_limit_rule = "NT-13"
    discard_help = (  # NT-13, NT-15: money cards go back into their piles
        "give up, e.g. DISCARD Ore 3, Water 5. They go back into their piles; how many you keep is public.")

    def missing_data(self, rules: Ruleset) -> tuple[str, str] | None:
        """RULINGS.md §4.2: the money piles come from no_trading.json, which a house map may lack."""
        if rules.no_trading is None:
            return ("the No-Trading variant needs no_trading.json (its money piles) in the ruleset data, "
                    "and this house map has none", "RULINGS.md §4.2")
        return None

    def pile_count(self, rules: Ruleset) -> int:
        """NT-1: the nine money piles."""
        return len(rules.money_piles)

    def pile_of(self, rules: Ruleset, card: str) -> int:
        """NT-14: a money card goes back into its own pile."""
        return rules.money_pile_of(card).number

    def price(self, rules: Ruleset) -> int:
        """NT-5: the money price of a card."""
        return rules.no_trading.price if rules.no_trading else rules.gold_ivory_price

    def purchase_number(self, rules: Ruleset, draws: int) -> int:
        """NT-5, Q-NT3: the buyer's highest pile, pile 1 with no city."""
        return max(1, draws)

    def hand_limit(self, rules: Ruleset) -> int:
        """NT-13: the money hand limit."""
        return rules.no_trading.hand_limit if rules.no_trading else rules.hand_limit

    def kinds(self, rules: Ruleset) -> dict[str, Any]:
        """NT-13, Q-NT9: every money card is a kind of its own, paying its face value."""
        return _money_kinds(rules)

    def seen_by_others(self, card: str) -> str | None:
        """Q-NT1: the others see a money card's type, never its value."""
        return money_type(card)


# -- the pieces on the board ------------------------------------------------------------------


class Pieces:
    """The base game's pieces: population tokens, ships and cities; no towns."""

    #: Towns are on the board (SC-1).
    towns = False

    def draw_right(self, state: GameState, nation: str) -> int:
        """Stacks a nation may draw from before the cap: one per city on the board (§27.2)."""
        return state.cities_on_board(nation)

    def taxed_towns(self, state: GameState, nation: str) -> int:
        """Towns that pay tax: none."""
        return 0


class CitiesAndTowns(Pieces):
    """Small Cities: towns too, tokens face down, with their own support, tax and losses (RULINGS.md §4.1)."""

    towns = True  # SC-1

    def draw_right(self, state: GameState, nation: str) -> int:
        """SC-8: one more for every six towns (capped at the stacks by the phase, N = min(9, ...))."""
        return state.cities_on_board(nation) + state.towns_on_board(nation) // 6

    def taxed_towns(self, state: GameState, nation: str) -> int:
        """SC-12: every town on the board pays."""
        return state.towns_on_board(nation)


# -- the calamity procedure -------------------------------------------------------------------


class CalamityProcedure:
    """The base game's: calamities drawn with the trade cards, traded in phase 7 and selected in phase 8 (§28-§30)."""

    #: Phase 7 is played (NT-6: not under No-Trading).
    trading = True
    #: Phases this procedure renames (phase id -> title).
    phase_titles: Mapping[str, str] = MappingProxyType({})
    #: Phase 8 rolls how many calamities strike and phase 9 draws them one at a time (NT-7, NT-10).
    by_dice = False
    #: A calamity resolved stays face up until the next turn's phase 9 (NT-14) instead of going back under its stack.
    face_up_after = False
    #: The VOLUNTEER standing order (NT-8).
    volunteers = False
    #: A Pottery holder may set Water aside against a Famine (NT-12).
    water_set_aside = False

    def count_dice(self, rules: Ruleset, epoch: str) -> tuple[int, int]:
        """The die rolled for how many calamities strike, and what is added: none are rolled here (§29)."""
        raise ValueError("calamities are not rolled for in this game")


class RolledCalamities(CalamityProcedure):
    """No-Trading: no trade, and the dice decide how many calamities strike (RULINGS.md §4.2)."""

    trading = False  # NT-6
    phase_titles = MappingProxyType({"trade": "7. Trade (none: No-Trading)"})  # NT-6: phase 7 has nothing to do
    by_dice = True  # NT-7, NT-10
    face_up_after = True  # NT-14
    volunteers = True  # NT-8
    water_set_aside = True  # NT-12

    def count_dice(self, rules: Ruleset, epoch: str) -> tuple[int, int]:
        """NT-7: the sides of the die and what is added, by the most advanced epoch."""
        assert rules.no_trading is not None
        sides, add = rules.no_trading.calamity_dice[epoch]
        return sides, add


# -- the choice ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Parts:
    """The parts one game plays with, and the names of the variants that chose them (RULINGS.md §4)."""

    deck: Deck
    pieces: Pieces
    calamities: CalamityProcedure
    variants: tuple[str, ...] = ()


_BASE = Parts(Deck(), Pieces(), CalamityProcedure())


def parts_for(options: Options) -> Parts:
    """The one place the variant options are read: Small Cities (§4.1) and No-Trading (§4.2) choose their parts."""
    parts, variants = _BASE, []
    if options.small_cities:
        parts, variants = Parts(parts.deck, CitiesAndTowns(), parts.calamities), [*variants, "Small Cities"]
    if options.no_trading:
        parts, variants = Parts(MoneyPiles(), parts.pieces, RolledCalamities()), [*variants, "No-Trading"]
    return Parts(parts.deck, parts.pieces, parts.calamities, tuple(variants))

"""The ruleset as frozen records: the board, nations, A.S.T., civilization cards, trade stacks, calamities.

A :class:`Ruleset` is what the rules ask for every fact of the game instead of
carrying literals; `loader` builds it from the data files and checks them.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

CITY_SITES = ("none", "black", "white")
WATER_LINK_KINDS = ("coast-coast", "coast-sea", "sea-sea")
ROLES = ("primary", "secondary", "any")
DISPUTABLE = ("population_limit", "city_site", "coastal", "flood_plain")


class RulesetError(ValueError):
    """Bad ruleset data; the message names the file, the line and the problem."""


def frozen(mapping: Mapping[Any, Any]) -> Mapping[Any, Any]:
    """A read-only copy, so a loaded ruleset cannot be changed by the code that reads it."""
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Area:
    """A land area of the board (rule 4.2)."""

    name: str
    board: str                      # "main" or "western"
    population_limit: int
    city_site: str                  # "none", "black" (safe from Flood), "white"
    flood_plain: bool
    flood_plain_group: str | None   # connected flood-plain areas share a label
    volcano: str | None             # Thera, Vesuvius or Etna when one touches it
    coastal: bool                   # rule 4.24: sea coast, lakes excluded
    island: str | None              # island group, None on the two mainlands
    start_nation: str | None
    panel: str                      # "1", "2-3", "4" or "W"
    divider_side: str               # "W" or "E" of the dotted divider (4.7)
    disputed: Mapping[str, Mapping[str, str]]  # field -> source -> value

    @property
    def has_city_site(self) -> bool:
        return self.city_site != "none"


@dataclass(frozen=True)
class Water:
    """An all-water area; ``open_sea`` is the value chosen by option ``open-sea``."""

    name: str
    board: str
    open_sea: bool
    open_sea_vassal: bool
    open_sea_literal: bool
    note: str


@dataclass(frozen=True)
class WaterLink:
    """One undirected water boundary a ship can cross."""

    a: str
    b: str
    kind: str        # coast-coast, coast-sea or sea-sea
    confidence: str  # confirmed or single-source


@dataclass(frozen=True)
class Epoch:
    """An A.S.T. epoch and what it takes to step into it (rule 33.2)."""

    name: str
    cities: int
    civ_cards: int
    groups: int


@dataclass(frozen=True)
class AstTrack:
    """One nation's row of the A.S.T.: where each epoch starts, and points."""

    epoch_starts: Mapping[str, int]      # epoch name -> first space
    late_iron_points: Mapping[int, int]  # space -> civ-card points to enter
    points_per_space: int
    finish_space: int

    def epoch_at(self, space: int) -> str:
        """The epoch a space belongs to (space 0, the start arrow, is Stone Age)."""
        current = next(iter(self.epoch_starts))
        for name, first in self.epoch_starts.items():
            if space >= first:
                current = name
        return current


@dataclass(frozen=True)
class Nation:
    """A nation (set of pieces) with its A.S.T. row and start areas."""

    name: str
    ast_order: int
    start_areas: tuple[str, ...]
    ast_track: AstTrack
    colour: str | None
    replaces: str | None   # Iberia replaces Italy with the Western Extension


@dataclass(frozen=True)
class PlayerCountSetup:
    """Board, tokens and nations for one player count (rule 16)."""

    players: int
    tokens_per_player: int
    nations_allowed: tuple[str, ...]
    areas_in_play: frozenset[str]
    start_areas: Mapping[str, tuple[str, ...]]  # allowed nation -> in-play starts
    island_city_sites_ignored: bool
    note: str


@dataclass(frozen=True)
class Effect:
    """A machine-readable card ability; vocabulary in :data:`EFFECT_KINDS`."""

    kind: str
    params: Mapping[str, Any]

    def get(self, key: str, default: Any = None) -> Any:
        return self.params.get(key, default)

    @property
    def calamity(self) -> str | None:
        return self.params.get("calamity")


@dataclass(frozen=True)
class CivCard:
    """A civilization card (rule 32); ``credits`` are given toward other cards."""

    name: str
    cost: int
    groups: tuple[str, ...]
    prerequisite: str | None
    credits: Mapping[str, int]
    effects: tuple[Effect, ...]
    summary: str

    def effects_of(self, kind: str) -> tuple[Effect, ...]:
        return tuple(e for e in self.effects if e.kind == kind)


@dataclass(frozen=True)
class Commodity:
    name: str
    value: int
    copies: int

    def set_value(self, count: int) -> int:
        """n identical cards are worth n * n * value, capped at the copy count."""
        n = max(0, min(count, self.copies))
        return n * n * self.value


@dataclass(frozen=True)
class TradeStack:
    number: int
    commodities: tuple[Commodity, ...]
    non_tradable_calamity: str | None
    tradable_calamity: str | None

    @property
    def card_count(self) -> int:
        calamities = (self.non_tradable_calamity, self.tradable_calamity)
        return sum(c.copies for c in self.commodities) + sum(1 for c in calamities if c)


@dataclass(frozen=True)
class MoneyPile:
    """One pile of money cards of the No-Trading variant (NT-3, NT-17): Outpost production cards of one type.

    A money card is named by its type and value, "Water 7": others see the type,
    only its holder the value (Q-NT1).
    """

    number: int
    type: str
    values: Mapping[int, int]   # value -> copies

    def cards(self) -> list[str]:
        """Every card of the pile, by value."""
        return [self.card(v) for v, n in sorted(self.values.items()) for _ in range(n)]

    def card(self, value: int) -> str:
        return f"{self.type} {value}"

    @property
    def card_count(self) -> int:
        return sum(self.values.values())


@dataclass(frozen=True)
class NoTrading:
    """The numbers of the No-Trading variant (seed 004; RULINGS.md §4.2), from ``no_trading.json``."""

    piles: tuple[MoneyPile, ...]
    price: int                                   # treasury per money card bought (NT-5)
    hand_limit: int                              # money cards kept after 12a (NT-13)
    calamity_dice: Mapping[str, tuple[int, int]]  # epoch -> (sides, add): the calamities of a turn (NT-7)


def money_value(card: str) -> int:
    """The face value of a money card ("Water 7" -> 7)."""
    return int(card.rsplit(" ", 1)[1])


def money_type(card: str) -> str:
    """The type of a money card ("New Chemicals 18" -> "New Chemicals"): what others may see of it."""
    return card.rsplit(" ", 1)[0]


@dataclass(frozen=True)
class Calamity:
    """A calamity (rule 30) with its printed numbers and the cards that change it."""

    name: str
    stack: int
    tradable: bool
    order: int                      # resolution order, 1..12 (rule 29.6)
    primary: Mapping[str, int]
    secondary: Mapping[str, int]
    derived: Mapping[str, str]      # further quantities a card effect may change
    favourable: tuple[str, ...]     # quantities the victim wants larger
    immune_nations: tuple[str, ...]
    reduced_by: tuple[str, ...]
    aggravated_by: tuple[str, ...]
    summary: str


@dataclass(frozen=True, eq=False)
class Ruleset:
    """Everything the engine knows about the game, loaded from data files.

    Compared and hashed by identity, so it can key caches.
    """

    name: str
    title: str
    data_dir: str
    options: Mapping[str, str]
    areas: Mapping[str, Area]
    waters: Mapping[str, Water]
    land_adjacency: Mapping[str, frozenset[str]]
    water_links: Mapping[str, frozenset[str]]   # ship graph: coasts and seas
    coast_links: Mapping[str, frozenset[str]]   # coast-coast water boundaries only
    water_link_records: tuple[WaterLink, ...]
    aliases: Mapping[str, str]
    nations: Mapping[str, Nation]
    epochs: tuple[Epoch, ...]
    player_counts: Mapping[int, PlayerCountSetup]
    civ_card_groups: tuple[str, ...]
    civ_cards: Mapping[str, CivCard]
    stacks: tuple[TradeStack, ...]
    calamities: Mapping[str, Calamity]
    gold_ivory_price: int
    purchase_stack: int
    cities_per_nation: int
    ships_per_nation: int
    tokens_per_nation: int
    hand_limit: int
    civ_card_copies: int
    numbers: Mapping[str, int]
    #: The No-Trading variant's numbers (None when the data has no no_trading.json: the variant cannot be played).
    no_trading: NoTrading | None = None

    @property
    def money_piles(self) -> tuple[MoneyPile, ...]:
        return self.no_trading.piles if self.no_trading else ()

    def area_names(self) -> tuple[str, ...]:
        """Land area names, sorted."""
        return tuple(sorted(self.areas))

    def credit(self, owned: str, buying: str) -> int:
        """Credit that owning ``owned`` gives toward buying ``buying`` (rule 31.5)."""
        for card in (owned, buying):
            if card not in self.civ_cards:
                raise KeyError(f"unknown civilization card {card!r}")
        return self.civ_cards[owned].credits.get(buying, 0)

    def setup_for(self, players: int) -> PlayerCountSetup:
        """The rule-16 set-up for a player count."""
        try:
            return self.player_counts[players]
        except KeyError:
            counts = ", ".join(str(n) for n in sorted(self.player_counts))
            raise ValueError(f"no set-up for {players} players (known: {counts})") from None

    def commodity(self, name: str) -> Commodity:
        for stack in self.stacks:
            for c in stack.commodities:
                if c.name == name:
                    return c
        raise KeyError(f"unknown commodity {name!r}")

    def stack_of(self, card: str) -> TradeStack:
        """The stack holding a commodity or calamity card."""
        for stack in self.stacks:
            names = [c.name for c in stack.commodities]
            names += [stack.non_tradable_calamity, stack.tradable_calamity]
            if card in names:
                return stack
        raise KeyError(f"unknown trade card {card!r}")

    def money_pile_of(self, card: str) -> MoneyPile:
        """The pile a money card belongs to (and goes back to)."""
        kind = money_type(card)
        for pile in self.money_piles:
            if pile.type == kind:
                return pile
        raise KeyError(f"unknown money card {card!r}")

    def calamity_order(self) -> tuple[str, ...]:
        """Calamity names in resolution order (rule 29.6)."""
        return tuple(sorted(self.calamities, key=lambda n: self.calamities[n].order))

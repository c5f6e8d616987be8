"""Game state as plain immutable data.

The projector folds events into a GameState; nothing here knows about email,
storage or time. Only non-empty areas are stored (the board is sparse early in
a game), and derived numbers (cities on board, tokens on board) are computed
from the areas rather than stored twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pbem.rules.core.frozen import FrozenMap, replace

#: The rules revision a game created now is played under, recorded in its GameCreated. A revision changes
#: what the engine rules by itself where the game's log could not tell (who is asked at all), so a game
#: keeps the revision it began with, and `pbem verify` re-derives an older log as it was ruled.
#: 0: every player holding cards is asked in trade. 1: a player whose hand (public, D-8 `seed`) is too small
#: to trade is finished at once (issue 29). 2: Small Cities orders the trade-card draw by the capped count
#: N = min(9, cities + towns // 6), as SC-8 and Q-SC5 say, not by the uncapped one (issue 34).
RULES_REVISION = 2


@dataclass(frozen=True)
class Player:
    """A person in the game; the nation is empty until chosen (§15.4)."""

    id: int
    name: str
    nation: str | None = None


@dataclass(frozen=True)
class NationState:
    """One nation's off-board holdings: stock, treasury, cards, A.S.T. marker."""

    name: str
    player_id: int
    stock: int
    treasury: int = 0
    civ_cards: tuple[str, ...] = ()
    hand: tuple[str, ...] = ()
    ast_position: int = 0
    census: int | None = None
    #: How many trade cards the nation kept after 12b (set by phase 12): what the
    #: other players see of its hand under D-8 `public-hand-size=1991`.
    kept_hand_count: int | None = None
    #: The turn in which Mining's once-a-turn set bonus was used to buy
    #: civilization cards (§28.53, §32.261); 0 if never. Phase 12 sets it.
    mining_used_turn: int = 0
    #: No-Trading: the standing order to roll for calamities even when exempt (NT-8; VOLUNTEER).
    volunteers: bool = False
    #: No-Trading: Water cards set aside this turn against a Famine (NT-12). They stay in ``hand``
    #: (they count toward the hand limit, Q-NT4) but cannot pay for civilization cards this turn.
    set_aside: tuple[str, ...] = ()


@dataclass(frozen=True)
class AreaState:
    """What stands in one land or water area.

    ``towns`` (Small Cities only, RULINGS.md SC-1) are a nation's tokens lying
    face down: units on the board, neither population tokens nor cities.
    """

    tokens: FrozenMap[str, int] = field(default_factory=FrozenMap)
    city: str | None = None
    ships: FrozenMap[str, int] = field(default_factory=FrozenMap)
    towns: FrozenMap[str, int] = field(default_factory=FrozenMap)

    @property
    def empty(self) -> bool:
        return not self.tokens and self.city is None and not self.ships and not self.towns

    def add_tokens(self, nation: str, count: int) -> AreaState:
        left = self.tokens.get(nation, 0) + count
        if left < 0:
            raise ValueError(f"{nation} would have {left} tokens")
        tokens = self.tokens.set(nation, left) if left else self.tokens.without(nation)
        return replace(self, tokens=tokens)

    def add_towns(self, nation: str, count: int) -> AreaState:
        left = self.towns.get(nation, 0) + count
        if left < 0:
            raise ValueError(f"{nation} would have {left} towns")
        towns = self.towns.set(nation, left) if left else self.towns.without(nation)
        return replace(self, towns=towns)


@dataclass(frozen=True)
class GameState:
    """Everything the rules need to know about one game at one version."""

    game_id: str
    version: int = 0
    ruleset: str = "advciv-1991"
    options: FrozenMap[str, str] = field(default_factory=FrozenMap)
    players: tuple[Player, ...] = ()
    seed_commitment: str = ""
    place_order: tuple[int, ...] = ()
    nations: FrozenMap[str, NationState] = field(default_factory=FrozenMap)
    areas: FrozenMap[str, AreaState] = field(default_factory=FrozenMap)
    turn: int = 0
    phase: str = "setup"
    step: str = ""
    phase_began: int = 1
    deadline: str | None = None
    filed: FrozenMap[str, tuple] = field(default_factory=FrozenMap)
    #: What is recorded at the table beside the board (`pbem.rules.table`): a pause, time zones, seats
    #: handed over or kicked, absences, observers, orders kept. Unlike ``filed`` it outlives the phase.
    table: FrozenMap[str, tuple] = field(default_factory=FrozenMap)
    built_this_turn: tuple[str, ...] = ()
    #: Areas where a city changed owner this turn other than by being built (tax revolt,
    #: Treachery, Civil War, Monotheism): D-6 `1991` lets these be reduced with the new ones.
    gained_this_turn: tuple[str, ...] = ()
    #: The nine trade-card stacks (§8.1, §15.2), keyed by stack number; each a
    #: tuple of card names, the top card first.
    stacks: FrozenMap[int, tuple[str, ...]] = field(default_factory=FrozenMap)
    #: Cards returned this turn (spent, discarded, resolved calamities), by stack
    #: number, waiting to go under their stacks at 13b (§29.7, §31.8).
    returned: FrozenMap[int, tuple[str, ...]] = field(default_factory=FrozenMap)
    #: Tradable calamities that changed hands in this turn's trade, as
    #: (receiver, calamity, giver): phase 7 records them, phases 8-9 read them
    #: (an untraded tradable calamity hits its holder; Treachery favours the giver).
    calamity_givers: tuple[tuple[str, str, str], ...] = ()
    #: Calamities still to resolve this turn, in resolution order, as (calamity,
    #: primary victim, the player who traded it to him or None): phase 8 fills
    #: it, phase 9 resolves them one at a time from the front.
    calamities: tuple[tuple[str, str, str | None], ...] = ()
    #: Slave Revolts in force, as (victim, tokens disabled, tokens placed since by
    #: reducing his own cities, which always count): phase 9 records them, phase 11
    #: ends them (D-10).
    slave_revolts: tuple[tuple[str, int, int], ...] = ()
    #: No-Trading: the calamity pile, the top card first (NT-2); the calamities drawn and still face up,
    #: as (calamity, turn drawn) (NT-14); and how many calamities phase 9 still draws this turn (NT-7, NT-10).
    calamity_pile: tuple[str, ...] = ()
    calamities_face_up: tuple[tuple[str, int], ...] = ()
    calamity_draws_left: int = 0
    finished: bool = False
    #: The rules revision the game was created under (`RULES_REVISION`); 0 for a game older than revisions.
    revision: int = 0

    def player(self, player_id: int) -> Player:
        for player in self.players:
            if player.id == player_id:
                return player
        raise KeyError(player_id)

    def player_of(self, nation: str) -> Player:
        return self.player(self.nations[nation].player_id)

    def area(self, name: str) -> AreaState:
        return self.areas.get(name) or AreaState()

    def with_area(self, name: str, area: AreaState) -> GameState:
        areas = self.areas.without(name) if area.empty else self.areas.set(name, area)
        return replace(self, areas=areas)

    def with_nation(self, nation: NationState) -> GameState:
        return replace(self, nations=self.nations.set(nation.name, nation))

    def with_player(self, player: Player) -> GameState:
        players = tuple(player if p.id == player.id else p for p in self.players)
        return replace(self, players=players)

    # The board's tallies are summed over every area once per map of areas (`FrozenMap.derived`): the rules
    # ask them of the same position thousands of times (support, losses, the invariants after every step).
    def tokens_on_board(self, nation: str) -> int:
        return self.areas.derived(_board_tallies).tokens.get(nation, 0)

    def towns_on_board(self, nation: str) -> int:
        return self.areas.derived(_board_tallies).towns.get(nation, 0)

    def cities_on_board(self, nation: str) -> int:
        return self.areas.derived(_board_tallies).cities.get(nation, 0)

    def ships_on_board(self, nation: str) -> int:
        return self.areas.derived(_board_tallies).ships.get(nation, 0)


@dataclass(frozen=True)
class BoardTallies:
    """Each nation's tokens, towns and ships on the board, and the areas each holds a city in (keyed by the
    ``city`` field as it stands, None for the areas without one)."""

    tokens: dict[str, int]
    towns: dict[str, int]
    cities: dict[str | None, int]
    ships: dict[str, int]


def _board_tallies(areas: FrozenMap[str, AreaState]) -> BoardTallies:
    tokens: dict[str, int] = {}
    towns: dict[str, int] = {}
    cities: dict[str | None, int] = {}
    ships: dict[str, int] = {}
    for area in areas.values():
        for nation, count in area.tokens.items():
            tokens[nation] = tokens.get(nation, 0) + count
        for nation, count in area.towns.items():
            towns[nation] = towns.get(nation, 0) + count
        for nation, count in area.ships.items():
            ships[nation] = ships.get(nation, 0) + count
        cities[area.city] = cities.get(area.city, 0) + 1
    return BoardTallies(tokens, towns, cities, ships)

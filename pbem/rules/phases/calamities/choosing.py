"""What every calamity of phase 9 shares: its orders, its numbers after cards, and choosing cities.

The bottom of the calamities package: each family module (`nature`, `war`,
`barbarians`, `plagues`, `unrest`, `seizure`) builds on this and on the board
layer, never on another family; `resolution` gathers the families.

A calamity is resolved in stages (``state.step`` counts them). A stage is
whatever the family's resolver returns for that index: a `Stage` of city
picks, a unit-point `Loss` or `Assign` (`board.losses`), an automatic event,
or an object of the family's own with a prompt (Civil War's split, the
Flood's plain, a Barbarian tie).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from pbem.rules.board.support import cities_of
from pbem.rules.core.phase import Apply, Decide, Narrate
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of

RESOLUTION = "calamity-resolution"
MAX_CHOICES = 60


#: A calamity striking this turn: (its name, the primary victim, who traded it to him or None).
Strike = tuple[str, str, "str | None"]


@dataclass(frozen=True)
class GiveLosses:
    """The primary victim's assignment of secondary unit points: (nation, points) shares (GIVE ...)."""

    player_id: int
    shares: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class PickCities:
    """A player's choice of cities for the calamity being resolved (PICK <area>, <area> ...)."""

    player_id: int
    areas: tuple[str, ...]


def quantity(state: GameState, nation: str, calamity: str, role: str, name: str, base: int) -> int:
    """A calamity number for one victim after his civilization cards (§32; ruleset calamity effects).

    Overrides take the one most favourable to him (only the best Religion card
    counts for Superstition), then modifiers add up (``per``: per card of that
    commodity in his hand), then caps apply; never below 0.
    """
    rules = ruleset_of(state)
    effects = [
        e
        for card in state.nations[nation].civ_cards
        if card in rules.civ_cards
        for e in rules.civ_cards[card].effects
        if e.calamity == calamity and e.get("role") in (role, "any") and e.get("quantity") == name
    ]
    favourable = name in rules.calamities[calamity].favourable
    value = base
    overrides = [e.get("value") for e in effects if e.kind == "calamity-override"]
    if overrides:
        value = max(overrides) if favourable else min(overrides)
    for e in effects:
        if e.kind == "calamity-modifier":
            per = e.get("per")
            times = state.nations[nation].hand.count(per) if per else 1
            value += e.get("delta") * times
    for e in effects:
        if e.kind == "calamity-cap":
            value = min(value, e.get("value"))
    return max(0, value)


def immune(state: GameState, nation: str, calamity: str, role: str, part: str | None = None) -> bool:
    """The nation holds a card that spares it this part of the calamity in this role (e.g. Theology)."""
    rules = ruleset_of(state)
    for card in state.nations[nation].civ_cards:
        for e in rules.civ_cards[card].effects_of("calamity-immunity") if card in rules.civ_cards else ():
            if e.calamity == calamity and e.get("role") == role and e.get("part") == part:
                return True
    return False


def held(state: GameState, nation: str, calamity: str, quantity_name: str) -> list[str]:
    """The victim's civilization cards that change this quantity (for the record)."""
    rules = ruleset_of(state)
    return [
        card
        for card in state.nations[nation].civ_cards
        if card in rules.civ_cards
        and any(e.calamity == calamity and e.get("quantity") == quantity_name for e in rules.civ_cards[card].effects)
    ]


@dataclass(frozen=True)
class Stage:
    """One step of a calamity: ``chooser`` picks ``count`` of ``candidates`` (areas holding cities).

    ``effect`` is what happens to each city picked: "reduce" (it becomes
    tokens of its owner, §26.41) or "seize" (it becomes a city of ``to``, or is
    eliminated when ``to`` has none left in stock). ``caps`` limits how many
    cities one owner may lose in this stage.
    """

    nation: str          # whose loss it is (the victim, or the victims named)
    role: str            # primary / secondary
    chooser: str
    count: int
    candidates: tuple[str, ...]
    effect: str
    question: str
    cites: tuple[str, ...]
    to: str | None = None
    caps: tuple[tuple[str, int], ...] = ()
    note: str = ""
    repeat: bool = False  # asked again (the same stage) after this pick
    free_choice: bool = False  # the victim reduces cities of his own choice (under Small Cities: SC-10 instead)
    up_to: int = 0  # a repeated stage: how many picks it may take in all (its template names so many, in order)


def city_owner(state: GameState, area: str) -> str:
    """The owner of the city standing in the area (a stage's candidates always hold one)."""
    city = state.area(area).city
    assert city is not None
    return city


def within_caps(state: GameState, stage: Stage, picked: tuple[str, ...]) -> bool:
    """The pick takes no more cities of one owner than the stage's caps allow."""
    caps = dict(stage.caps)
    for nation, cap in caps.items():
        if sum(1 for a in picked if city_owner(state, a) == nation) > cap:
            return False
    return True


def feasible(state: GameState, stage: Stage) -> int:
    """How many cities can actually be picked: the count, or fewer when there are not enough."""
    caps = dict(stage.caps)
    by_owner: dict[str, int] = {}
    for a in stage.candidates:
        by_owner[city_owner(state, a)] = by_owner.get(city_owner(state, a), 0) + 1
    available = sum(min(n, caps.get(o, n)) for o, n in by_owner.items())
    return min(stage.count, available)


def pick_options(state: GameState, stage: Stage) -> list[tuple[str, ...]]:
    """Legal picks, first by area name, at most MAX_CHOICES + 1 of them."""
    need = feasible(state, stage)
    out = []
    for combo in combinations(sorted(stage.candidates), need):
        if within_caps(state, stage, combo):
            out.append(combo)
            if len(out) > MAX_CHOICES:
                break
    return out


def reduce_stage(state: GameState, nation: str, role: str, count: int, calamity: str, cites: tuple[str, ...], note: str = "") -> Stage:
    """A stage in which the nation reduces ``count`` of its own cities, of its choice."""
    return Stage(
        nation=nation,
        role=role,
        chooser=nation,
        count=count,
        candidates=tuple(cities_of(state, nation)),
        effect="reduce",
        question=f"{calamity}: {count} of your cities are reduced. Choose which.",
        cites=cites,
        note=note,
        free_choice=True,
    )


def stage_index(state: GameState) -> int:
    """Which stage of the calamity being resolved comes next (``state.step`` counts them)."""
    return int(state.step) if state.step.isdigit() else 0


def automatic(state: GameState, stage: Stage) -> bool:
    """The stage needs nobody's choice: nothing can be picked, or only one pick is legal."""
    return feasible(state, stage) == 0 or len(pick_options(state, stage)) == 1


def coastal_cities(state: GameState, nation: str) -> tuple[str, ...]:
    """The nation's cities in coastal areas (Piracy takes them; a Flood without a plain strikes them)."""
    areas = ruleset_of(state).areas
    return tuple(a for a in cities_of(state, nation) if areas[a].coastal)


def assigned_shares(state: GameState) -> tuple[tuple[str, int], ...]:
    """The unit points the primary victim gave each secondary victim to lose (GIVE), as (nation, points)."""
    return tuple(tuple(x) for x in state.filed.get("assigned", ()))  # type: ignore[misc]


#: (state, calamity, stage index) -> the stage, an automatic event that moves to the next stage, or None when done.
Resolver = Callable[[GameState, Strike, int], Any]


@dataclass(frozen=True)
class CalamityFamily:
    """What one family of calamities gives the resolution phase, as a phase gives the engine its `PhaseRules`.

    ``filed`` names what the family keeps in ``state.filed`` while one of its
    calamities is resolved; it is cleared when the calamity is.
    """

    resolvers: Mapping[str, Resolver]
    apply: Mapping[str, Apply] = field(default_factory=dict)
    decide: Mapping[type, Decide] = field(default_factory=dict)
    inputs: Mapping[str, Callable[[GameState, Mapping[str, Any]], Any]] = field(default_factory=dict)
    narrate: Mapping[str, Narrate] = field(default_factory=dict)
    filed: tuple[str, ...] = ()


def own_stage(state: GameState, name: str, resolver: Resolver) -> tuple[Strike, Any] | None:
    """The calamity being resolved and its stage, when it is ``name`` (a family asking about its own calamity)."""
    if state.phase != RESOLUTION or not state.calamities or state.calamities[0][0] != name:
        return None
    cal = state.calamities[0]
    return cal, resolver(state, cal, stage_index(state))

"""Phase 5a: cities built from tokens (seed 001: 5A; §25; D-7, D-20), with Architecture's help from treasury (§25.3).

A city takes 6 of the builder's tokens on a city site, 12 elsewhere; every
token in the area goes back to its owner's stock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.board.card_effects import card_effects
from pbem.rules.board.ranking import cities_in_stock
from pbem.rules.board.support import (
    sole_occupant,
    tokens_to_stock,
)
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import FrozenMap, replace
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

PHASE = "city-construction"
AS_NEEDED = -1  # BUILD <area> TREASURY with no number: as many as the city needs
MAX_CHOICES = 60
BUILD_CITES = ("seed 001: 5A", "§25.1", "§25.2", "D-20")
SURPLUS_CITES = ("seed 001: 5B", "§26.1", "Q-S14")
SUPPORT_CITES = ("seed 001: 5C", "§26.3", "§26.41", "D-6")


@dataclass(frozen=True)
class BuildCities:
    """BUILD: cities to build this turn, (area, tokens from treasury) each; 0 = none, -1 = as needed."""

    player_id: int
    builds: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class FinishOrders:
    """DONE: my orders for this step are complete (a player who builds nothing says so)."""

    player_id: int


def tokens_required(state: GameState, area: str) -> int | None:
    """Tokens of one nation needed to build a city in the area; None if no city may stand there."""
    rules = ruleset_of(state)
    spec = rules.areas[area]
    if spec.population_limit == 0 and options_of(state).zero_limit_city_ban == "seed":
        return None  # D-7: never on a limit-0 area under the seed rule
    numbers = rules.numbers
    if not spec.has_city_site:
        return numbers["city_tokens_off_site"]
    players = len(state.players)
    if spec.island and players in rules.player_counts and rules.setup_for(players).island_city_sites_ignored:
        return numbers["island_city_tokens_two_players"]
    return numbers["city_tokens_on_site"]


def treasury_allowance(state: GameState, nation: str, required: int) -> int:
    """Most tokens of one city that may come from treasury with Architecture (§25.3), 0 without it."""
    effects = card_effects(state, nation, "city-build-from-treasury")
    if not effects:
        return 0
    share = max(e.get("max_percent", 0) for e in effects)
    return min(required * share // 100, state.nations[nation].treasury)


def buildable(state: GameState, nation: str) -> dict[str, int]:
    """Areas where the nation could build now -> tokens it would need from treasury (0: none)."""
    out: dict[str, int] = {}
    if cities_in_stock(state, nation) <= 0:
        return out
    for name in sorted(state.areas):
        area = state.areas[name]
        have = area.tokens.get(nation, 0)
        if not have or area.city is not None or name not in ruleset_of(state).areas:
            continue
        required = tokens_required(state, name)
        if required is None:
            continue
        if have >= required:
            out[name] = 0
        elif sole_occupant(state, nation, name) and required - have <= treasury_allowance(state, nation, required):
            out[name] = required - have
    return out


def build_line(builds: list[tuple[str, int]]) -> str:
    return "BUILD " + ", ".join(f"{a} TREASURY {t}" if t else a for a, t in builds)


def filed_builds(state: GameState, nation: str) -> list[tuple[str, int]]:
    return [tuple(b) for b in state.filed.get(f"builds:{nation}", ())]  # type: ignore[misc]


def apply_built(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    for city in data["cities"]:
        area = state.area(city["area"])
        for owner, count in (*area.tokens.items(), *city.get("towns", {}).items()):
            state = tokens_to_stock(state, owner, count)  # towns never stand beside a city (SC-5)
        state = state.with_area(city["area"], replace(area, tokens=FrozenMap(), towns=FrozenMap(), city=nation))
        n = state.nations[nation]
        state = state.with_nation(replace(n, treasury=n.treasury - city["treasury"], stock=n.stock + city["treasury"]))
    built = state.built_this_turn + tuple(c["area"] for c in data["cities"] if c["area"] not in state.built_this_turn)
    filed = state.filed.without(f"builds:{nation}")
    if parts_of(state).pieces.towns and any(c["treasury"] for c in data["cities"]):
        filed = filed.set(f"arch-city:{nation}", (1,))  # SC-3: the turn's one city where Architecture helped
    return replace(state, built_this_turn=built, filed=filed)


def check_build(state: GameState, nation: str, area: str, treasury: int, taken: list[tuple[str, int]]) -> int:
    """The tokens this build takes from treasury, or a Rejection saying why it cannot be built."""
    spot = state.area(area)
    if area in (a for a, _ in taken):
        raise Rejection(f"{area}: you already ordered a city there", "seed 001: 5A")
    if spot.city is not None:
        raise Rejection(f"{area} already holds a city; each area holds only one", "seed 001: 5A")
    required = tokens_required(state, area)
    if required is None:
        raise Rejection(f"{area} has population limit 0: no city may be built there, whatever cards you hold", "D-7")
    have = spot.tokens.get(nation, 0)
    short = max(0, required - have)
    if not short:
        return 0
    if treasury == 0:
        hint = " (with Architecture add TREASURY <n>)" if card_effects(state, nation, "city-build-from-treasury") else ""
        raise Rejection(f"{area}: a city there needs {required} of your tokens and you have {have}{hint}", "seed 001: 5A")
    if not card_effects(state, nation, "city-build-from-treasury"):
        raise Rejection("only a holder of Architecture may build with tokens from treasury", "§25.3")
    if any(t for _, t in taken):
        raise Rejection("Architecture helps build only one city per turn", "§25.3")
    if not sole_occupant(state, nation, area):
        raise Rejection(f"{area}: Architecture cannot be used where other players' tokens or Barbarians stand", "§25.3")
    half = required * max(e.get("max_percent", 0) for e in card_effects(state, nation, "city-build-from-treasury")) // 100
    if short > half:
        raise Rejection(f"{area}: at most {half} of the {required} tokens may come from treasury; you have {have} there", "§25.3")
    if short > state.nations[nation].treasury:
        raise Rejection(f"{area}: you need {short} from treasury and hold {state.nations[nation].treasury}", "§25.3")
    if treasury != AS_NEEDED and treasury < short:
        raise Rejection(f"{area}: you need {short} tokens from treasury, not {treasury}", "§25.3")
    return short


def resolve_builds(state: GameState, nation: str) -> Event:
    cities, skipped = [], []
    done: list[tuple[str, int]] = []
    for area, treasury in filed_builds(state, nation):
        try:
            used = check_build(state, nation, area, treasury or 0, done)
        except Rejection as exc:  # cannot happen on the standard board (D-20); kept for house maps
            skipped.append({"area": area, "why": exc.message})
            continue
        if len(done) >= cities_in_stock(state, nation):
            skipped.append({"area": area, "why": "no city left in stock"})
            continue
        done.append((area, used))
        removed = dict(state.area(area).tokens)
        cities.append({"area": area, "treasury": used, "removed": removed})
        if state.area(area).towns:
            cities[-1]["towns"] = dict(state.area(area).towns)
    cites = BUILD_CITES + ("D-21",) + (("§25.3",) if any(c["treasury"] for c in cities) else ())
    return Event("CitiesBuilt", {"nation": nation, "cities": cities, "skipped": skipped}, cites)


def sees_orders(viewer: str, nation: str) -> bool:
    return viewer in ("moderator", "auditor") or viewer == f"player:{nation.lower()}"


def tell_built(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    parts = []
    for c in d["cities"]:
        extra = f", {c['treasury']} tokens from treasury (Architecture)" if c["treasury"] else ""
        parts.append(f"{c['area']}{extra}")
    text = f"{d['nation']} built {len(d['cities'])} cit{'y' if len(d['cities']) == 1 else 'ies'}: {', '.join(parts)}." if parts else ""
    for s in d.get("skipped", ()):
        text += f" {d['nation']} could not build in {s['area']}: {s['why']}."
    return text.strip() or f"{d['nation']} built no city."

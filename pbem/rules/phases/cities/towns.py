"""Phase 5a under Small Cities: towns built from population tokens (seed 000: 1; RULINGS.md SC-1 to SC-3, SC-5).

In an area without a city a player turns his own tokens over: one token makes
a town on a city site, two elsewhere (the second goes to stock), as many as
he likes (Q-SC1). With Architecture, each town made may bring one more, paid
from treasury as the first was paid from the board, at most 3 a turn and not
where another player's tokens or Barbarians stand (SC-3, Q-SC13). Orders are
filed with the city orders (TOWN Thebes 3 TREASURY 2) and carried out after
them. Then six or more of his towns in an area become one of his cities
(SC-2), at most one city a turn in areas where he used Architecture (SC-3,
Q-SC14); no more than five towns stay in an area, and none beside a city
(SC-5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.board.card_effects import card_effects
from pbem.rules.board.ranking import cities_in_stock
from pbem.rules.board.support import sole_occupant
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import FrozenMap, replace
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of

TOWN_CITES = ("seed 000: 1", "SC-1")
TOWNS_TO_CITY = 6
MOST_TOWNS = 5
ARCHITECTURE_TOWNS = 3
AS_MANY = -1  # TOWN <area> with no number: as many as the tokens there make


@dataclass(frozen=True)
class BuildTowns:
    """TOWN: towns made this turn, (area, towns from tokens or AS_MANY, more towns from treasury) each."""

    player_id: int
    towns: tuple[tuple[str, int, int], ...]


def tokens_per_town(state: GameState, area: str) -> int:
    """One token makes a town on a city site, two elsewhere (SC-1)."""
    return 1 if ruleset_of(state).areas[area].has_city_site else 2


def town_sites(state: GameState, nation: str) -> dict[str, int]:
    """Areas where the nation can make towns now -> the most it can make there from its tokens."""
    out = {}
    for name, area in sorted(state.areas.items()):
        if area.city is not None or name not in ruleset_of(state).areas:
            continue
        most = area.tokens.get(nation, 0) // tokens_per_town(state, name)
        if most:
            out[name] = most
    return out


def has_architecture(state: GameState, nation: str) -> bool:
    return bool(card_effects(state, nation, "city-build-from-treasury"))


def filed_towns(state: GameState, nation: str) -> list[tuple[str, int, int]]:
    return [tuple(t) for t in state.filed.get(f"towns:{nation}", ())]  # type: ignore[misc]


def town_line(towns: list[tuple[str, int, int]]) -> str:
    return "TOWN " + ", ".join(
        f"{a}" + (f" {n}" if n != AS_MANY else "") + (f" TREASURY {m}" if m else "") for a, n, m in towns
    )


def _outcome(state: GameState, nation: str, orders: list[tuple[str, int, int]], arch_city: bool) -> dict[str, Any]:
    """What the nation's town orders make, area by area, in the position ``state`` (data of ``TownsBuilt``).

    ``arch_city`` is whether a city was already built this turn with Architecture's help (§25.3): it uses up
    the one city a turn allowed in areas where Architecture was used (SC-3, Q-SC14).
    """
    towns: dict[str, int] = {}
    made, skipped = [], []
    arch_areas: list[str] = []
    treasury = state.nations[nation].treasury
    arch_used = 0
    for area, asked, extra in orders:
        here = state.area(area)
        per = tokens_per_town(state, area)
        have = here.tokens.get(nation, 0) - sum(m["from_board"] for m in made if m["area"] == area)
        if here.city is not None:
            skipped.append({"area": area, "why": "a city stands there"})
            continue
        count = have // per if asked == AS_MANY else asked
        if count <= 0 or count * per > have:
            skipped.append({"area": area, "why": f"{count * per} tokens needed, {have} there"})
            continue
        extra = min(extra, count)
        if extra and (not has_architecture(state, nation) or not sole_occupant(state, nation, area)
                      or arch_used + extra > ARCHITECTURE_TOWNS or extra * per > treasury):
            skipped.append({"area": area, "why": "Architecture's towns are not allowed here now"})
            extra = 0
        arch_used += extra
        treasury -= extra * per
        if extra and area not in arch_areas:
            arch_areas.append(area)
        towns[area] = towns.get(area, here.towns.get(nation, 0)) + count + extra
        made.append({"area": area, "towns": count, "from_board": count * per, "architecture": extra,
                     "from_treasury": extra * per, "to_stock": (count + extra) * (per - 1)})
    cities, capped = [], []
    room = cities_in_stock(state, nation)
    arch_cities = int(arch_city)
    for area in sorted(towns):
        if towns[area] >= TOWNS_TO_CITY and room > 0 and not (area in arch_areas and arch_cities >= 1):
            here = state.area(area)
            tokens = dict(here.tokens)  # a city clears every token in its area, as any city built (D-20)
            tokens[nation] = tokens.get(nation, 0) - sum(m["from_board"] for m in made if m["area"] == area)
            cities.append({"area": area, "towns": towns[area], "others": dict(here.towns.without(nation)),
                           "tokens": {o: n for o, n in tokens.items() if n > 0}})
            room -= 1
            arch_cities += area in arch_areas
        else:  # five towns at most in an area, whoever owns them: his extra ones go (SC-5)
            others = sum(state.area(area).towns.without(nation).values())
            extra = min(towns[area], towns[area] + others - MOST_TOWNS)
            if extra > 0:
                capped.append({"area": area, "to_stock": extra})
    return {"nation": nation, "made": made, "cities": cities, "capped": capped, "skipped": skipped}


def check_towns(state: GameState, nation: str, command: BuildTowns, taken: list[tuple[str, int, int]],
                city_areas: list[str], arch_city: bool, build_treasury: int = 0) -> list[tuple[str, int, int]]:
    """The orders as filed, or a Rejection saying why they cannot be carried out; the whole order or nothing (SC-3)."""
    sites = town_sites(state, nation)
    orders: list[tuple[str, int, int]] = []
    for area, count, extra in command.towns:
        if area in city_areas:
            raise Rejection(f"{area}: you ordered a city there; towns are made where no city stands", "SC-1")
        if area not in sites:
            per = tokens_per_town(state, area) if area in ruleset_of(state).areas else 1
            raise Rejection(f"{area}: a town needs {per} of your tokens in an area without a city", "SC-1")
        most = sites[area] - sum(n for a, n, _ in taken + orders if a == area and n != AS_MANY)
        count = most if count == AS_MANY else count
        if count < 1 or count > most:
            raise Rejection(f"{area}: you can make at most {most} towns there from your tokens", "SC-1")
        if extra:
            if not has_architecture(state, nation):
                raise Rejection("only a holder of Architecture makes towns from treasury", "SC-3")
            if not sole_occupant(state, nation, area):
                raise Rejection(f"{area}: Architecture cannot be used where other players' tokens or Barbarians stand", "SC-3")
            if extra > count:
                raise Rejection(f"{area}: each town made from tokens brings at most one from treasury: {count} here", "SC-3")
        orders.append((area, count, extra))
    used = sum(m for _, _, m in taken + orders)
    if used > ARCHITECTURE_TOWNS:
        left = ARCHITECTURE_TOWNS - sum(m for _, _, m in taken)
        raise Rejection(f"at most {ARCHITECTURE_TOWNS} towns a turn come from treasury; {left} more are allowed", "SC-3")
    treasury = sum(m * tokens_per_town(state, a) for a, _, m in taken + orders)
    if treasury + build_treasury > state.nations[nation].treasury:  # one treasury pays towns and §25.3 cities
        also = f" besides the {build_treasury} your BUILD takes" if build_treasury else ""
        raise Rejection(f"those towns need {treasury} treasury{also}; you hold {state.nations[nation].treasury}", "SC-3")
    outcome = _outcome(state, nation, taken + orders, arch_city)
    if outcome["skipped"]:
        raise Rejection(f"{outcome['skipped'][0]['area']}: {outcome['skipped'][0]['why']}", "SC-3")
    wanted = architecture_cities(state, nation, taken + orders)
    if len(wanted) + int(arch_city) > 1:
        raise Rejection(
            "at most one city a turn is placed where you used Architecture (" + ", ".join(wanted)
            + (", and the city you build with treasury" if arch_city else "") + "); make fewer towns there", "SC-3")
    return orders


def architecture_cities(state: GameState, nation: str, orders: list[tuple[str, int, int]]) -> list[str]:
    """Areas where these town orders would place a city (SC-2) after Architecture was used there (SC-3)."""
    arch = {a for a, _, m in orders if m}
    return [a for a, n in _town_totals(state, nation, orders).items() if n >= TOWNS_TO_CITY and a in arch]


def towns_treasury(state: GameState, nation: str) -> int:
    """Treasury the town lines on file will spend (Architecture's towns, SC-3)."""
    return sum(m * tokens_per_town(state, a) for a, _, m in filed_towns(state, nation))


def sites_left(state: GameState, nation: str) -> dict[str, int]:
    """Town sites after the orders already filed this turn: area -> towns its remaining tokens still make."""
    left = town_sites(state, nation)
    for area, count, _ in filed_towns(state, nation):
        left[area] = 0 if count == AS_MANY else left.get(area, 0) - count
    return {a: n for a, n in left.items() if n > 0}


def _town_totals(state: GameState, nation: str, orders: list[tuple[str, int, int]]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for area, count, extra in orders:
        totals[area] = totals.get(area, state.area(area).towns.get(nation, 0)) + count + extra
    return totals


def towns_event(state: GameState, nation: str, arch_city: bool) -> Event:
    """5a's towns for one nation, after its cities (D-21): conversions, then SC-2 and SC-5."""
    data = _outcome(state, nation, filed_towns(state, nation), arch_city)
    cites = TOWN_CITES + (("SC-3",) if any(m["architecture"] for m in data["made"]) else ())
    cites += (("SC-2", "Q-SC2") if data["cities"] else ()) + (("SC-5",) if data["capped"] else ())
    return Event("TownsBuilt", data, cites)


def apply_towns_built(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    n = state.nations[nation]
    stock, treasury = n.stock, n.treasury
    for m in data["made"]:
        area = state.area(m["area"]).add_tokens(nation, -m["from_board"]).add_towns(nation, m["towns"] + m["architecture"])
        state = state.with_area(m["area"], area)
        stock += m["to_stock"]
        treasury -= m["from_treasury"]
    built = state.built_this_turn
    for c in data["cities"]:  # six towns or more become a city (SC-2): towns to stock, others' towns too (SC-5)
        area = state.area(c["area"])
        stock += area.towns.get(nation, 0) + c.get("tokens", {}).get(nation, 0)
        for owner, count in [*c["others"].items(), *((o, n) for o, n in c.get("tokens", {}).items() if o != nation)]:
            if owner in state.nations:
                state = state.with_nation(replace(state.nations[owner], stock=state.nations[owner].stock + count))
        state = state.with_area(c["area"], replace(area, city=nation, towns=FrozenMap(), tokens=FrozenMap()))
        built = built + (c["area"],)
    for c in data["capped"]:  # no more than five towns in an area (SC-5)
        state = state.with_area(c["area"], state.area(c["area"]).add_towns(nation, -c["to_stock"]))
        stock += c["to_stock"]
    state = state.with_nation(replace(state.nations[nation], stock=stock, treasury=treasury))
    return replace(state, built_this_turn=built, filed=state.filed.without(f"towns:{nation}"))


def tell_towns_built(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    parts = []
    for m in d["made"]:
        extra = f" and {m['architecture']} from treasury (Architecture)" if m["architecture"] else ""
        parts.append(f"{m['towns']} town{'s' if m['towns'] != 1 else ''} in {m['area']}{extra}")
    text = f"{d['nation']} made " + "; ".join(parts) + "." if parts else f"{d['nation']} made no town."
    for c in d["cities"]:
        text += f" Its {c['towns']} towns in {c['area']} became a city (SC-2)"
        cleared = ", ".join(f"{o} {n}" for o, n in c.get("tokens", {}).items())
        text += f"; the tokens there went to stock ({cleared})." if cleared else "."
    for c in d["capped"]:
        text += f" {c['to_stock']} of its towns in {c['area']} went to stock: an area holds five towns at most (SC-5)."
    for s in d["skipped"]:
        text += f" No towns in {s['area']}: {s['why']}."
    return text

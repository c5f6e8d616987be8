"""Ships for a planner bot: out of a homeland with no room left for cities (§22, §23.5).

A nation on an island or hemmed in by its neighbours can gather no more
cities by land. Then a planner builds one ship where it has tokens on the
coast and, in movement, sails them to a free city site (or next to one)
across the water, where they grow into the next city. A nation with room
by land builds none: a ship costs its upkeep every turn.
"""

from __future__ import annotations

from pbem.rules.core.state import GameState
from pbem.rules.phases.movement.routes import (
    build_sites,
    land_neighbours,
    sail_destinations,
    ship_areas,
)
from pbem.rules.phases.movement.turns import free_ships, movable
from pbem.rules.ruleset.rulebook import ruleset_of

SHIP_LOAD = 5  # tokens a ship carries (§23.51)
ENOUGH_CITIES = 7


def open_site(state: GameState, nation: str, area: str) -> bool:
    """A city site with no city and no one else's tokens on it."""
    here = state.area(area)
    return (ruleset_of(state).areas[area].has_city_site and here.city is None
            and all(n == nation for n, k in here.tokens.items() if k))


def hemmed_in(state: GameState, nation: str) -> bool:
    """No open city site where the nation stands or next to it, and fewer cities than it wants."""
    if state.cities_on_board(nation) >= ENOUGH_CITIES:
        return False
    mine = [a for a, here in state.areas.items() if here.tokens.get(nation)]
    near = set(mine) | {n for a in mine for n in land_neighbours(state, a)}
    return not any(open_site(state, nation, a) for a in near)


def ship_order(state: GameState, nation: str) -> str:
    """SHIP where most of its tokens stand on a coast, when hemmed in and without a ship; else HALT."""
    if ship_areas(state, nation) or not hemmed_in(state, nation) or state.nations[nation].treasury < 2:
        return "HALT"
    sites = sorted(build_sites(state, nation), key=lambda a: (-state.area(a).tokens.get(nation, 0), a))
    return f"SHIP {sites[0]}\nHALT" if sites else "HALT"


def voyage(state: GameState, nation: str) -> str | None:
    """SAIL tokens from a ship's area to an open city site (or next to one), or None."""
    if not hemmed_in(state, nation):
        return None
    for origin in sorted(set(ship_areas(state, nation))):
        load = min(SHIP_LOAD, movable(state, nation, origin))
        if free_ships(state, nation, origin) <= 0 or load < 2:
            continue
        landings = [a for a in sail_destinations(state, nation, origin)
                    if not any(k for n, k in state.area(a).tokens.items() if n != nation) and state.area(a).city is None]
        onto = [a for a in landings if open_site(state, nation, a)]
        beside = [a for a in landings if any(open_site(state, nation, n) for n in land_neighbours(state, a))]
        for target in onto + beside:
            return f"SAIL {load} {origin} {target}"
    return None

"""City construction for a planner bot under Small Cities: towns only where they become cities.

A town never grows (SC-11), costs tax (one token for every three, SC-12)
and fills its area's limit (SC-4), so a token turned into a town too early
is a token that stops growing. The planner therefore makes towns in two
cases only, and only on city sites (one token a town, SC-1) where no other
nation stands:

* **a city now:** its towns there and its tokens there make six (SC-2), so
  it turns as many tokens as the city still needs;
* **a city banked:** its tokens there are above the area's limit and would
  go as surplus at 5b (SC-4); as towns they stay, and the next turn's
  tokens finish the city (``movement`` gathers six less the towns there).

Ordinary cities (six tokens on a site, §25.1) are built as in the base
game. Every city and town is kept only if the nation's cities and excess
towns stay supported once surplus is removed (SC-6); towns are banked only
where the city they are to become could be supported now, since a weak
nation's towns that never become a city pay tax and block growth for good.
Banked towns are the first to go, then cities, last found first.
"""

from __future__ import annotations

from pbem.rules.board.ranking import cities_in_stock
from pbem.rules.board.support import population_limit, sole_occupant, surplus
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.state import GameState
from pbem.rules.phases.cities.construction import buildable
from pbem.rules.ruleset.rulebook import ruleset_of

from .lookahead import nation_of

TOWNS_TO_CITY = 6  # SC-2
MOST_TOWNS = 5  # SC-5
SUPPORT_PER_CITY = 2  # §26.3


def towns_here(state: GameState, nation: str, area: str) -> int:
    return state.area(area).towns.get(nation, 0)


def _site(state: GameState, nation: str, area: str) -> bool:
    """A city site with no city, where the nation stands alone (towns cannot be made beside others' units)."""
    here = state.area(area)
    return (ruleset_of(state).areas[area].has_city_site and here.city is None
            and sole_occupant(state, nation, area) and not any(n != nation and k > 0 for n, k in here.towns.items()))


def _supported(state: GameState, nation: str, cities: set[str], towns: dict[str, int]) -> bool:
    """Would the nation keep its cities and excess towns supported after these cities and towns (SC-6)?

    A city clears its area's tokens (D-20); a town takes its token off the
    board; the rest of the surplus goes at 5b."""
    on_board = state.tokens_on_board(nation)
    used = sum(state.area(a).tokens.get(nation, 0) for a in cities) + sum(n for a, n in towns.items() if a not in cities)
    lost = 0
    for area, over in surplus(state, nation).items():
        if area in cities:
            continue
        made = towns.get(area, 0)
        keep = max(0, population_limit(state, nation, area) - towns_here(state, nation, area) - made)
        lost += max(0, state.area(area).tokens.get(nation, 0) - made - keep)
    excess = 0
    for area, here in state.areas.items():
        count = here.towns.get(nation, 0) + towns.get(area, 0)
        if count and area not in cities and count < TOWNS_TO_CITY:
            excess += max(0, count - population_limit(state, nation, area))
    need = SUPPORT_PER_CITY * (state.cities_on_board(nation) + len(cities)) + -(-excess // 2)
    return on_board - used - lost >= need


def town_plan(state: GameState, nation: str) -> tuple[list[str], dict[str, int]]:
    """(areas for BUILD, area -> towns to make): the cities and banked towns the nation can keep."""
    room = cities_in_stock(state, nation)
    plain = sorted(a for a, t in buildable(state, nation).items() if t == 0 and towns_here(state, nation, a) == 0)
    builds: list[str] = []
    towns: dict[str, int] = {}
    banked: dict[str, int] = {}
    over = surplus(state, nation)
    for area in sorted(state.areas):
        if area in plain:
            builds.append(area)  # six tokens on a site, or twelve anywhere else (§25.1)
            continue
        if area not in ruleset_of(state).areas or not _site(state, nation, area):
            continue
        have, made = state.area(area).tokens.get(nation, 0), towns_here(state, nation, area)
        if have and made + have >= TOWNS_TO_CITY:
            towns[area] = TOWNS_TO_CITY - made
        elif over.get(area) and made + have <= MOST_TOWNS:
            banked[area] = have
    builds, cities = builds[:max(room, 0)], list(towns)[:max(room - len(builds), 0)]
    towns = {a: towns[a] for a in cities}
    # banked towns are a city to come: only where that city could be supported too
    while banked and not _supported(state, nation, set(builds) | set(towns) | {next(reversed(banked))},
                                    {**towns, **banked}):
        banked.popitem()
    while (builds or towns) and not _supported(state, nation, set(builds) | set(towns), towns):
        if towns:
            towns.popitem()
        else:
            builds.pop()
    return builds, {**towns, **banked}


def small_cities_order(prompt: Prompt, state: GameState) -> str:
    """The BUILD and TOWN lines of ``town_plan``, then DONE."""
    nation = nation_of(state, prompt)
    if nation is None:
        return "DONE"
    builds, towns = town_plan(state, nation)
    lines = (["BUILD " + ", ".join(builds)] if builds else []) + (
        ["TOWN " + ", ".join(f"{a} {n}" for a, n in towns.items())] if towns else [])
    return "\n".join(lines + ["DONE"])

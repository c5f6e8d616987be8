"""Phase 3: how far tokens and ships may go, and where ships may be built (§22.1, §22.3, §23; Roadbuilding, Cloth Making, Astronomy).

The engine finds the shortest legal ship route itself: a breadth-first search
over the water areas, open sea only with Astronomy (§23.52-23.55).
"""

from __future__ import annotations

from collections import deque

from pbem.rules.board.card_effects import card_effects
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of


def rule_numbers(state: GameState) -> dict[str, int]:
    return dict(ruleset_of(state).numbers)


def areas_in_play(state: GameState) -> frozenset[str]:
    return ruleset_of(state).setup_for(len(state.players)).areas_in_play


def coastal_in_play(state: GameState, area: str) -> bool:
    rules = ruleset_of(state)
    return area in rules.areas and rules.areas[area].coastal and area in areas_in_play(state)


def ship_range(state: GameState, nation: str) -> int:
    """Water steps a ship may take: 4, or 5 with Cloth Making (§23.53)."""
    return max([ruleset_of(state).numbers["ship_range"]] + [e.get("value") for e in card_effects(state, nation, "ship-range")])


def crosses_open_sea(state: GameState, nation: str) -> bool:
    """Astronomy (§23.54)."""
    return bool(card_effects(state, nation, "open-sea-passage"))


def land_range(state: GameState, nation: str) -> int:
    """Land areas a token may move: 1, or 2 with Roadbuilding (§23.31)."""
    return max([1] + [e.get("value") for e in card_effects(state, nation, "land-move-range")])


def ship_areas(state: GameState, nation: str) -> list[str]:
    """One entry per ship, by area name."""
    return [a for a, area in state.areas.items() for _ in range(area.ships.get(nation, 0))]


def build_payment(state: GameState, nation: str, area: str, levy: int | None) -> tuple[int, int]:
    """(treasury, levy) for a ship built in ``area``: treasury first unless a levy is named."""
    cost = ruleset_of(state).numbers["ship_cost"]  # one number read: no copy of them all
    if levy is None:
        levy = max(0, cost - state.nations[nation].treasury)
    return cost - levy, levy


def build_sites(state: GameState, nation: str) -> list[str]:
    """Coastal areas where ``nation`` can build a ship now, paying treasury first (§22.1, §22.3)."""
    if state.ships_on_board(nation) >= ruleset_of(state).ships_per_nation:
        return []
    out = []
    for name, area in state.areas.items():
        if not coastal_in_play(state, name):
            continue
        _, levy = build_payment(state, nation, name, None)
        tokens = area.tokens.get(nation, 0)
        if levy <= tokens and (levy > 0 or tokens > 0 or area.city == nation):
            out.append(name)
    return out


def _search(state: GameState, origin: str, open_sea: bool) -> dict[str, str | None]:
    """Breadth-first search of the ship graph from ``origin``: node -> the node it is reached from.

    Water areas count only where they touch an area in play; open sea only with ``open_sea``.
    Land areas are coasts a ship may pass along or end at; open sea is never an end (§23.55)."""
    rules = ruleset_of(state)
    in_play = areas_in_play(state)

    def usable(node: str) -> bool:
        if node in rules.waters:
            if rules.waters[node].open_sea and not open_sea:
                return False
            return any(n in in_play for n in rules.water_links.get(node, ()))
        return node in in_play

    came: dict[str, str | None] = {origin: None}
    queue = deque([origin])
    while queue:
        node = queue.popleft()
        for nxt in sorted(rules.water_links.get(node, ())):
            if nxt not in came and usable(nxt):
                came[nxt] = node
                queue.append(nxt)
    return came


def ship_route(state: GameState, origin: str, destination: str, open_sea: bool) -> list[str] | None:
    """The shortest water route from ``origin`` to ``destination`` (both ends included), or None."""
    came = _search(state, origin, open_sea)
    if destination not in came:
        return None
    path = [destination]
    while came[path[-1]] is not None:
        path.append(came[path[-1]])  # type: ignore[arg-type]
    return path[::-1]


def sail_destinations(state: GameState, nation: str, origin: str) -> list[str]:
    """Coastal land areas a ship of ``nation`` at ``origin`` can reach this phase."""
    rules = ruleset_of(state)
    came = _search(state, origin, crosses_open_sea(state, nation))
    steps: dict[str, int] = {origin: 0}
    for node in came:  # insertion order is breadth-first order
        if came[node] is not None:
            steps[node] = steps[came[node]] + 1  # type: ignore[index]
    reach = ship_range(state, nation)
    return sorted(a for a, n in steps.items() if a != origin and a in rules.areas and n <= reach)


def pass_through(state: GameState, nation: str, origin: str, destination: str) -> list[str]:
    """Areas a Roadbuilding holder may pass through from ``origin`` to ``destination`` (§23.31)."""
    rules = ruleset_of(state)
    between = rules.land_adjacency.get(origin, frozenset()) & rules.land_adjacency.get(destination, frozenset())
    out = []
    for name in sorted(between):
        area = state.area(name)
        others = [n for n in area.tokens if n != nation]
        if name in areas_in_play(state) and not others and area.city in (None, nation):
            out.append(name)
    return out


def land_neighbours(state: GameState, area: str) -> list[str]:
    in_play = areas_in_play(state)
    return sorted(a for a in ruleset_of(state).land_adjacency.get(area, ()) if a in in_play)

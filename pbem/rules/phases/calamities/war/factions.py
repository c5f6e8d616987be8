"""Civil War's factions counted: units as (area, "tokens" | "city", count) items, a city worth 5 unit points."""

from __future__ import annotations

CITY_POINTS = 5
Item = tuple[str, str, int]


def faction_points(items: tuple[Item, ...] | list[Item]) -> int:
    """Unit points of a faction: a city 5, a token 1."""
    return sum(CITY_POINTS if what == "city" else n for _, what, n in items)

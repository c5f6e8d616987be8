"""Civil War's factions counted: units as (area, "tokens" | "towns" | "city", count) items, a city worth 5 unit points.

Towns exist only under Small Cities; each is worth 1 unit point, like a token (SC-9).
"""

from __future__ import annotations

CITY_POINTS = 5
Item = tuple[str, str, int]


def faction_points(items: tuple[Item, ...] | list[Item]) -> int:
    """Unit points of a faction: a city 5, a token or a town 1."""
    return sum(CITY_POINTS if what == "city" else n for _, what, n in items)

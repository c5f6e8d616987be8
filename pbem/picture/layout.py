"""The board's geometry, read from the generated ``data/layout.json``.

Why a file: the map is made from real geography (a land mask and the real
places of the areas) by ``tools/board_layout.py``, which needs numpy and the
mask package. Drawing a game only needs the result, so run time depends on
nothing but this JSON file (and cairosvg for PNG).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

LAYOUT_FILE = Path(__file__).parent / "data" / "layout.json"

Point = tuple[float, float]
Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class AreaShape:
    """One land area on the map: its outline, where its label and pieces go, and its bounding box."""

    name: str
    path: str      # SVG path data in map units (several rings; fill with the even-odd rule)
    anchor: Point  # a point well inside the area: label and pieces are placed round it
    bbox: Box      # x0, y0, x1, y1


@dataclass(frozen=True)
class Layout:
    """The whole map: the view box, every area, the land outside the game and the sea labels."""

    view_box: Box  # x, y, width, height
    areas: dict[str, AreaShape]
    outside: str
    seas: dict[str, Point]
    touching: frozenset[tuple[str, str]]


@lru_cache(maxsize=4)
def load_layout(path: Path = LAYOUT_FILE) -> Layout:
    """The layout, read once per process (it is immutable data)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    areas = {
        name: AreaShape(name, a["path"], (a["anchor"][0], a["anchor"][1]), tuple(a["bbox"]))  # type: ignore[arg-type]
        for name, a in raw["areas"].items()
    }
    x, y, w, h = raw["viewBox"]
    return Layout(
        view_box=(x, y, w, h),
        areas=areas,
        outside=raw["outside"],
        seas={n: (p[0], p[1]) for n, p in raw["seas"].items()},
        touching=frozenset((a, b) for a, b in raw["touching"]),
    )


def crop(layout: Layout, names: set[str], margin: float = 18.0) -> Box:
    """The part of the map that shows ``names`` (all of it when empty), as a view box within the map."""
    x, y, w, h = layout.view_box
    boxes = [layout.areas[n].bbox for n in names if n in layout.areas]
    if not boxes:
        return layout.view_box
    x0 = max(x, min(b[0] for b in boxes) - margin)
    y0 = max(y, min(b[1] for b in boxes) - margin)
    x1 = min(x + w, max(b[2] for b in boxes) + margin)
    y1 = min(y + h, max(b[3] for b in boxes) + margin)
    return (round(x0, 1), round(y0, 1), round(x1 - x0, 1), round(y1 - y0, 1))


@lru_cache(maxsize=256)
def rings(path: str) -> tuple[tuple[Point, ...], ...]:
    """The closed rings of a layout path (``M x y`` then relative ``l`` steps, ``z``), as absolute points.

    Why: the PNG draws the outline of a highlighted area itself, on the map drawn once, so it needs the
    points rather than the path text; the layout writes only these three commands (tools/board_layout.py).
    """
    out = []
    for ring in path.split("M")[1:]:
        body = ring.replace("z", " ").replace("l", " ").split()
        values = [float(v) for v in body]
        x, y = values[0], values[1]
        points = [(x, y)]
        for dx, dy in zip(values[2::2], values[3::2]):
            x, y = x + dx, y + dy
            points.append((x, y))
        out.append(tuple(points))
    return tuple(out)

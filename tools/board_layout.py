"""Generate the board picture's layout from real geography: pbem/picture/data/layout.json.

Why: the picture of the board must read as a map of the Mediterranean, with
areas whose neighbours touch, yet no coordinate may be placed by hand in code.
So the layout is derived from two kinds of data only:

* the land/sea mask shipped by the PyPI package ``global-land-mask`` (1 km,
  GLOBE-based; nothing is downloaded), and
* ``pbem/picture/data/area_positions.csv``: for every land area of the board
  the longitude and latitude of the real place it stands for (water areas give
  the place of their label), plus ``water_shapes.csv`` for the two places where
  the mask must be corrected (the Caspian, which the mask counts as land, and
  the Euripus, narrower than one grid cell).

The mask is downsampled to a grid of ``STEP`` degrees; each land cell goes to
the nearest area position measured *over land* on its own landmass (so an island
cell can only belong to an area on that island, and a gulf does not hand one
shore to the other); cells farther than ``REACH`` from every position stay plain
land outside the game. Region borders are traced once per shared border (arcs),
simplified and smoothed once, and reused by both neighbours, so borders match.

Run from the repository root (needs numpy and global-land-mask, not needed at
run time by ``pbem.picture``)::

    .venv/bin/python tools/board_layout.py          # rewrite layout.json
    .venv/bin/python tools/board_layout.py --check  # exit 1 if layout.json is stale
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import heapq
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

import global_land_mask
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RULES_DATA = ROOT / "pbem" / "rules" / "ruleset" / "data" / "advciv"
DATA = ROOT / "pbem" / "picture" / "data"
POSITIONS = DATA / "area_positions.csv"
WATER_SHAPES = DATA / "water_shapes.csv"
LAYOUT = DATA / "layout.json"
MASK = Path(global_land_mask.__file__).parent / "globe_combined_mask_compressed.npz"

STEP = 0.05             # grid cell, degrees (6 x 6 cells of the 1/120-degree mask)
LAND_SHARE = 0.5        # a grid cell is land when at least this share of its mask cells is
MARGIN = 2.0            # degrees of map around the outermost area positions
STANDARD_PARALLEL = 38.0
SCALE = 20.0            # SVG units per degree of latitude
REACH = 3.8             # degrees (projected) over land beyond which land stays outside the game
SIMPLIFY_COAST = 0.6    # Douglas-Peucker tolerance for coasts, grid cells
SIMPLIFY_BORDER = 1.6   # ... for borders between areas (straight lines of the nearest-place rule)
SMOOTHING = 1           # Chaikin passes on every arc (ends kept)
ANCHOR_PULL = 0.06      # anchor score: depth inside the region minus this times distance to the position (cells)

Cell = tuple[int, int]
Point = tuple[float, float]


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def inputs_digest() -> str:
    """A digest of every input the layout is made from (the mask excepted: it ships with its package)."""
    h = hashlib.sha256()
    for path in (POSITIONS, WATER_SHAPES, RULES_DATA / "areas.csv", RULES_DATA / "water.csv", Path(__file__)):
        h.update(path.name.encode())
        h.update(path.read_bytes().replace(b"\r\n", b"\n"))
    return h.hexdigest()


def load_inputs() -> tuple[dict[str, Point], dict[str, Point], dict[str, str | None], list[dict[str, str]]]:
    """Land positions, water label positions, the island of each land area, and the water shapes."""
    land = {r["name"]: (r.get("island") or None) for r in read_csv(RULES_DATA / "areas.csv")}
    water = {r["name"] for r in read_csv(RULES_DATA / "water.csv")}
    rows = read_csv(POSITIONS)
    names = [r["name"] for r in rows]
    dupes = {n for n in names if names.count(n) > 1}
    missing = (set(land) | water) - set(names)
    unknown = set(names) - set(land) - water
    if dupes or missing or unknown:
        raise SystemExit(f"{POSITIONS.name}: duplicates {sorted(dupes)}, missing {sorted(missing)}, unknown {sorted(unknown)}")
    pos = {r["name"]: (float(r["lon"]), float(r["lat"])) for r in rows}
    return ({n: pos[n] for n in land}, {n: pos[n] for n in sorted(water)}, land, read_csv(WATER_SHAPES))


def _snap(value: float, rounding: Callable[[float], int]) -> float:
    """A multiple of STEP (so the extent falls on whole cells of the mask)."""
    return round(rounding(value / STEP) * STEP, 6)


class Grid:
    """The map extent, snapped to the mask's 1/120-degree grid, and its projection."""

    def __init__(self, positions: dict[str, Point]) -> None:
        lons = [p[0] for p in positions.values()]
        lats = [p[1] for p in positions.values()]
        self.lon0, self.lon1 = _snap(min(lons) - MARGIN, math.floor), _snap(max(lons) + MARGIN, math.ceil)
        self.lat0, self.lat1 = _snap(min(lats) - MARGIN, math.floor), _snap(max(lats) + MARGIN, math.ceil)
        self.rows = round((self.lat1 - self.lat0) / STEP)
        self.cols = round((self.lon1 - self.lon0) / STEP)
        self.kx = math.cos(math.radians(STANDARD_PARALLEL))

    def cell(self, lon: float, lat: float) -> Cell:
        return int((self.lat1 - lat) / STEP), int((lon - self.lon0) / STEP)

    def xy(self, row: float, col: float) -> Point:
        """SVG coordinates of a grid point (row, col counted in cells from the top-left corner)."""
        return col * STEP * self.kx * SCALE, row * STEP * SCALE

    def project(self, lon: float, lat: float) -> Point:
        return (lon - self.lon0) * self.kx * SCALE, (self.lat1 - lat) * SCALE

    def land(self, shapes: list[dict[str, str]]) -> np.ndarray:
        """Land cells: the mask's share of land per cell, with lakes and straits of water_shapes.csv as water."""
        data = np.load(MASK)
        ocean, lat, lon = data["mask"], data["lat"], data["lon"]
        per = round(STEP / (lon[1] - lon[0]))
        r0 = int(round((lat[0] - self.lat1) / (lat[0] - lat[1])))
        c0 = int(round((self.lon0 - lon[0]) / (lon[1] - lon[0])))
        block = ~ocean[r0:r0 + self.rows * per, c0:c0 + self.cols * per]
        land = block.reshape(self.rows, per, self.cols, per).mean(axis=(1, 3)) >= LAND_SHARE
        for shape in shapes:
            points = [tuple(float(v) for v in p.split()) for p in shape["points"].split(";")]
            if shape["kind"] == "lake":
                land &= ~self._inside(points)
            else:
                for (a, b), (c, d) in zip(points, points[1:]):
                    for t in np.linspace(0.0, 1.0, 200):
                        r, q = self.cell(a + (c - a) * t, b + (d - b) * t)
                        land[max(r, 0):r + 2, max(q, 0):q + 2] = False
        return land

    def _inside(self, polygon: list[Point]) -> np.ndarray:
        lat = self.lat1 - (np.arange(self.rows) + 0.5) * STEP
        lon = self.lon0 + (np.arange(self.cols) + 0.5) * STEP
        x, y = np.meshgrid(lon, lat)
        inside = np.zeros(x.shape, dtype=bool)
        for (x1, y1), (x2, y2) in zip(polygon, polygon[1:] + polygon[:1]):
            if y1 == y2:
                continue
            crosses = (y1 > y) != (y2 > y)
            inside ^= crosses & (x < x1 + (y - y1) * (x2 - x1) / (y2 - y1))
        return inside


def components(land: np.ndarray) -> np.ndarray:
    """Landmasses: 4-connected components of land cells, numbered from 1 (0 is sea)."""
    comp = np.zeros(land.shape, dtype=np.int32)
    rows, cols = land.shape
    count = 0
    for r0, c0 in zip(*np.nonzero(land)):
        if comp[r0, c0]:
            continue
        count += 1
        comp[r0, c0] = count
        stack = [(int(r0), int(c0))]
        while stack:
            r, c = stack.pop()
            for rr, cc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                if 0 <= rr < rows and 0 <= cc < cols and land[rr, cc] and not comp[rr, cc]:
                    comp[rr, cc] = count
                    stack.append((rr, cc))
    return comp


def seeds_on_land(grid: Grid, land_pos: dict[str, Point], islands: dict[str, str | None], comp: np.ndarray) -> dict[str, Cell]:
    """The grid cell of each area's position; it must be land, and islands must match landmasses."""
    seeds = {name: grid.cell(*p) for name, p in land_pos.items()}
    problems = [f"{n} ({land_pos[n][0]}, {land_pos[n][1]}) is not on land" for n, c in seeds.items() if not comp[c]]
    by_comp: dict[int, set[str | None]] = {}
    for name, c in seeds.items():
        by_comp.setdefault(int(comp[c]), set()).add(islands[name])
    problems += [f"one landmass holds areas of {sorted(map(str, g))}" for k, g in by_comp.items() if k and len(g) > 1]
    island_comps: dict[str, set[int]] = {}
    for name, c in seeds.items():
        if islands[name]:
            island_comps.setdefault(islands[name], set()).add(int(comp[c]))
    problems += [f"island {i} spans landmasses {sorted(k)}" for i, k in island_comps.items() if len(k) > 1]
    if problems:
        raise SystemExit("area_positions.csv: " + "; ".join(problems))
    return seeds


def assign(grid: Grid, comp: np.ndarray, seeds: dict[str, Cell]) -> tuple[np.ndarray, list[str]]:
    """Label every land cell with its nearest area over land (Dijkstra from all positions at once).

    Labels: -1 sea, 0 land outside the game, k >= 1 the k-th area of ``names``.
    """
    names = sorted(seeds)
    rows, cols = comp.shape
    dx, dy = grid.kx, 1.0
    moves = [(0, 1, dx), (0, -1, dx), (1, 0, dy), (-1, 0, dy)]
    moves += [(a, b, math.hypot(dx, dy)) for a in (1, -1) for b in (1, -1)]
    reach = REACH / STEP
    label = np.where(comp > 0, 0, -1).astype(np.int32)
    dist = np.full(comp.shape, np.inf)
    heap = []
    for k, name in enumerate(names, start=1):
        r, c = seeds[name]
        dist[r, c] = 0.0
        heap.append((0.0, k, r, c))
    heapq.heapify(heap)
    while heap:
        d, k, r, c = heapq.heappop(heap)
        if d > dist[r, c] or label[r, c] > 0:
            continue
        label[r, c] = k
        here = comp[r, c]
        for a, b, cost in moves:
            rr, cc = r + a, c + b
            if 0 <= rr < rows and 0 <= cc < cols and comp[rr, cc] == here and label[rr, cc] == 0:
                nd = d + cost
                if nd < dist[rr, cc] and nd <= reach:
                    dist[rr, cc] = nd
                    heapq.heappush(heap, (nd, k, rr, cc))
    return label, names


def trace_arcs(label: np.ndarray) -> list[tuple[list[Cell], int, int]]:
    """Every border between two labels as arcs of grid vertices, with the label on their left and right.

    An arc runs between nodes (vertices where other than two border edges meet)
    or round a closed loop, so each shared border is one arc used by both sides.
    """
    lp = np.pad(label, 1, constant_values=-1)
    edges: list[tuple[Cell, Cell, int, int]] = []
    horizontal = lp[:-1, :] != lp[1:, :]          # between lp[r-1, c] and lp[r, c] -> vertex row r
    for r, c in zip(*np.nonzero(horizontal)):
        edges.append(((r + 1, c), (r + 1, c + 1), int(lp[r, c]), int(lp[r + 1, c])))
    vertical = lp[:, :-1] != lp[:, 1:]            # between lp[r, c] and lp[r, c+1] -> vertex column c+1
    for r, c in zip(*np.nonzero(vertical)):
        edges.append(((r, c + 1), (r + 1, c + 1), int(lp[r, c + 1]), int(lp[r, c])))
    at: dict[Cell, list[int]] = {}
    for i, (a, b, _, _) in enumerate(edges):
        at.setdefault(a, []).append(i)
        at.setdefault(b, []).append(i)
    used = [False] * len(edges)
    arcs = []

    def walk(start: Cell, first: int) -> None:
        a, b, left, right = edges[first]
        if a != start:
            left, right = right, left
        path, v, e = [start], start, first
        while True:
            used[e] = True
            ea, eb = edges[e][0], edges[e][1]
            v = eb if ea == v else ea
            path.append(v)
            if len(at[v]) != 2 or v == start:
                break
            e = next((i for i in at[v] if not used[i]), None)
            if e is None:
                break
        arcs.append(([(r - 1, c - 1) for r, c in path], left, right))

    for v, incident in at.items():
        if len(incident) != 2:
            for e in incident:
                if not used[e]:
                    walk(v, e)
    for e in range(len(edges)):
        if not used[e]:
            walk(edges[e][0], e)
    return arcs


def simplify(points: list[Point], tol: float) -> list[Point]:
    """Douglas-Peucker with both ends kept; a closed loop is split at its farthest point first."""
    if points[0] == points[-1] and len(points) > 3:
        far = max(range(len(points)), key=lambda i: math.dist(points[0], points[i]))
        return simplify(points[: far + 1], tol)[:-1] + simplify(points[far:], tol)
    keep = [False] * len(points)
    keep[0] = keep[-1] = True
    stack = [(0, len(points) - 1)]
    while stack:
        i, j = stack.pop()
        (x1, y1), (x2, y2) = points[i], points[j]
        length = math.hypot(x2 - x1, y2 - y1) or 1e-9
        best, worst = -1.0, -1
        for k in range(i + 1, j):
            x, y = points[k]
            d = abs((x2 - x1) * (y1 - y) - (x1 - x) * (y2 - y1)) / length
            if d > best:
                best, worst = d, k
        if worst > 0 and best > tol:
            keep[worst] = True
            stack += [(i, worst), (worst, j)]
    out = [p for p, k in zip(points, keep) if k]
    if len(out) == 2 and len(points) > 2:  # never let a small region collapse onto one straight line
        out.insert(1, points[len(points) // 2])
    return out


def chaikin(points: list[Point], passes: int) -> list[Point]:
    """Corner cutting that keeps both ends (closed loops keep their start point), so arcs still join."""
    for _ in range(passes):
        if len(points) < 3:
            return points
        out = [points[0]]
        for (x1, y1), (x2, y2) in zip(points, points[1:]):
            out += [(0.75 * x1 + 0.25 * x2, 0.75 * y1 + 0.25 * y2), (0.25 * x1 + 0.75 * x2, 0.25 * y1 + 0.75 * y2)]
        out.append(points[-1])
        points = [p for i, p in enumerate(out) if i == 0 or p != out[i - 1]]
    return points


def region_paths(grid: Grid, arcs: list[tuple[list[Cell], int, int]]) -> dict[int, str]:
    """One SVG path per label, built by chaining its arcs (label on the left) into rings."""
    shapes = []
    for path, left, right in arcs:
        tol = SIMPLIFY_COAST if min(left, right) < 0 else SIMPLIFY_BORDER
        pts = chaikin(simplify([(float(c), float(r)) for r, c in path], tol), SMOOTHING)
        xy = [grid.xy(y, x) for x, y in pts]
        shapes.append((path[0], path[-1], xy, left, right))
    out: dict[int, str] = {}
    for lab in sorted({s[3] for s in shapes} | {s[4] for s in shapes}):
        if lab < 0:
            continue
        mine = [(a, b, xy) for a, b, xy, left, _ in shapes if left == lab]
        mine += [(b, a, xy[::-1]) for a, b, xy, left, right in shapes if right == lab and left != lab]
        starts: dict[Cell, list[int]] = {}
        for i, (a, _, _) in enumerate(mine):
            starts.setdefault(a, []).append(i)
        used = [False] * len(mine)
        rings = []
        for i in range(len(mine)):
            if used[i]:
                continue
            ring: list[Point] = []
            j, first = i, mine[i][0]
            while j is not None and not used[j]:
                used[j] = True
                a, b, xy = mine[j]
                ring += xy if not ring else xy[1:]
                if b == first:
                    break
                j = next((k for k in starts.get(b, []) if not used[k]), None)
            rings.append(path_data(ring[:-1]))
        out[lab] = "".join(rings)
    return out


def _num(v: int) -> str:
    """A coordinate counted in tenths of a unit, written short: 12 -> 1.2, -5 -> -.5, 30 -> 3."""
    whole, tenth = divmod(abs(v), 10)
    text = (str(whole) if whole else "") + (f".{tenth}" if tenth else "")
    return ("-" if v < 0 else "") + (text or "0")


def path_data(ring: list[Point]) -> str:
    """A closed ring as compact SVG path data: an absolute start, then relative steps of 0.1 unit precision.

    Steps are differences of coordinates rounded once, so both neighbours of a
    border (which share its points) get exactly the same line, without drift.
    """
    pts = [(round(x * 10), round(y * 10)) for x, y in ring]
    pts = [p for i, p in enumerate(pts) if i == 0 or p != pts[i - 1]]
    steps = " ".join(f"{_num(b[0] - a[0])} {_num(b[1] - a[1])}" for a, b in zip(pts, pts[1:]))
    return f"M{_num(pts[0][0])} {_num(pts[0][1])}" + (f"l{steps}" if steps else "") + "z"


def depth_map(label: np.ndarray) -> np.ndarray:
    """How many 4-neighbour erosions each area cell survives inside its own area (0 outside areas)."""
    lp = np.pad(label, 1, constant_values=-1)
    same = (label > 0)
    for nb in (lp[:-2, 1:-1], lp[2:, 1:-1], lp[1:-1, :-2], lp[1:-1, 2:]):
        same = same & (nb == label)
    depth = (label > 0).astype(np.int32)
    cur = same.copy()
    while cur.any():
        depth += cur
        cp = np.pad(cur, 1, constant_values=False)
        cur = cur & cp[:-2, 1:-1] & cp[2:, 1:-1] & cp[1:-1, :-2] & cp[1:-1, 2:]
    return depth


def anchors(grid: Grid, label: np.ndarray, names: list[str], seeds: dict[str, Cell]) -> dict[str, Cell]:
    """Where each area's label and pieces go: deep inside the area, not far from its position."""
    depth = depth_map(label)
    out = {}
    for k, name in enumerate(names, start=1):
        rs, cs = np.nonzero(label == k)
        r0, c0 = seeds[name]
        score = depth[rs, cs] - ANCHOR_PULL * np.hypot((rs - r0), (cs - c0) * grid.kx)
        best = int(np.argmax(score))
        out[name] = (int(rs[best]), int(cs[best]))
    return out


def build() -> dict:
    land_pos, water_pos, islands, shapes = load_inputs()
    grid = Grid(land_pos)
    land = grid.land(shapes)
    comp = components(land)
    seeds = seeds_on_land(grid, land_pos, islands, comp)
    label, names = assign(grid, comp, seeds)
    arcs = trace_arcs(label)
    paths = region_paths(grid, arcs)
    anchor = anchors(grid, label, names, seeds)
    touching = sorted({tuple(sorted((names[a - 1], names[b - 1]))) for _, a, b in arcs if a > 0 and b > 0})
    areas = {}
    for k, name in enumerate(names, start=1):
        rs, cs = np.nonzero(label == k)
        x0, y0 = grid.xy(int(rs.min()), int(cs.min()))
        x1, y1 = grid.xy(int(rs.max()) + 1, int(cs.max()) + 1)
        ar, ac = anchor[name]
        areas[name] = {
            "path": paths[k],
            "anchor": [round(v, 1) for v in grid.xy(ar + 0.5, ac + 0.5)],
            "position": [round(v, 1) for v in grid.project(*land_pos[name])],
            "bbox": [round(x0, 1), round(y0, 1), round(x1, 1), round(y1, 1)],
        }
    width, height = grid.xy(grid.rows, grid.cols)
    return {
        "generator": "tools/board_layout.py",
        "inputs_sha256": inputs_digest(),
        "source": "global-land-mask (GLOBE 1 km land mask), area_positions.csv, water_shapes.csv",
        "projection": {
            "kind": "equirectangular",
            "standard_parallel": STANDARD_PARALLEL,
            "lon0": round(grid.lon0, 4),
            "lat_top": round(grid.lat1, 4),
            "x_per_degree": round(SCALE * grid.kx, 6),
            "y_per_degree": SCALE,
            "formula": "x = (lon - lon0) * x_per_degree; y = (lat_top - lat) * y_per_degree",
        },
        "grid_step_degrees": STEP,
        "reach_degrees": REACH,
        "viewBox": [0, 0, round(width, 1), round(height, 1)],
        "areas": areas,
        "outside": paths.get(0, ""),
        "seas": {n: [round(v, 1) for v in grid.project(*p)] for n, p in water_pos.items()},
        "touching": [list(p) for p in touching],
    }


def render(layout: dict) -> str:
    return json.dumps(layout, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def report(layout: dict) -> str:
    """How many land adjacencies between areas on one landmass have touching regions."""
    islands = {r["name"]: r.get("island") or None for r in read_csv(RULES_DATA / "areas.csv")}
    touching = {tuple(p) for p in layout["touching"]}
    pairs = [tuple(sorted((r["a"], r["b"]))) for r in read_csv(RULES_DATA / "land_adjacency.csv")]
    same = [p for p in pairs if islands[p[0]] == islands[p[1]]]
    missing = [p for p in same if p not in touching]
    lines = [f"touching: {len(same) - len(missing)} of {len(same)} land adjacencies on one landmass"]
    lines += [f"  not touching: {a} - {b}" for a, b in missing]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if layout.json differs from what the data gives")
    args = parser.parse_args(argv)
    text = render(build())
    layout = json.loads(text)
    print(report(layout))
    if args.check:
        same = LAYOUT.exists() and LAYOUT.read_text(encoding="utf-8") == text
        print("layout.json is up to date" if same else "layout.json is stale: run tools/board_layout.py")
        return 0 if same else 1
    LAYOUT.write_text(text, encoding="utf-8")
    print(f"wrote {LAYOUT.relative_to(ROOT)} ({len(text) // 1024} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

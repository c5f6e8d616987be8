"""The board as a small palette PNG for letters: the map drawn once, each state's pieces drawn on it.

Why this shape: rasterising the whole SVG with cairosvg took about 430 ms and made a PNG of about
400 kB for every report. The map itself (coasts, areas shaded by population limit, names, city sites,
volcanoes, flood plains) changes only with the areas in play and the part of the board shown, so it is
rasterised once per process for each such part (`map_svg` through cairosvg, kept in a small cache) and
reduced to a palette of at most `MAP_COLOURS` colours. For each state only the pieces, the legend and
the highlighted outlines are drawn on a copy with Pillow, straight in palette indices: no picture is
quantised twice, every nation's colour is an exact palette entry, and the file stays a 64-colour PNG.

A picture can also show only part of the board (``focus``), for a prompt about some areas: the box
round them plus a margin, never smaller than `MIN_CROP`, widened to a shape a phone shows well, at the
same width as the whole board, so the areas come out several times larger. Areas in ``highlight`` get
a thick outline in a colour no nation uses.

What is drawn comes from ``pbem.rules.view.view`` for the viewer, as in the SVG (`pbem.picture.board`).
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

import cairosvg
from PIL import Image, ImageDraw

from pbem.picture.board import map_svg
from pbem.picture.layout import Box, Layout, crop, load_layout, rings
from pbem.picture.legend import with_legend
from pbem.picture.palette import DARK, HIGHLIGHT, WHITE, Ink, stamp, with_fixed
from pbem.picture.pieces import Piece, ink_on, pieces_in
from pbem.rules.board.battle import PIRATES
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.model import Ruleset
from pbem.rules.ruleset.rulebook import ruleset_of
from pbem.rules.view import view

#: The width of a picture when the caller names none: the width letters use (pbem.service.pictures).
DEFAULT_WIDTH = 1100
#: Colours the map may use; the rest of the 64 are left for the pieces, the legend and the highlight.
MAP_COLOURS = 32
#: How many rasterised maps a process keeps (about 1 MB each at letter width).
MAP_CACHE = 24
#: The smallest part of the board a cropped picture shows (map units: the whole board is about 970 wide),
#: so that a single small area is shown with its neighbours rather than blown up.
MIN_CROP = (190.0, 140.0)
#: Map units round the focus areas' box in a cropped picture.
CROP_MARGIN = 16.0
#: A cropped picture is at most this much taller than wide, and at most this much wider than tall.
MAX_TALL, MAX_WIDE = 1.0, 1.6
#: Pixels per marker unit at least: on the whole board at letter width a map unit is about one pixel,
#: too small for a token's number, so markers are drawn larger there than the map's scale.
MIN_MARKER = 2.4


_MapKey = tuple[tuple[tuple[str, int, str, bool, str | None], ...], frozenset[str], Box, int]
_MAPS: OrderedDict[_MapKey, tuple[Image.Image, dict[str, int]]] = OrderedDict()
_MAPS_LOCK = threading.Lock()


def board_png(state: GameState, viewer: str = "observer", width: int | None = None,
              focus: Iterable[str] | None = None, highlight: Iterable[str] | None = None) -> bytes:
    """The board as ``viewer`` may see it, as a palette PNG ``width`` pixels wide (`DEFAULT_WIDTH` if not given).

    With ``focus``, only the part of the board round those areas (areas not on the map are ignored; none
    left means the whole board); ``highlight`` areas are outlined wherever they are shown.
    """
    return png_bytes(board_image(state, viewer, width, focus, highlight))


def board_image(state: GameState, viewer: str = "observer", width: int | None = None,
                focus: Iterable[str] | None = None, highlight: Iterable[str] | None = None) -> Image.Image:
    """The picture of `board_png` as a Pillow image in mode "P" (tests read its pixels)."""
    seen = view(state, viewer)
    ruleset = ruleset_of(state) if state.players else None
    layout = load_layout()
    in_play = frozenset(seen["areas"])
    width = width or DEFAULT_WIDTH
    focus_set = {a for a in focus or () if a in layout.areas}
    box = focus_box(layout, focus_set) if focus_set else crop(layout, set(in_play))
    image, colours = map_image(ruleset, in_play, box, width)
    image = image.copy()
    ink = Ink(image, colours)
    scale = image.width / box[2]
    canvas = Canvas(ImageDraw.Draw(image), ink, box, scale)
    for name in sorted({a for a in highlight or () if a in layout.areas}):
        canvas.outline(layout, name)
    nations = _draw_pieces(canvas, state, layout, seen, ruleset)
    return with_legend(image, ink, seen, ruleset, nations if focus_set else None)


def png_bytes(image: Image.Image) -> bytes:
    """The image as PNG bytes at zlib's level 5: level 6 (the default) took two to three times as long for 5%
    less, level 4 about as long for 5% more, level 9 fifteen times as long; RLE alone made a third more."""
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=5)
    return out.getvalue()


def focus_box(layout: Layout, names: set[str]) -> Box:
    """The part of the board to show for ``names``: their box plus `CROP_MARGIN`, at least `MIN_CROP`,
    no taller than `MAX_TALL` times its width nor wider than `MAX_WIDE` times its height, inside the map."""
    mx, my, mw, mh = layout.view_box
    x0 = min(layout.areas[n].bbox[0] for n in names) - CROP_MARGIN
    y0 = min(layout.areas[n].bbox[1] for n in names) - CROP_MARGIN
    x1 = max(layout.areas[n].bbox[2] for n in names) + CROP_MARGIN
    y1 = max(layout.areas[n].bbox[3] for n in names) + CROP_MARGIN
    w, h = max(x1 - x0, MIN_CROP[0]), max(y1 - y0, MIN_CROP[1])
    w, h = max(w, h / MAX_TALL), max(h, w / MAX_WIDE)
    w, h = min(w, mw), min(h, mh)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    left = min(max(cx - w / 2, mx), mx + mw - w)
    top = min(max(cy - h / 2, my), my + mh - h)
    return (round(left, 1), round(top, 1), round(w, 1), round(h, 1))


def _drawn_of(ruleset: Ruleset | None) -> tuple[tuple[str, int, str, bool, str | None], ...]:
    """What the map shows of each area of the ruleset (limit, city site, flood plain, volcano): the map
    cache's key, cheap to make and exact, where the areas themselves are not hashable."""
    if ruleset is None:
        return ()
    return tuple((a.name, a.population_limit, a.city_site, a.flood_plain, a.volcano)
                 for _, a in sorted(ruleset.areas.items()))


def map_image(ruleset: Ruleset | None, in_play: frozenset[str], box: Box, width: int) -> tuple[Image.Image, dict[str, int]]:
    """The map of ``box`` at ``width`` pixels as `rasterise` makes it, kept per process for the last
    `MAP_CACHE` parts drawn: rasterising is most of the cost, and a server draws few parts of few boards."""
    key = (_drawn_of(ruleset), in_play, box, width)
    with _MAPS_LOCK:
        hit = _MAPS.get(key)
        if hit is not None:
            _MAPS.move_to_end(key)
            return hit
    board = {name: ruleset.areas[name] for name in ruleset.areas} if ruleset else {}
    made = rasterise(map_svg(board, in_play, box, width))
    with _MAPS_LOCK:
        _MAPS[key] = made
        while len(_MAPS) > MAP_CACHE:
            _MAPS.popitem(last=False)
    return made


def clear_map_cache() -> None:
    """Forget every map drawn (a benchmark's first picture, a test that draws from nothing)."""
    with _MAPS_LOCK:
        _MAPS.clear()


def rasterise(svg: str) -> tuple[Image.Image, dict[str, int]]:
    """The map's SVG as an image in a palette of at most `MAP_COLOURS` colours, with `FIXED` added as exact
    entries; and each fixed colour's index."""
    png = cairosvg.svg2png(bytestring=svg.encode("utf-8"))
    rendered = Image.open(io.BytesIO(png)).convert("RGB")
    image = rendered.quantize(MAP_COLOURS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    return image, with_fixed(image)


class Canvas:
    """Drawing in map units on a picture of ``box`` at ``scale`` pixels per unit; markers at least `MIN_MARKER`."""

    def __init__(self, draw: ImageDraw.ImageDraw, ink: Ink, box: Box, scale: float) -> None:
        self.draw, self.ink, self.box, self.scale = draw, ink, box, scale
        self.m = max(scale, MIN_MARKER)

    def px(self, x: float, y: float) -> tuple[float, float]:
        return ((x - self.box[0]) * self.scale, (y - self.box[1]) * self.scale)

    def outline(self, layout: Layout, name: str) -> None:
        """A thick outline in `HIGHLIGHT` round every ring of the area, a thin dark line inside it."""
        thick = max(3, round(1.3 * self.scale))
        for ring in rings(layout.areas[name].path):
            points = [self.px(x, y) for x, y in ring]
            points.append(points[0])
            self.draw.line(points, fill=self.ink(HIGHLIGHT), width=thick, joint="curve")
            self.draw.line(points, fill=self.ink(DARK), width=1)

    def text(self, x: float, y: float, text: str, colour: str, size: float) -> None:
        """``text`` centred on pixel (x, y), from a stamp made once per text and size."""
        mask, (dx, dy) = stamp(text, max(8, round(size)))
        self.draw.bitmap((round(x) + dx, round(y) + dy), mask, fill=self.ink(colour))

    def marker(self, piece: Piece, x: float, y: float) -> None:
        """One marker centred on pixel (x, y), the shapes of `pbem.picture.pieces.marker` at ``m`` pixels a unit."""
        m, c = self.m, piece.colour
        fill, dark, edge = self.ink(c), self.ink(DARK), max(1, round(0.5 * m))
        number = str(piece.count)
        if piece.kind == "city":
            self.draw.rectangle([x - 3 * m, y - 3 * m, x + 3 * m, y + 3 * m], fill=fill, outline=dark,
                                width=max(1, round(0.8 * m)))
            if piece.nation == PIRATES:
                self.text(x, y, "P", WHITE, 4.0 * m)
            else:
                self.draw.rectangle([x - m, y - m, x + m, y + m], fill=self.ink(ink_on(c)))
        elif piece.kind == "ship":
            sail = [(x - 0.2 * m, y - 1.8 * m), (x - 0.2 * m, y - 5.0 * m), (x + 2.8 * m, y - 2.0 * m)]
            hull = [(x - 3.8 * m, y - 1.6 * m), (x + 3.8 * m, y - 1.6 * m), (x + 2.6 * m, y + 2.8 * m),
                    (x - 2.6 * m, y + 2.8 * m)]
            self.draw.polygon(sail, fill=self.ink(WHITE), outline=dark)
            self.draw.polygon(hull, fill=fill, outline=dark, width=edge)
            self.text(x, y + 0.6 * m, number, ink_on(c), 3.6 * m)
        elif piece.kind == "town":
            house = [(x - 2.8 * m, y + 2.6 * m), (x - 2.8 * m, y - 0.6 * m), (x, y - 3.2 * m),
                     (x + 2.8 * m, y - 0.6 * m), (x + 2.8 * m, y + 2.6 * m)]
            self.draw.polygon(house, fill=fill, outline=dark, width=edge)
            self.text(x, y + 0.5 * m, number, ink_on(c), 3.6 * m)
        else:
            r = 2.8 * m
            self.draw.ellipse([x - r, y - r, x + r, y + r], fill=fill, outline=dark, width=edge)
            self.text(x, y, number, ink_on(c), 3.8 * m)

    def row(self, pieces: list[Piece], x: float, y: float, per_row: int = 4) -> None:
        """Markers centred under pixel (x, y), at most ``per_row`` to a row, as `pbem.picture.pieces.row`."""
        for start in range(0, len(pieces), per_row):
            line = pieces[start:start + per_row]
            left = x - sum(p.width for p in line) * self.m / 2
            for p in line:
                self.marker(p, left + p.width * self.m / 2, y)
                left += p.width * self.m
            y += 6.6 * self.m


def _draw_pieces(canvas: Canvas, state: GameState, layout: Layout, seen: dict[str, Any],
                 ruleset: Ruleset | None) -> list[str]:
    """Every area's pieces in a row under its label, as in the SVG; the nations seen in the picture, in order."""
    x0, y0, w, h = canvas.box
    nations: list[str] = []
    for name, shown in sorted(seen["areas"].items()):
        shape = layout.areas.get(name)
        if shape is None:
            continue
        ax, ay = shape.anchor
        if not (x0 - 20 < ax < x0 + w + 20 and y0 - 20 < ay < y0 + h + 20):
            continue
        ships = dict(state.area(name).ships)
        pieces = pieces_in(name, shown["tokens"], shown["city"], ships, shown.get("towns", {}), ruleset)
        if pieces:
            px, py = canvas.px(ax, ay)
            canvas.row(pieces, px, py + 3.2 * canvas.scale + 3.6 * canvas.m)
            nations += [p.nation for p in pieces if p.nation not in nations]
    return nations



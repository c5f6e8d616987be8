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
from functools import lru_cache
from typing import Any

import cairosvg
from PIL import Image, ImageColor, ImageDraw, ImageFont

from pbem.escaping import escape_controls
from pbem.picture.board import NOT_IN_PLAY, map_svg
from pbem.picture.layout import Box, Layout, crop, load_layout, rings
from pbem.picture.pieces import COLOUR_WORDS, DISPLAY_COLOURS, Piece, ink_on, nation_colour, pieces_in
from pbem.rules.board.battle import PIRATES
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.model import Ruleset
from pbem.rules.ruleset.rulebook import ruleset_of
from pbem.rules.view import view

#: The width of a picture when the caller names none: the width letters use (pbem.service.pictures).
DEFAULT_WIDTH = 1100
#: Colours the map may use; the rest of the 64 are left for the pieces, the legend and the highlight.
MAP_COLOURS = 44
PALETTE_SIZE = 64
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
DARK = "#1a1a1a"
HIGHLIGHT = "#e6007e"
LEGEND_EDGE = "#777777"
VOLCANO = "#c0392b"
FLOOD_INK = "#3f7fc0"
#: Colours every picture may draw with, besides the nations' own.
FIXED = (DARK, "#000000", "#ffffff", HIGHLIGHT, LEGEND_EDGE, VOLCANO, FLOOD_INK, NOT_IN_PLAY,
         *COLOUR_WORDS.values(), *DISPLAY_COLOURS.values())


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
    if focus_set:
        return _with_strip(image, ink, seen, ruleset, nations)
    _legend(canvas, image.height, seen, ruleset)
    return image


def png_bytes(image: Image.Image) -> bytes:
    """The image as PNG bytes at zlib's default level: level 4 saves a few milliseconds, but a board full of
    pieces then comes within a tenth of the 100 kB a letter allows; level 9 costs five times as much."""
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=6)
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
    palette = image.getpalette() or []
    used = len(palette) // 3
    colours: dict[str, int] = {}
    for colour in FIXED:
        key = colour.lower()
        if key not in colours and used < PALETTE_SIZE:
            palette += list(ImageColor.getrgb(key))
            colours[key] = used
            used += 1
    image.putpalette(palette)
    return image, colours


class Ink:
    """Palette indices of colours, adding a colour the palette lacks while room is left, else the nearest."""

    def __init__(self, image: Image.Image, colours: dict[str, int]) -> None:
        self.image = image
        self.colours = dict(colours)
        self.palette = image.getpalette() or []

    def __call__(self, colour: str) -> int:
        key = colour.lower()
        if key in self.colours:
            return self.colours[key]
        rgb = ImageColor.getrgb(key)[:3]
        if len(self.palette) // 3 < PALETTE_SIZE:
            self.colours[key] = len(self.palette) // 3
            self.palette += list(rgb)
            self.image.putpalette(self.palette)
        else:
            entries = [tuple(self.palette[i:i + 3]) for i in range(0, len(self.palette), 3)]
            self.colours[key] = min(range(len(entries)),
                                    key=lambda i: sum((a - b) ** 2 for a, b in zip(entries[i], rgb)))
        return self.colours[key]


@lru_cache(maxsize=32)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's own scalable font at ``size`` pixels: it ships with Pillow, so no machine's fonts matter."""
    return ImageFont.load_default(size=size)


@lru_cache(maxsize=1024)
def stamp(text: str, size: int) -> tuple[Image.Image, tuple[int, int]]:
    """``text`` at ``size`` pixels as a two-level mask, and where its top left lies from the point it is centred on.

    Why: a busy board has nearly two hundred numbers, all among a few texts and sizes; drawing each
    anew through FreeType was a quarter of a picture's time. Two levels, as Pillow draws text on a
    palette image (its shades would be other colours' indices).
    """
    face = font(size)
    left, top, right, bottom = face.getbbox(text, anchor="mm")
    mask = Image.new("1", (right - left + 2, bottom - top + 2), 0)
    ImageDraw.Draw(mask).text((1 - left, 1 - top), text, fill=1, font=face, anchor="mm")
    return mask, (left - 1, top - 1)


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
                self.text(x, y, "P", "#ffffff", 4.0 * m)
            else:
                self.draw.rectangle([x - m, y - m, x + m, y + m], fill=self.ink(ink_on(c)))
        elif piece.kind == "ship":
            sail = [(x - 0.2 * m, y - 1.8 * m), (x - 0.2 * m, y - 5.0 * m), (x + 2.8 * m, y - 2.0 * m)]
            hull = [(x - 3.8 * m, y - 1.6 * m), (x + 3.8 * m, y - 1.6 * m), (x + 2.6 * m, y + 2.8 * m),
                    (x - 2.6 * m, y + 2.8 * m)]
            self.draw.polygon(sail, fill=self.ink("#ffffff"), outline=dark)
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


def _players(seen: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p["nation"], escape_controls(p["name"], one_line=True)) for p in seen["players"] if p["nation"]]


def _caption(seen: dict[str, Any]) -> str:
    if seen["turn"]:
        return f"{seen['game']}: turn {seen['turn']}, {seen['phase']}"
    return f"{seen['game']}: {seen['phase']}"


def _count(n: int, noun: str) -> str:
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{n} {noun if n == 1 else plural}"


LEGEND_FONT = 13
LEGEND_LINE = 17


def _legend(canvas: Canvas, image_h: int, seen: dict[str, Any], ruleset: Ruleset | None) -> None:
    """Who plays which colour and what the marks mean, in the lower left corner, as in the SVG's legend."""
    draw, ink = canvas.draw, canvas.ink
    small = font(LEGEND_FONT)
    lines = [(nation, f"{nation} ({player}): "
                      f"{_count(seen['nations'].get(nation.lower(), {}).get('tokens_on_board', 0), 'token')}, "
                      f"{_count(seen['nations'].get(nation.lower(), {}).get('cities_on_board', 0), 'city')}")
             for nation, player in _players(seen)]
    keys = ["token", "barbarians", "city", "ship", "site", "volcano", "flood", "out"]
    texts = {"token": "tokens (number)", "barbarians": "Barbarian tokens", "city": "city (black, P: pirate city)",
             "ship": "ships (number)", "site": "city site (white: open to Flood)", "volcano": "volcano",
             "flood": "flood plain", "out": "not in play"}
    width = 26 + max([small.getlength(_caption(seen))] + [small.getlength(t) for _, t in lines]
                     + [small.getlength(t) for t in texts.values()])
    height = (len(lines) + len(keys) + 1) * LEGEND_LINE + 12
    left, top = 6, image_h - height - 6
    draw.rectangle([left, top, left + width, top + height], fill=ink("#ffffff"), outline=ink(LEGEND_EDGE))
    y = top + 6 + LEGEND_LINE / 2
    draw.text((left + 6, y), _caption(seen), fill=ink(DARK), font=small, anchor="lm")
    cx = left + 12
    for nation, text in lines:
        y += LEGEND_LINE
        draw.ellipse([cx - 5, y - 5, cx + 5, y + 5], fill=ink(nation_colour(ruleset, nation)), outline=ink(DARK))
        draw.text((left + 22, y), text, fill=ink(DARK), font=small, anchor="lm")
    for key in keys:
        y += LEGEND_LINE
        _key(draw, ink, key, cx, y)
        draw.text((left + 22, y), texts[key], fill=ink(DARK), font=small, anchor="lm")


def _key(draw: ImageDraw.ImageDraw, ink: Ink, key: str, cx: float, y: float) -> None:
    """The small sign of one legend line, centred on (cx, y)."""
    grey, dark = ink("#bbbbbb"), ink(DARK)
    if key in ("token", "barbarians"):
        draw.ellipse([cx - 5, y - 5, cx + 5, y + 5], fill=grey if key == "token" else dark, outline=dark)
    elif key == "city":
        draw.rectangle([cx - 5, y - 5, cx + 5, y + 5], fill=grey, outline=dark, width=2)
    elif key == "ship":
        draw.polygon([(cx - 6, y - 1), (cx + 6, y - 1), (cx + 4, y + 4), (cx - 4, y + 4)], fill=grey, outline=dark)
        draw.polygon([(cx, y - 2), (cx, y - 7), (cx + 4, y - 2)], fill=ink("#ffffff"), outline=dark)
    elif key == "site":
        draw.rectangle([cx - 4, y - 4, cx + 4, y + 4], fill=ink("#111111"))
    elif key == "volcano":
        draw.polygon([(cx - 5, y + 4), (cx, y - 5), (cx + 5, y + 4)], fill=ink(VOLCANO))
    elif key == "flood":
        draw.rectangle([cx - 5, y - 5, cx + 5, y + 5], outline=ink(FLOOD_INK))
        for d in (-4, 0, 4):
            draw.line([(cx + d - 3, y + 5), (cx + d + 3, y - 5)], fill=ink(FLOOD_INK))
    else:
        draw.rectangle([cx - 5, y - 5, cx + 5, y + 5], fill=ink(NOT_IN_PLAY), outline=ink("#888888"))


def _with_strip(image: Image.Image, ink: Ink, seen: dict[str, Any], ruleset: Ruleset | None,
                nations: list[str]) -> Image.Image:
    """A cropped picture with a strip under it: the caption and the colour of each nation in the picture.

    Why under and not on it: a crop is all areas in play, and a legend laid over it would hide some. Its
    letters are as large as the map's names (a fiftieth of the width), to read on a phone as they do.
    """
    size = max(LEGEND_FONT, round(image.width / 50))
    small, line_h, dot = font(size), round(size * 1.3), size * 0.4
    players = dict(_players(seen))
    items = [(n, f"{n} ({players[n]})" if n in players else n) for n in nations]
    rows: list[list[tuple[str, str]]] = [[]]
    x = 6.0
    for nation, text in items:
        step = 3 * dot + small.getlength(text) + size
        if x + step > image.width and rows[-1]:
            rows.append([])
            x = 6.0
        rows[-1].append((nation, text))
        x += step
    height = (1 + len(rows)) * line_h + 10
    out = Image.new("P", (image.width, image.height + height), ink("#ffffff"))
    out.putpalette(ink.palette)
    out.paste(image, (0, 0))
    ink.image = out  # colours added from here on go into the new picture's palette
    draw = ImageDraw.Draw(out)
    draw.line([(0, image.height), (image.width, image.height)], fill=ink(LEGEND_EDGE), width=1)
    y = image.height + 5 + line_h / 2
    draw.text((6, y), _caption(seen), fill=ink(DARK), font=small, anchor="lm")
    for line in rows:
        y += line_h
        x = 6.0
        for nation, text in line:
            draw.ellipse([x, y - dot, x + 2 * dot, y + dot], fill=ink(nation_colour(ruleset, nation)),
                         outline=ink(DARK), width=2)
            draw.text((x + 3 * dot, y), text, fill=ink(DARK), font=small, anchor="lm")
            x += 3 * dot + small.getlength(text) + size
    out.putpalette(ink.palette)
    return out

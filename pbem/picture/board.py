"""The board of one game as an SVG map of the Mediterranean (the PNG for letters is `pbem.picture.raster`).

Why it looks as it does: players know the board as a map, so the areas are
regions of real coasts (``data/layout.json``, made from real geography by
``tools/board_layout.py``), shaded by population limit, with city sites, flood
plains and volcanoes marked as on the board. Areas not in play for this number
of players are grey; the picture is cropped to the areas in play.

What it shows comes from ``pbem.rules.view.view`` for the viewer, so a viewer
sees in the picture no more than in ``pbem state``. The view has no ships;
ships on the board are public (every player sees the board), so they are read
from the game state for the areas the view shows.
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape, quoteattr

from pbem.escaping import escape_controls
from pbem.picture.layout import Layout, crop, load_layout
from pbem.picture.pieces import Piece, nation_colour, pieces_in, row
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.model import Area, Ruleset
from pbem.rules.ruleset.rulebook import ruleset_of
from pbem.rules.view import view

PIXELS_PER_UNIT = 3.0
SEA = "#a9cbe3"
SEA_INK = "#3d6f96"
OUTSIDE = "#ece6d6"
OUTSIDE_EDGE = "#b9ae93"
NOT_IN_PLAY = "#d3d3d3"
NOT_IN_PLAY_EDGE = "#a8a8a8"
NOT_IN_PLAY_INK = "#8c8c8c"
BORDER = "#6b5b3e"
#: Land shaded by population limit, lightest for 1, as on the board's own key.
LIMIT_SHADES = {1: "#f4ecc9", 2: "#e8e0aa", 3: "#d8d58f", 4: "#c5c97c", 5: "#afbb69"}

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"


def board_svg(state: GameState, viewer: str = "observer") -> str:
    """The board as ``viewer`` may see it, as an SVG document (a string).

    The legend names the players, as they wrote their names: the document is
    escaped whole (`pbem.escaping`), since XML cannot carry a control
    character at all (a name with an ESC in it made the picture unreadable,
    and a letter's PNG impossible to draw).
    """
    seen = view(state, viewer)
    ruleset = ruleset_of(state) if state.players else None
    layout = load_layout()
    in_play = set(seen["areas"])
    box = crop(layout, in_play)
    board = {name: ruleset.areas[name] for name in ruleset.areas} if ruleset else {}
    parts = [_head(box, seen), _defs(), _sea(box), _land(layout, board, in_play), _seas(layout, box)]
    parts.append(_labels(layout, board, in_play))
    parts.append(_pieces(state, layout, seen, ruleset))
    parts.append(_legend(box, seen, ruleset))
    parts.append("</svg>\n")
    return escape_controls("".join(parts))


def map_svg(board: dict[str, Area], in_play: frozenset[str], box: tuple[float, float, float, float],
            width: int) -> str:
    """The map alone (sea, areas, names and marks, no pieces, no legend) of the part ``box``, ``width`` pixels wide.

    The same layers as `board_svg`, so the PNG's map looks like the SVG's; it depends only on which areas are in
    play and on the part shown, so `pbem.picture.raster` draws it once and puts each state's pieces on it. Areas
    wholly outside ``box`` are left out: they would not show, and drawing them is most of the cost.
    """
    layout = load_layout()
    x, y, w, h = box
    shown = {name for name, shape in layout.areas.items()
             if shape.bbox[0] < x + w and shape.bbox[2] > x and shape.bbox[1] < y + h and shape.bbox[3] > y}
    part = Layout(layout.view_box, {n: s for n, s in layout.areas.items() if n in shown}, layout.outside,
                  layout.seas, layout.touching)
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
            f'viewBox="{x} {y} {w} {h}" width="{width}" height="{round(width * h / w)}" font-family="{FONT}">')
    return "".join([head, _defs(), _sea(box), _land(part, board, set(in_play)), _seas(layout, box),
                    _labels(part, board, set(in_play)), "</svg>\n"])


def _head(box: tuple[float, float, float, float], seen: dict[str, Any]) -> str:
    x, y, w, h = box
    title = f"Game {seen['game']}, turn {seen['turn']}, {seen['phase']}, as seen by {seen['viewer']}"
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        f'viewBox="{x} {y} {w} {h}" width="{round(w * PIXELS_PER_UNIT)}" height="{round(h * PIXELS_PER_UNIT)}" '
        f'font-family="{FONT}" data-viewer={quoteattr(seen["viewer"])}>'
        f"<title>{escape(title)}</title>"
    )


def _defs() -> str:
    return (
        "<defs>"
        '<pattern id="flood" patternUnits="userSpaceOnUse" width="2.4" height="2.4" patternTransform="rotate(35)">'
        '<line x1="0" y1="0" x2="0" y2="2.4" stroke="#3f7fc0" stroke-width="0.55" stroke-opacity="0.55"/>'
        "</pattern>"
        "</defs>"
    )


def _sea(box: tuple[float, float, float, float]) -> str:
    x, y, w, h = box
    return f'<rect class="sea" x="{x}" y="{y}" width="{w}" height="{h}" fill="{SEA}"/>'


def _land(layout: Layout, board: dict[str, Area], in_play: set[str]) -> str:
    """Land outside the game, then every area: shaded when in play, grey when not; flood plains hatched.

    Each outline is written once, in ``<defs>``; the area and its flood-plain hatching ``<use>`` it.
    """
    shapes = "".join(f'<path id={quoteattr("area-" + name)} d="{shape.path}"/>' for name, shape in sorted(layout.areas.items()))
    out = [f'<defs id="area-shapes">{shapes}</defs>',
           f'<path class="outside" d="{layout.outside}" fill="{OUTSIDE}" fill-rule="evenodd" '
           f'stroke="{OUTSIDE_EDGE}" stroke-width="0.3"/>', '<g id="areas" stroke-linejoin="round" fill-rule="evenodd">']
    flood = []
    for name in sorted(layout.areas):
        area = board.get(name)
        playing = name in in_play
        fill = LIMIT_SHADES.get(area.population_limit, LIMIT_SHADES[5]) if playing and area else NOT_IN_PLAY
        edge, width = (BORDER, 0.45) if playing else (NOT_IN_PLAY_EDGE, 0.35)
        status = "in-play" if playing else "not-in-play"
        out.append(f'<use xlink:href={quoteattr("#area-" + name)} class="area {status}" data-area={quoteattr(name)} '
                   f'fill="{fill}" stroke="{edge}" stroke-width="{width}"/>')
        if playing and area and area.flood_plain:
            flood.append(f'<use xlink:href={quoteattr("#area-" + name)} class="flood-plain" '
                         f'data-area={quoteattr(name)} fill="url(#flood)" stroke="none"/>')
    out.append("</g>")
    out.append('<g id="flood-plains" fill-rule="evenodd">' + "".join(flood) + "</g>")
    return "".join(out)


def _seas(layout: Layout, box: tuple[float, float, float, float]) -> str:
    x, y, w, h = box
    out = ['<g id="sea-names" font-style="italic" text-anchor="middle" fill="' + SEA_INK + '" font-size="6.5">']
    for name, (sx, sy) in sorted(layout.seas.items()):
        if not (x < sx < x + w and y < sy < y + h):
            continue
        half = len(name) * 6.5 * 0.33  # about half the width of the name
        sx = min(max(sx, x + half + 2), x + w - half - 2)
        out.append(f'<text x="{sx:.1f}" y="{sy}" letter-spacing="0.6">{escape(name)}</text>')
    return "".join(out) + "</g>"


def _labels(layout: Layout, board: dict[str, Area], in_play: set[str]) -> str:
    """Each area's name, and under it its population limit, city site and volcano marks."""
    out = ['<g id="labels" text-anchor="middle">']
    for name, shape in sorted(layout.areas.items()):
        area = board.get(name)
        playing = name in in_play
        x, y = shape.anchor
        ink = "#2b2417" if playing else NOT_IN_PLAY_INK
        x0, y0, x1, y1 = shape.bbox
        size = 3.6 if min(x1 - x0, y1 - y0) > 16 else 2.8  # smaller names where areas are crowded
        out.append(f'<text class="area-name" data-area={quoteattr(name)} x="{x}" y="{y - 2.2:.1f}" '
                   f'font-size="{size}" fill="{ink}">{escape(name)}</text>')
        if area is None:
            continue
        marks = [("limit", 4.0)] + ([("site", 3.6)] if area.has_city_site else []) + ([("volcano", 3.6)] if area.volcano else [])
        left = x - sum(w for _, w in marks) / 2
        for kind, w in marks:
            cx = left + w / 2
            if kind == "limit":
                out.append(f'<g class="limit" data-area={quoteattr(name)} data-limit="{area.population_limit}">'
                           f'<circle cx="{cx:.1f}" cy="{y + 1.2:.1f}" r="1.8" fill="#ffffff" fill-opacity="0.85" '
                           f'stroke="{ink}" stroke-width="0.3"/><text x="{cx:.1f}" y="{y + 2.3:.1f}" '
                           f'font-size="3" font-weight="bold" fill="{ink}">{area.population_limit}</text></g>')
            elif kind == "site":
                fill = "#111111" if area.city_site == "black" else "#ffffff"
                edge = "#111111" if playing else NOT_IN_PLAY_INK
                out.append(f'<rect class="city-site" data-area={quoteattr(name)} data-site="{area.city_site}" '
                           f'x="{cx - 1.4:.1f}" y="{y - 0.2:.1f}" width="2.8" height="2.8" fill="{fill}" '
                           f'stroke="{edge}" stroke-width="0.4"/>')
            else:
                out.append(f'<path class="volcano" data-area={quoteattr(name)} data-volcano={quoteattr(area.volcano or "")} '
                           f'd="M{cx - 1.6:.1f} {y + 2.7:.1f}L{cx:.1f} {y - 0.3:.1f}L{cx + 1.6:.1f} {y + 2.7:.1f}Z" '
                           f'fill="#c0392b" stroke="#5a1a12" stroke-width="0.3"/>')
            left += w
    return "".join(out) + "</g>"


def _pieces(state: GameState, layout: Layout, seen: dict[str, Any], ruleset: Ruleset | None) -> str:
    """Cities, tokens, towns and ships of every area in the view, in a row under the area's label."""
    out = ['<g id="pieces">']
    for name, shown in sorted(seen["areas"].items()):
        shape = layout.areas.get(name)
        if shape is None:
            continue
        ships = dict(state.area(name).ships)
        pieces: list[Piece] = pieces_in(name, shown["tokens"], shown["city"], ships, shown.get("towns", {}), ruleset)
        if pieces:
            x, y = shape.anchor
            out.append(row(pieces, x, y + 7.0))
    return "".join(out) + "</g>"


def _legend(box: tuple[float, float, float, float], seen: dict[str, Any], ruleset: Ruleset | None) -> str:
    """Who plays which colour, and what the marks mean, in the lower left corner."""
    x, y, w, h = box
    players = [p for p in seen["players"] if p["nation"]]
    lines = [(p["nation"], p["name"]) for p in players]
    size = 3.4
    height = (len(lines) + 9) * 5.2 + 6
    left, top = x + 4, y + h - height - 4
    out = [f'<g id="legend" font-size="{size}">',
           f'<rect x="{left}" y="{top:.1f}" width="62" height="{height:.1f}" rx="1.5" fill="#ffffff" '
           f'fill-opacity="0.82" stroke="#777777" stroke-width="0.3"/>',
           f'<text x="{left + 3}" y="{top + 5.5:.1f}" font-weight="bold">{escape(caption(seen))}</text>']
    ty = top + 11.0
    for nation, player in lines:
        colour = nation_colour(ruleset, nation)
        counts = seen["nations"].get(nation.lower(), {})
        out.append(f'<g class="legend-nation" data-nation={quoteattr(nation)}>'
                   f'<circle cx="{left + 5}" cy="{ty - 1.1:.1f}" r="2.2" fill="{colour}" stroke="#1a1a1a" stroke-width="0.4"/>'
                   f'<text x="{left + 9}" y="{ty:.1f}">{escape(nation)} ({escape(player)}): '
                   f'{counted(counts.get("tokens_on_board", 0), "token")}, {counted(counts.get("cities_on_board", 0), "city")}</text></g>')
        ty += 5.2
    keys = [
        ('<circle cx="{x}" cy="{y}" r="2" fill="#bbbbbb" stroke="#1a1a1a" stroke-width="0.4"/>', "tokens (number)"),
        ('<circle cx="{x}" cy="{y}" r="2" fill="#1a1a1a"/>', "Barbarian tokens"),
        ('<rect x="{x0}" y="{y0}" width="4" height="4" fill="#bbbbbb" stroke="#1a1a1a" stroke-width="0.6"/>', "city (black, P: pirate city)"),
        ('<path d="M{x0} {y}h4l-.8 2h-2.4z" fill="#bbbbbb" stroke="#1a1a1a" stroke-width="0.4"/>', "ships (number)"),
        ('<rect x="{x0}" y="{y0}" width="3" height="3" fill="#111111"/>', "city site (white: open to Flood)"),
        ('<path d="M{x0} {y2}l2 -3.4l2 3.4z" fill="#c0392b"/>', "volcano"),
        ('<rect x="{x0}" y="{y0}" width="4" height="4" fill="url(#flood)" stroke="#3f7fc0" stroke-width="0.3"/>', "flood plain"),
        ('<rect x="{x0}" y="{y0}" width="4" height="4" fill="' + NOT_IN_PLAY + '" stroke="#888888" stroke-width="0.3"/>',
         "not in play"),
    ]
    for shape, text in keys:
        cx, cy = left + 5, ty - 1.1
        out.append(shape.format(x=cx, y=f"{cy:.1f}", x0=cx - 2, y0=f"{cy - 2:.1f}", y2=f"{cy + 1.7:.1f}")
                   + f'<text x="{left + 9}" y="{ty:.1f}">{escape(text)}</text>')
        ty += 5.2
    return "".join(out) + "</g>"


def caption(seen: dict[str, Any]) -> str:
    """The picture's caption: the game and where it stands (the legend of the PNG shows it too)."""
    if seen["turn"]:
        return f"{seen['game']}: turn {seen['turn']}, {seen['phase']}"
    return f"{seen['game']}: {seen['phase']}"


def counted(n: int, noun: str) -> str:
    """``n`` of a noun, in the plural when it is not one: "1 token", "3 cities"."""
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{n} {noun if n == 1 else plural}"

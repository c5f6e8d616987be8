"""What stands in an area, drawn as small SVG markers in the nations' colours.

Why here and not in the board module: the markers (population tokens, cities,
ships, towns, Barbarians, pirate cities) are the part of the picture that the
tests read back, so each marker is one ``<g>`` that names its area, nation,
kind and count in ``data-`` attributes, whatever shape draws it.
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from pbem.rules.board.battle import PIRATES
from pbem.rules.board.ranking import BARBARIANS
from pbem.rules.ruleset.model import Ruleset

#: Colour words of nations.csv that are not SVG colour names.
COLOUR_WORDS = {"red": "#d62728", "yellow-green": "#9acd32"}

#: Display colours for the nations whose colour nations.csv leaves blank (it records a
#: colour only where a source names one). Chosen to be told apart on the map.
DISPLAY_COLOURS = {
    "Africa": "#8c564b",
    "Italy": "#d62728",
    "Iberia": "#d62728",
    "Illyria": "#f2c80f",
    "Thrace": "#1b7837",
    "Crete": "#9acd32",
    "Asia": "#7b3294",
    "Assyria": "#1f6fd1",
    "Babylon": "#17a6b8",
    "Egypt": "#ff7f0e",
    BARBARIANS: "#1a1a1a",
    PIRATES: "#1a1a1a",
}
UNKNOWN_COLOUR = "#777777"


def nation_colour(ruleset: Ruleset | None, nation: str) -> str:
    """The nation's colour: nations.csv first, else the display colour."""
    recorded = ruleset.nations[nation].colour if ruleset and nation in ruleset.nations else None
    if recorded:
        return COLOUR_WORDS.get(recorded, recorded)
    return DISPLAY_COLOURS.get(nation, UNKNOWN_COLOUR)


def ink_on(colour: str) -> str:
    """Black or white, whichever reads better on ``colour`` (a #rrggbb value)."""
    if not (colour.startswith("#") and len(colour) == 7):
        return "#000000"
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "#ffffff"


@dataclass(frozen=True)
class Piece:
    """One marker: ``kind`` is token, city, ship, town or barbarians; pirate cities are cities of Pirates."""

    area: str
    nation: str
    kind: str
    count: int
    colour: str

    @property
    def width(self) -> float:
        return {"city": 6.4, "ship": 7.6, "town": 5.6}.get(self.kind, 6.0)


def pieces_in(area: str, tokens: dict[str, int], city: str | None, ships: dict[str, int],
              towns: dict[str, int], ruleset: Ruleset | None) -> list[Piece]:
    """The markers of one area, city first, then tokens, towns and ships, each nation in name order."""
    out: list[Piece] = []
    if city:
        out.append(Piece(area, city, "city", 1, nation_colour(ruleset, city)))
    for nation, count in sorted(tokens.items()):
        if count > 0:
            kind = "barbarians" if nation == BARBARIANS else "token"
            out.append(Piece(area, nation, kind, count, nation_colour(ruleset, nation)))
    for nation, count in sorted(towns.items()):
        if count > 0:
            out.append(Piece(area, nation, "town", count, nation_colour(ruleset, nation)))
    for nation, count in sorted(ships.items()):
        if count > 0:
            out.append(Piece(area, nation, "ship", count, nation_colour(ruleset, nation)))
    return out


def _number(x: float, y: float, count: int, colour: str, size: float = 3.4) -> str:
    return (f'<text x="{x:.1f}" y="{y + size * 0.36:.1f}" font-size="{size}" font-weight="bold" '
            f'text-anchor="middle" fill="{ink_on(colour)}">{count}</text>')


def marker(piece: Piece, x: float, y: float) -> str:
    """The SVG of one marker centred on (x, y)."""
    c, dark = piece.colour, "#1a1a1a"
    kind = "city pirate" if piece.kind == "city" and piece.nation == PIRATES else piece.kind
    if piece.kind == "barbarians":
        kind = "tokens barbarians"
    elif piece.kind == "token":
        kind = "tokens"
    elif piece.kind == "ship":
        kind = "ships"
    elif piece.kind == "town":
        kind = "towns"
    head = (f'<g class="{kind}" data-area={quoteattr(piece.area)} data-nation={quoteattr(piece.nation)} '
            f'data-count="{piece.count}">')
    if piece.kind == "city":
        body = (f'<rect x="{x - 3:.1f}" y="{y - 3:.1f}" width="6" height="6" fill="{c}" stroke="{dark}" '
                f'stroke-width="0.8"/>')
        if piece.nation == PIRATES:
            body += f'<text x="{x:.1f}" y="{y + 1.2:.1f}" font-size="3.6" font-weight="bold" text-anchor="middle" fill="#ffffff">P</text>'
        else:
            body += f'<rect x="{x - 1:.1f}" y="{y - 1:.1f}" width="2" height="2" fill="{ink_on(c)}"/>'
    elif piece.kind == "ship":
        hull = f"M{x - 3.6:.1f} {y - 0.4:.1f}H{x + 3.6:.1f}L{x + 2.4:.1f} {y + 2.6:.1f}H{x - 2.4:.1f}Z"
        sail = f"M{x - 0.2:.1f} {y - 0.6:.1f}V{y - 4.2:.1f}L{x + 2.6:.1f} {y - 0.9:.1f}Z"
        body = (f'<path d="{sail}" fill="#ffffff" stroke="{dark}" stroke-width="0.35"/>'
                f'<path d="{hull}" fill="{c}" stroke="{dark}" stroke-width="0.5"/>'
                + _number(x, y + 1.1, piece.count, c, 2.6))
    elif piece.kind == "town":
        house = f"M{x - 2.5:.1f} {y + 2.4:.1f}V{y - 0.6:.1f}L{x:.1f} {y - 2.9:.1f}L{x + 2.5:.1f} {y - 0.6:.1f}V{y + 2.4:.1f}Z"
        body = f'<path d="{house}" fill="{c}" stroke="{dark}" stroke-width="0.5"/>' + _number(x, y + 0.5, piece.count, c, 2.8)
    else:
        body = (f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.8" fill="{c}" stroke="{dark}" stroke-width="0.5"/>'
                + _number(x, y, piece.count, c))
    return head + body + "</g>"


def row(pieces: list[Piece], x: float, y: float, per_row: int = 4) -> str:
    """Markers centred under (x, y), at most ``per_row`` to a row."""
    out = []
    for start in range(0, len(pieces), per_row):
        line = pieces[start:start + per_row]
        width = sum(p.width for p in line)
        left = x - width / 2
        for p in line:
            out.append(marker(p, left + p.width / 2, y))
            left += p.width
        y += 6.6
    return "".join(out)

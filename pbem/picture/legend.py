"""The legend of the board's PNG: a strip under the map with the caption, who plays which colour, and the key.

Why under the map and not on it, as the SVG has it: at a letter's width the
legend must be set large enough to read on a phone, and laid over the map it
would hide the pieces of the areas in its corner. Its letters are as large as
a cropped picture's area names (a fiftieth of the width), so the strip reads
on a 390-pixel screen as the crop does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PIL import Image, ImageDraw

from pbem.escaping import escape_controls
from pbem.picture.board import NOT_IN_PLAY, caption, counted
from pbem.picture.palette import DARK, FLOOD_INK, KEY_GREY, LEGEND_EDGE, VOLCANO, WHITE, Ink, font
from pbem.picture.pieces import nation_colour
from pbem.rules.ruleset.model import Ruleset

#: The smallest letters of a legend, in pixels (for narrow pictures).
MIN_LETTERS = 13
KEYS = (("token", "tokens (number)"), ("barbarians", "Barbarian tokens"), ("city", "city (black, P: pirate city)"),
        ("ship", "ships (number)"), ("site", "city site (white: open to Flood)"), ("volcano", "volcano"),
        ("flood", "flood plain"), ("out", "not in play"))

#: One legend entry: how to draw its sign centred on (x, y) with half-size r, and its text.
Entry = tuple[Callable[[ImageDraw.ImageDraw, float, float, float], None], str]


def with_legend(image: Image.Image, ink: Ink, seen: dict[str, Any], ruleset: Ruleset | None,
                nations: list[str] | None = None) -> Image.Image:
    """``image`` with the legend strip under it: the caption, the nations (every player's with their pieces on
    the board when ``nations`` is None, else those named, as a crop shows them) and the key."""
    size = max(MIN_LETTERS, round(image.width / 50))
    letters, line, r = font(size), round(size * 1.35), size * 0.4
    players = {nation: escape_controls(name, one_line=True) for nation, name in _players(seen)}
    shown = list(players) if nations is None else nations
    people = [(_disc(ink, nation_colour(ruleset, n)), _who(n, players, seen, counts=nations is None)) for n in shown]
    keys = [(_key(ink, kind), text) for kind, text in KEYS]
    pad = 8
    sections = [_grid(people, letters, size, image.width - 2 * pad), _grid(keys, letters, size, image.width - 2 * pad)]
    rows = 1 + sum(len(s[0]) for s in sections)
    out = Image.new("P", (image.width, image.height + rows * line + 2 * pad), 0)
    out.putpalette(ink.palette)
    ink.image = out  # colours added from here on go into the new picture's palette
    draw = ImageDraw.Draw(out)
    draw.rectangle([0, image.height, out.width, out.height], fill=ink(WHITE))
    out.paste(image, (0, 0))
    draw.line([(0, image.height), (out.width, image.height)], fill=ink(LEGEND_EDGE), width=2)
    y = image.height + pad + line / 2
    draw.text((pad, y), caption(seen), fill=ink(DARK), font=letters, anchor="lm")
    for grid, column in sections:
        for row in grid:
            y += line
            for i, (sign, text) in enumerate(row):
                x = pad + i * column
                sign(draw, x + r, y, r)
                draw.text((x + 2 * r + size * 0.4, y), text, fill=ink(DARK), font=letters, anchor="lm")
    out.putpalette(ink.palette)
    return out


def _grid(entries: list[Entry], letters: Any, size: int, width: int) -> tuple[list[list[Entry]], float]:
    """The entries in rows of equal columns as wide as the widest entry, as many columns as fit."""
    if not entries:
        return [], 0.0
    column = max(letters.getlength(text) for _, text in entries) + size * 2.2
    per_row = max(1, int(width // column))
    return [entries[i:i + per_row] for i in range(0, len(entries), per_row)], column


def _players(seen: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p["nation"], p["name"]) for p in seen["players"] if p["nation"]]


def _who(nation: str, players: dict[str, str], seen: dict[str, Any], counts: bool) -> str:
    """'Egypt (Ann): 3 tokens, 1 city' for the whole board, 'Egypt (Ann)' for a crop (its counts are the board's)."""
    name = f"{nation} ({players[nation]})" if nation in players else nation
    if not counts:
        return name
    held = seen["nations"].get(nation.lower(), {})
    return f"{name}: {counted(held.get('tokens_on_board', 0), 'token')}, {counted(held.get('cities_on_board', 0), 'city')}"


def _disc(ink: Ink, colour: str) -> Callable[[ImageDraw.ImageDraw, float, float, float], None]:
    def sign(draw: ImageDraw.ImageDraw, x: float, y: float, r: float) -> None:
        draw.ellipse([x - r, y - r, x + r, y + r], fill=ink(colour), outline=ink(DARK), width=2)
    return sign


def _key(ink: Ink, kind: str) -> Callable[[ImageDraw.ImageDraw, float, float, float], None]:
    """The sign of one key entry, as the map and the pieces draw it, in a box of half-size r."""
    def sign(draw: ImageDraw.ImageDraw, x: float, y: float, r: float) -> None:
        grey, dark = ink(KEY_GREY), ink(DARK)
        if kind in ("token", "barbarians"):
            draw.ellipse([x - r, y - r, x + r, y + r], fill=grey if kind == "token" else dark, outline=dark, width=2)
        elif kind == "city":
            draw.rectangle([x - r, y - r, x + r, y + r], fill=grey, outline=dark, width=3)
        elif kind == "ship":
            draw.polygon([(x - r, y - 0.2 * r), (x + r, y - 0.2 * r), (x + 0.7 * r, y + 0.8 * r), (x - 0.7 * r, y + 0.8 * r)],
                         fill=grey, outline=dark)
            draw.polygon([(x, y - 0.3 * r), (x, y - 1.2 * r), (x + 0.8 * r, y - 0.3 * r)], fill=ink(WHITE), outline=dark)
        elif kind == "site":
            draw.rectangle([x - 0.8 * r, y - 0.8 * r, x + 0.8 * r, y + 0.8 * r], fill=ink("#111111"))
        elif kind == "volcano":
            draw.polygon([(x - r, y + 0.8 * r), (x, y - r), (x + r, y + 0.8 * r)], fill=ink(VOLCANO))
        elif kind == "flood":
            draw.rectangle([x - r, y - r, x + r, y + r], outline=ink(FLOOD_INK), width=2)
            for d in (-0.7, 0.0, 0.7):
                draw.line([(x + (d - 0.5) * r, y + r), (x + (d + 0.5) * r, y - r)], fill=ink(FLOOD_INK), width=2)
        else:
            draw.rectangle([x - r, y - r, x + r, y + r], fill=ink(NOT_IN_PLAY), outline=ink("#888888"), width=2)
    return sign

"""Colours and letters on a palette image: what the PNG's map, pieces and legend all draw with.

Why a palette throughout: a letter's picture must stay a 64-colour PNG, and
quantising each picture anew would cost time and shift the nations' colours.
So the map is reduced to a palette once, every colour drawn on it after is an
exact palette entry (`Ink`), and text is stamped in two levels, as Pillow
draws it on a palette image (shades would be other colours' indices).
"""

from __future__ import annotations

from functools import lru_cache

from PIL import Image, ImageColor, ImageDraw, ImageFont

from pbem.picture.board import NOT_IN_PLAY
from pbem.picture.pieces import COLOUR_WORDS, DISPLAY_COLOURS

PALETTE_SIZE = 64
DARK = "#1a1a1a"
WHITE = "#ffffff"
HIGHLIGHT = "#e6007e"
LEGEND_EDGE = "#777777"
VOLCANO = "#c0392b"
FLOOD_INK = "#3f7fc0"
KEY_GREY = "#bbbbbb"
#: Colours every picture may draw with, besides the nations' own; the map's palette leaves room for them.
FIXED = (DARK, "#000000", WHITE, HIGHLIGHT, LEGEND_EDGE, VOLCANO, FLOOD_INK, NOT_IN_PLAY, KEY_GREY, "#111111",
         *COLOUR_WORDS.values(), *DISPLAY_COLOURS.values())


def with_fixed(image: Image.Image) -> dict[str, int]:
    """Add `FIXED` to the palette of ``image`` (while it has room) as exact entries; each one's index."""
    palette = image.getpalette() or []
    colours: dict[str, int] = {}
    for colour in FIXED:
        key = colour.lower()
        if key not in colours and len(palette) // 3 < PALETTE_SIZE:
            colours[key] = len(palette) // 3
            palette += list(ImageColor.getrgb(key)[:3])
    image.putpalette(palette)
    return colours


class Ink:
    """Palette indices of colours, adding a colour the palette lacks while room is left, else the nearest.

    ``image`` is the picture whose palette grows; a drawing that moves to a larger picture points it there.
    """

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
    anew through FreeType was a quarter of a picture's time.
    """
    face = font(size)
    left, top, right, bottom = face.getbbox(text, anchor="mm")
    mask = Image.new("1", (right - left + 2, bottom - top + 2), 0)
    ImageDraw.Draw(mask).text((1 - left, 1 - top), text, fill=1, font=face, anchor="mm")
    return mask, (left - 1, top - 1)

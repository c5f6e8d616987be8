"""Pictures of a game for players: the board as an SVG map of the Mediterranean, or a palette PNG of it.

Imports only ``pbem.rules`` (and cairosvg and Pillow): a picture is a pure function of a
game state and a viewer, like every other report.
"""

from pbem.picture.board import board_svg
from pbem.picture.raster import board_png

__all__ = ["board_png", "board_svg"]

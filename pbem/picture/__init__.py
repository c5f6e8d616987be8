"""Pictures of a game for players: the board as an SVG map of the Mediterranean, or a PNG of it.

Imports only ``pbem.rules`` (and cairosvg): a picture is a pure function of a
game state and a viewer, like every other report.
"""

from pbem.picture.board import board_png, board_svg

__all__ = ["board_png", "board_svg"]

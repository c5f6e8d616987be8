"""The board as a picture for a letter: made once per position, shared by every letter that shows it.

The board a report shows is the same for every reader (tokens, cities and
ships are public), so one SVG and one PNG serve the whole table; they are
kept for the last few positions of each game in this process. A server can
turn pictures off (`board_pictures = false`), as bot games do to save the time.
"""

from __future__ import annotations

from functools import lru_cache

from pbem.mail.render import Picture, make_message_id
from pbem.picture import board_png, board_svg
from pbem.rules.core.state import GameState
from pbem.rules.view import view

from .settings import Settings

#: Wide enough to read area names on a phone turned sideways, small enough for a letter (a palette PNG of about 80 kB).
MAIL_WIDTH = 1100


@lru_cache(maxsize=16)
def _drawn(state: GameState, viewer: str) -> tuple[str, bytes]:
    return board_svg(state, viewer), board_png(state, viewer, width=MAIL_WIDTH)


def board_picture(state: GameState, settings: Settings, viewer: str = "observer", *, svg: bool = False) -> Picture | None:
    """The board at ``state`` as ``viewer`` may see it, or None when the server sends no pictures.

    The PNG is shown in the letter; the SVG (a few hundred kilobytes, for zooming in a browser) is attached
    only when asked for (``svg``: MAP), not with every report (issue 31: 213 MB a mailbox in one game)."""
    if not settings.board_pictures:
        return None
    drawn_svg, png = _drawn(state, viewer)
    content_id = make_message_id(f"{state.game_id}:board:{state.version}:{viewer}", settings.domain)
    return Picture(svg=drawn_svg if svg else None, png=png, content_id=content_id,
                   name=f"{state.game_id}-board-v{state.version}")


def board_of(state: GameState) -> tuple:
    """What a board picture shows, to tell whether two positions need two pictures: every area's pieces and
    every nation's ships (a caption's turn and phase aside)."""
    seen = view(state, "observer")
    return (tuple(sorted((name, repr(area)) for name, area in seen["areas"].items())),
            tuple(sorted((name, nation.get("ships", 0)) for name, nation in seen["nations"].items())))


def report_picture(since: GameState, state: GameState, settings: Settings) -> Picture | None:
    """The picture a report carries: the board now, when it changed since the last report's picture.

    Every player gets every report, so the last picture a player got is the previous report's, drawn
    where this report's span began (``since``), or an earlier one showing the same board. A report of
    phases that moved nothing (trade, most calamity selections) carries none.
    """
    if not settings.board_pictures or board_of(since) == board_of(state):
        return None
    return board_picture(state, settings)


#: A prompt's picture: the width of a phone's screen at twice its pixel density, so area names stay sharp.
PROMPT_WIDTH = 780


@lru_cache(maxsize=32)
def _cropped(state: GameState, viewer: str, areas: tuple[str, ...]) -> bytes:
    return board_png(state, viewer, width=PROMPT_WIDTH, focus=areas, highlight=areas)


def prompt_picture(state: GameState, settings: Settings, viewer: str, areas: list[str]) -> Picture | None:
    """The part of the board round the ``areas`` a prompt names, those outlined; None when the server sends no pictures.

    No SVG goes with it: the text part names the areas already, and a prompt comes every phase, where the
    weight of a whole board's SVG would fill a mailbox (issue 31).
    """
    if not settings.board_pictures or not areas:
        return None
    png = _cropped(state, viewer, tuple(areas))
    content_id = make_message_id(f"{state.game_id}:prompt-board:{state.version}:{viewer}:{','.join(areas)}", settings.domain)
    return Picture(svg=None, png=png, content_id=content_id, name=f"{state.game_id}-areas-v{state.version}")

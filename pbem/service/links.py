"""Each reader's link to a game's page (pbem/web), as letters print it and the web checks it.

A link is ``<web address>/g/<game>/<reader>/<token>/``: the reader is a seat
(``p3``), an observer by number (``o2``) or the moderator; the token is
`pbem.mail.tokens.page_token` of the game's key, the reader and the link's
generation. The generation counts what revokes a reader's links: each
hand-over of the seat (REPLACE) and each REVOKE by the moderator. A letter
carries its own reader's link and no one else's.
"""

from __future__ import annotations

from pbem.mail.tokens import page_token
from pbem.rules.core.state import GameState
from pbem.rules.table import kicked, link_revocations, observers, seat_generation
from pbem.store.unit_of_work import UnitOfWork

from .projector import load_state
from .settings import Settings

__all__ = ["letter_link", "link_generation", "page_url", "reader_for_address", "reader_named"]


def link_generation(state: GameState, reader: str) -> int:
    """How many times this reader's links were replaced: each hand-over of the seat and each REVOKE."""
    revoked = link_revocations(state, reader)
    if reader.startswith("p"):
        return seat_generation(state, int(reader[1:])) + revoked
    return revoked


def page_url(settings: Settings, key: bytes, state: GameState, reader: str) -> str | None:
    """The reader's link to the game's page, or None when the server has no web address."""
    base = settings.web_base
    if not base:
        return None
    token = page_token(key, state.game_id, reader, link_generation(state, reader))
    return f"{base}/g/{state.game_id}/{reader}/{token}/"


def reader_for_address(uow: UnitOfWork, state: GameState, address: str, moderator_email: str) -> str | None:
    """Whose page a letter to ``address`` links to: the seat it goes to, a watching observer, the moderator."""
    wanted = address.strip().lower()
    for player in state.players:
        row = uow.players.by_id(player.id)
        if row is not None and row.email.lower() == wanted:
            return None if player.id in kicked(state) else f"p{player.id}"
    for number in observers(state):
        row = uow.observers.get(number)
        if row is not None and row.email.lower() == wanted:
            return f"o{number}"
    if wanted == moderator_email.strip().lower():
        return "moderator"
    return None


def letter_link(uow: UnitOfWork, settings: Settings, key: bytes, state: GameState | str | None,
                recipient: str) -> str | None:
    """The link a letter to ``recipient`` carries: his own page's, or None (no web address, no game, or no
    reader of this game at that address: a stranger, a former player, an observer dismissed). ``state``: the
    game as the letter tells it, or its id for a notice, which is written without one (read as it stands)."""
    if not settings.web_base or not state:
        return None
    if isinstance(state, str):
        try:
            state = load_state(uow, state)
        except (LookupError, ValueError):
            return None
    if not state.players:
        return None
    game = uow.games.get(state.game_id)
    reader = reader_for_address(uow, state, recipient, game.moderator_email) if game is not None else None
    return None if reader is None else page_url(settings, key, state, reader)


def reader_named(state: GameState, words: str) -> str:
    """The reader a person names ("Egypt", "Ann", "moderator", "auditor", "observer 2") as a link names him
    ("p1", "moderator", "auditor", "o2"); LookupError in one line for anyone else."""
    text = " ".join(words.split()).lower()
    if text in ("moderator", "auditor"):
        return text
    if text.startswith("observer "):
        number = text.split(" ", 1)[1].lstrip("#")
        if number.isdigit() and int(number) in observers(state):
            return f"o{int(number)}"
        raise LookupError(f"no observer {number} watches {state.game_id}")
    for player in state.players:
        if text in ((player.nation or "").lower(), player.name.lower()):
            return f"p{player.id}"
    seats = ", ".join(p.nation or p.name for p in state.players)
    raise LookupError(f"no reader {words!r} in {state.game_id}: a nation or player ({seats}), moderator, auditor, "
                      "or observer N")

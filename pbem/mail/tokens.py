"""Reply addresses that authenticate a player.

Every mail to a player carries a personal Reply-To address

    pbem+<game_id>.<player_id>.<token>@<domain>

where token is the first 16 hex digits of HMAC-SHA256(key, "<game_id>:<player_id>")
with the game's secret key.  Replying to any prompt therefore "just works"
and a message sent to that address is known to come from someone who
received that player's mail.  Tokens are compared case-insensitively (some
MTAs lower-case local parts) and in constant time.

Each letter leaves with its own envelope sender (VERP)

    pbem+bounces=<outbox id>@<domain>

so a bounce names, by the address it returns to, the very letter that failed.
'=' never occurs in a game id, so no bounce address reads as a game's.

The unauthenticated game address `pbem+<game_id>@<domain>` is where players
write when not replying; such mail must authenticate by the player's secret
or address of record instead.

A letter relaying press carries a press reply address instead

    pbem+<game_id>.<player_id>.p<version>.<token>@<domain>

where version is the log version of the press it relays and token is made
from the seat and that version (`press_reply_token`). It authenticates the
reader like a reply address, and names the press he answers: only a letter
the server wrote to him can have it. The version says nothing of who wrote
the press, so grey (anonymous) press stays anonymous in the address too.
"""

from __future__ import annotations

import email.utils
import hashlib
import hmac
import re
from typing import Callable

__all__ = [
    "BOT_DOMAIN",
    "TOKEN_LENGTH",
    "bot_address",
    "is_bot_address",
    "bounce_address",
    "moderator_secret",
    "parse_bounce_address",
    "game_address",
    "parse_game_address",
    "parse_press_reply_address",
    "press_reply_address",
    "press_reply_shaped",
    "press_reply_token",
    "parse_reply_address",
    "page_token",
    "page_token_matches",
    "reply_address",
    "reply_token",
    "secret_in",
]

TOKEN_LENGTH = 16
_GAME_ID_RE = re.compile(r"^[a-z0-9-]+$")
_REPLY_RE = re.compile(r"^(?P<game>[a-z0-9-]+)\.(?P<player>0|[1-9][0-9]{0,17})\.(?P<token>[0-9a-f]+)$")
_PRESS_RE = re.compile(
    r"^(?P<game>[a-z0-9-]+)\.(?P<player>[1-9][0-9]{0,17})\.p(?P<version>[1-9][0-9]{0,17})\.(?P<token>[0-9a-f]+)$"
)


def _check_game_id(game_id: str) -> None:
    if not isinstance(game_id, str) or not _GAME_ID_RE.match(game_id):
        raise ValueError(f"game id must match [a-z0-9-]+, got {game_id!r}")


def _check_local(local: str) -> None:
    if not local or not re.match(r"^[A-Za-z0-9._-]+$", local) or "+" in local:
        raise ValueError(f"invalid local part {local!r}")


def reply_token(key: bytes | str, game_id: str, player_id: int, generation: int = 0) -> str:
    """The 16 lower-case hex digits that authenticate `player_id` in `game_id`.

    ``generation`` counts the times the seat was handed to someone else
    (REPLACE): each hand-over mints new tokens and the old ones stop working.
    """
    _check_game_id(game_id)
    if isinstance(player_id, bool) or not isinstance(player_id, int) or player_id < 0:
        raise ValueError(f"player id must be a non-negative int, got {player_id!r}")
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not key:
        raise ValueError("the game key must not be empty")
    seat = f"{game_id}:{player_id}" if not generation else f"{game_id}:{player_id}:{generation}"
    digest = hmac.new(key, seat.encode("utf-8"), hashlib.sha256).hexdigest()
    return digest[:TOKEN_LENGTH]


#: Who a page link is for: a seat ("p3"), an observer by his number ("o2"), the moderator, or the auditors
#: (one link the moderator hands to whoever may audit the game).
_READER_RE = re.compile(r"^(?:[po][1-9][0-9]{0,17}|moderator|auditor)$")


def page_token(key: bytes | str, game_id: str, reader: str, generation: int = 0) -> str:
    """The 32 hex digits of one reader's link to a game's page (pbem/web): an HMAC of the game, the reader and
    the link's generation under the game's key, labelled apart from every reply token.

    Longer than a reply token: a link is typed by nobody and may be tried by anyone who finds the server, so
    it carries 128 bits. ``generation`` counts what revokes the links of this reader (a seat handed over, a
    REVOKE by the moderator): each one mints new links and the old ones stop working.
    """
    _check_game_id(game_id)
    if not isinstance(reader, str) or not _READER_RE.match(reader):
        raise ValueError(f"page reader must be p<seat>, o<observer>, moderator or auditor, got {reader!r}")
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not key:
        raise ValueError("the game key must not be empty")
    digest = hmac.new(key, f"{game_id}:page:{reader}:{generation}".encode("utf-8"), hashlib.sha256)
    return digest.hexdigest()[:2 * TOKEN_LENGTH]


def page_token_matches(key: bytes | str, game_id: str, reader: str, generation: int, given: str) -> bool:
    """Whether ``given`` is the current link token of ``reader`` (compared in constant time)."""
    if not _READER_RE.match(reader or "") or not given.isascii():
        return False
    return hmac.compare_digest(page_token(key, game_id, reader, generation).encode("ascii"), given.encode("ascii"))


def reply_address(key: bytes, game_id: str, player_id: int, domain: str, local: str = "pbem", generation: int = 0) -> str:
    """`pbem+<game_id>.<player_id>.<token>@domain`."""
    _check_local(local)
    token = reply_token(key, game_id, player_id, generation)
    return f"{local}+{game_id}.{player_id}.{token}@{domain.lower()}"


#: Where a bot's seat is "written to": a name in the .invalid top-level domain (RFC 2606, RFC 6761), which no
#: mail can ever reach, so a letter to a bot is never sent anywhere (the letters leave it out).
BOT_DOMAIN = "bots.invalid"


def bot_address(game_id: str, player_id: int) -> str:
    """The address of record of a seat a bot plays: `bot.<seat>.<game>@bots.invalid`."""
    _check_game_id(game_id)
    return f"bot.{player_id}.{game_id}@{BOT_DOMAIN}"


def is_bot_address(address: str) -> bool:
    """Whether letters to ``address`` would go to a bot (never sent)."""
    return address.strip().lower().endswith("@" + BOT_DOMAIN)


def game_address(game_id: str, domain: str, local: str = "pbem") -> str:
    """`pbem+<game_id>@domain`: the game's unauthenticated address."""
    _check_local(local)
    _check_game_id(game_id)
    return f"{local}+{game_id}@{domain.lower()}"


def _detail(address: str, local: str) -> str | None:
    """The part after '<local>+' in the address's local part, lower-cased."""
    if not isinstance(address, str):
        return None
    _, addr = email.utils.parseaddr(address.strip())
    addr = (addr or address).strip().strip("<>").strip().lower()
    if addr.count("@") != 1:
        return None
    local_part, domain = addr.split("@")
    if not domain:
        return None
    prefix = f"{local.lower()}+"
    if not local_part.startswith(prefix):
        return None
    return local_part[len(prefix):]


def parse_reply_address(
    address: str,
    key_for_game: Callable[[str], bytes | None],
    local: str = "pbem",
    generation_for: Callable[[str, int], int] | None = None,
) -> tuple[str, int] | None:
    """(game_id, player_id) if `address` is a genuine reply address, else None.

    `key_for_game(game_id)` returns the game's key or None for an unknown game;
    exceptions it raises (e.g. a database outage) propagate.
    """
    detail = _detail(address, local)
    if detail is None:
        return None
    match = _REPLY_RE.match(detail)
    if match is None:
        return None
    game_id = match["game"]
    player_id = int(match["player"])
    given = match["token"]
    if len(given) != TOKEN_LENGTH:
        return None
    key = key_for_game(game_id)
    if not key:
        return None
    generation = generation_for(game_id, player_id) if generation_for else 0
    expected = reply_token(key, game_id, player_id, generation)
    if not hmac.compare_digest(expected.encode("ascii"), given.encode("ascii")):
        return None
    return game_id, player_id


#: The moderator's reply address is a reply address for player 0 (no player has that id).
MODERATOR = 0


def moderator_secret(key: bytes | str, game_id: str) -> str:
    """The moderator's SECRET word: made from the game's key, so it is never stored and cannot be guessed."""
    if isinstance(key, str):
        key = key.encode("utf-8")
    return hmac.new(key, f"{game_id}:moderator-secret".encode("utf-8"), hashlib.sha256).hexdigest()[:12]


#: A line starting with "secret" (blanks before it allowed, on its own line only): where a SECRET may be.
#: "^\\s*" here crossed lines, and read a run of blank lines again from each of its line starts: minutes for
#: a body of blank lines that anyone may send (docs/mail.md, the pattern audit). "[^\\S\\n]*" stays on the line.
_SECRET_LINE = re.compile(r"^[^\S\n]*secret(.*)$", re.I | re.M)


def secret_in(text: str) -> str | None:
    """The word of the first ``SECRET <word>`` line of ``text`` (also ``SECRET: <word>``), or None."""
    for found in _SECRET_LINE.finditer(text):
        rest = found.group(1).strip()
        start = 0
        while start < len(rest) and (rest[start] == ":" or rest[start].isspace()):
            start += 1
        word = rest[start:]
        separated = found.group(1)[:1] == ":" or found.group(1)[:1].isspace()
        if separated and word and not any(ch.isspace() for ch in word):
            return word
    return None


_BOUNCE_RE = re.compile(r"^bounces=(?P<letter>[1-9][0-9]{0,17})$")


def bounce_address(outbox_id: int, domain: str, local: str = "pbem") -> str:
    """`pbem+bounces=<outbox id>@domain`: the envelope sender of one outgoing letter."""
    _check_local(local)
    if isinstance(outbox_id, bool) or not isinstance(outbox_id, int) or outbox_id < 1:
        raise ValueError(f"outbox id must be a positive int, got {outbox_id!r}")
    return f"{local}+bounces={outbox_id}@{domain.lower()}"


def parse_bounce_address(address: str, local: str = "pbem") -> int | None:
    """The outbox id a bounce address names, else None."""
    detail = _detail(address, local)
    match = _BOUNCE_RE.match(detail or "")
    return int(match["letter"]) if match else None


def parse_game_address(address: str, local: str = "pbem") -> str | None:
    """game_id of `pbem+<game_id>@...`, else None (reply addresses included)."""
    detail = _detail(address, local)
    if detail is None or not _GAME_ID_RE.match(detail):
        return None
    return detail


def press_reply_token(key: bytes | str, game_id: str, player_id: int, version: int, generation: int = 0) -> str:
    """The token of a press reply address: the seat's, bound to the press at ``version`` of the log.

    Made from the seat's own token so that a seat handed over (REPLACE) invalidates its press replies too,
    and kept apart from it by a label, so no press token is ever a valid plain reply token.
    """
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"press version must be a positive int, got {version!r}")
    seat = reply_token(key, game_id, player_id, generation)
    if isinstance(key, str):
        key = key.encode("utf-8")
    digest = hmac.new(key, f"{game_id}:{player_id}:{seat}:press-reply:{version}".encode("utf-8"), hashlib.sha256)
    return digest.hexdigest()[:TOKEN_LENGTH]


def press_reply_address(
    key: bytes, game_id: str, player_id: int, version: int, domain: str, local: str = "pbem", generation: int = 0
) -> str:
    """`pbem+<game_id>.<player_id>.p<version>.<token>@domain`: where a reader answers the press at ``version``."""
    _check_local(local)
    token = press_reply_token(key, game_id, player_id, version, generation)
    return f"{local}+{game_id}.{player_id}.p{version}.{token}@{domain.lower()}"


def parse_press_reply_address(
    address: str,
    key_for_game: Callable[[str], bytes | None],
    local: str = "pbem",
    generation_for: Callable[[str, int], int] | None = None,
) -> tuple[str, int, int] | None:
    """(game_id, player_id, press version) if ``address`` is a genuine press reply address, else None."""
    match = _PRESS_RE.match(_detail(address, local) or "")
    if match is None or len(match["token"]) != TOKEN_LENGTH:
        return None
    game_id, player_id, version = match["game"], int(match["player"]), int(match["version"])
    key = key_for_game(game_id)
    if not key:
        return None
    generation = generation_for(game_id, player_id) if generation_for else 0
    expected = press_reply_token(key, game_id, player_id, version, generation)
    if not hmac.compare_digest(expected.encode("ascii"), match["token"].encode("ascii")):
        return None
    return game_id, player_id, version


def press_reply_shaped(address: str, local: str = "pbem") -> str | None:
    """The game id of an address shaped like a press reply address, genuine or not: a forged one is told apart."""
    match = _PRESS_RE.match(_detail(address, local) or "")
    return match["game"] if match else None

"""A player's own settings, given like orders: TIMEZONE, ABSENT, MAIL."""

from __future__ import annotations

import re
from datetime import date

from pbem.rules.core.commands import NoteAbsence, SetMailPreference, SetTimezone
from pbem.rules.core.state import GameState

from .grammar import Actor, LineError, Parser, player_of

#: How an IANA zone name looks (Europe/Berlin, America/Argentina/Buenos_Aires, UTC); the service checks it exists.
_ZONE = re.compile(r"^[A-Za-z][A-Za-z0-9_+\-]{1,30}(?:/[A-Za-z0-9_+\-]+){0,2}$")


def _timezone(state: GameState, actor: Actor, rest: str, notes: list[str]) -> SetTimezone:
    zone = rest.strip()
    if not _ZONE.match(zone):
        raise LineError("write TIMEZONE <zone>, a name such as Europe/Berlin or America/New_York (TIMEZONE UTC for none)")
    return SetTimezone(player_of(actor), "UTC" if zone.upper() in ("UTC", "GMT") else zone)


#: The longest absence one order announces.
MAX_ABSENCE_DAYS = 62


def _absent(state: GameState, actor: Actor, rest: str, notes: list[str]) -> NoteAbsence:
    words = rest.split(None, 2)
    if [w.upper() for w in words[:1]] == ["NONE"]:
        return NoteAbsence(player_of(actor), "", "")
    try:
        start, end = date.fromisoformat(words[0]), date.fromisoformat(words[1])
    except (IndexError, ValueError):
        raise LineError("write ABSENT <first day> <last day> [reason], days as 2026-12-24 (ABSENT NONE when back)") from None
    if end < start or (end - start).days > MAX_ABSENCE_DAYS:
        raise LineError(f"the last day comes on or after the first, at most {MAX_ABSENCE_DAYS} days later")
    return NoteAbsence(player_of(actor), start.isoformat(), end.isoformat(), " ".join(words[2:])[:200])


#: MAIL's words, each setting one half of the preference: (delivery, pictures). "no pictures" reads as one word.
MAIL_WORDS: dict[str, tuple[str | None, bool | None]] = {
    "EVERY": ("every", None), "ALL": ("every", None), "DIGEST": ("digest", None),
    "NOPICTURES": (None, False), "PICTURES": (None, True),
}
MAIL_USAGE = "write MAIL EVERY (every letter), MAIL DIGEST (a letter a turn) or MAIL NOPICTURES (MAIL PICTURES again)"


def _mail(state: GameState, actor: Actor, rest: str, notes: list[str]) -> SetMailPreference:
    words = rest.replace(",", " ").upper().replace("NO PICTURES", "NOPICTURES").split()
    if not words or any(w not in MAIL_WORDS for w in words):
        raise LineError(MAIL_USAGE)
    delivery = pictures = None
    for word in words:
        said = MAIL_WORDS[word]
        delivery = said[0] or delivery
        pictures = said[1] if said[1] is not None else pictures
    return SetMailPreference(player_of(actor), delivery, pictures)


def mail_words(delivery: str | None, pictures: bool | None) -> str:
    """A preference as MAIL writes it: ``MAIL DIGEST NOPICTURES``."""
    words = [delivery.upper()] if delivery else []
    if pictures is not None:
        words.append("PICTURES" if pictures else "NOPICTURES")
    return "MAIL " + " ".join(words)


VERBS: dict[str, tuple[Parser, str]] = {
    "ABSENT": (_absent, "ABSENT <first day> <last day> [reason]  (you will be away; ABSENT NONE when back)"),
    "MAIL": (_mail, "MAIL EVERY | DIGEST | NOPICTURES | PICTURES  (every letter, or one a turn; pictures or none)"),
    "TIMEZONE": (_timezone, "TIMEZONE <zone>  (deadlines in your letters in your own time, e.g. Europe/Berlin)"),
}
CANONICAL = {
    SetTimezone: lambda c: f"TIMEZONE {c.zone}",
    SetMailPreference: lambda c: mail_words(c.delivery, c.pictures),
    NoteAbsence: lambda c: f"ABSENT {c.start} {c.end} {c.reason}".strip() if c.start else "ABSENT NONE",
}

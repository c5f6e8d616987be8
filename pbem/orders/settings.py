"""A player's own settings, given like orders: TIMEZONE."""

from __future__ import annotations

import re

from pbem.rules.core.commands import SetTimezone
from pbem.rules.core.state import GameState

from .grammar import Actor, LineError, Parser, player_of

#: How an IANA zone name looks (Europe/Berlin, America/Argentina/Buenos_Aires, UTC); the service checks it exists.
_ZONE = re.compile(r"^(UTC|GMT|[A-Za-z_]+(?:/[A-Za-z0-9_+\-]+){1,2})$")


def _timezone(state: GameState, actor: Actor, rest: str, notes: list[str]) -> SetTimezone:
    zone = rest.strip()
    if not _ZONE.match(zone):
        raise LineError("write TIMEZONE <zone>, a name such as Europe/Berlin or America/New_York (TIMEZONE UTC for none)")
    return SetTimezone(player_of(actor), "UTC" if zone.upper() in ("UTC", "GMT") else zone)


VERBS: dict[str, tuple[Parser, str]] = {
    "TIMEZONE": (_timezone, "TIMEZONE <zone>  (deadlines in your letters in your own time, e.g. Europe/Berlin)"),
}
CANONICAL = {SetTimezone: lambda c: f"TIMEZONE {c.zone}"}

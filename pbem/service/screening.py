"""Orders screened before they are decided: what the service knows and the rules do not.

The rules decide an order on the board; a few orders also depend on what
only the service holds: the addresses of record (REPLACE with a player's
address), today's date (ABSENT for past days), the time-zone database and
the game's press option. Each screen turns such a line into a refused one
with its reason, before any order of the message is decided.
"""

from __future__ import annotations

from dataclasses import replace as dataclass_replace
from datetime import datetime
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from pbem.orders.language import Orders
from pbem.rules.core.commands import NoteAbsence, ReplacePlayer, SendPress, SetTimezone
from pbem.rules.core.state import GameState
from pbem.store.unit_of_work import UnitOfWork

__all__ = ["absences_ahead", "newcomers_allowed", "press_allowed"]


@lru_cache(maxsize=1)
def _zones() -> dict[str, str]:
    """Every time zone of the zone database by its lower-case name: names ignore case, as all names do."""
    return {name.lower(): name for name in available_timezones()} | {"utc": "UTC", "gmt": "UTC"}


def _known_zone(zone: str) -> str | None:
    """The zone's proper spelling, or None when the zone database has no such zone."""
    name = _zones().get(zone.lower())
    if name is None:
        return None
    try:
        ZoneInfo(name)
    except (ValueError, ZoneInfoNotFoundError):
        return None
    return name


def newcomers_allowed(uow: UnitOfWork, game_id: str, state: GameState, orders: Orders) -> Orders:
    """REPLACE with the address of someone who plays another seat is refused: one person, one reply address."""
    lines = []
    for line in orders.lines:
        if isinstance(line.command, ReplacePlayer):
            others = [r for r in uow.players.by_email(game_id, line.command.email) if r.id != line.command.player_id]
            if others:
                seat = state.player(others[0].id)
                line = dataclass_replace(line, command=None, error=f"{line.command.email} already plays {seat.nation or seat.name} in this game")
        lines.append(line)
    return dataclass_replace(orders, lines=tuple(lines))


def absences_ahead(orders: Orders, now: datetime) -> Orders:
    """ABSENT for days already past is refused: it would tell the table nothing true."""
    today = now.date().isoformat()
    lines = []
    for line in orders.lines:
        if isinstance(line.command, NoteAbsence) and line.command.end and line.command.end < today:
            line = dataclass_replace(line, command=None, error=f"those days are past (today is {today}); ABSENT is for days ahead")
        lines.append(line)
    return dataclass_replace(orders, lines=tuple(lines))


def press_allowed(orders: Orders, kind: str) -> Orders:
    """The game's press option on the PRESS lines (refused when off, unsigned when grey); unknown time zones refused."""
    lines = []
    for line in orders.lines:
        if isinstance(line.command, SetTimezone):
            zone = _known_zone(line.command.zone)
            if zone is None:
                line = dataclass_replace(line, command=None, error=f"unknown time zone {line.command.zone!r}; write one such as Europe/Berlin")
            else:
                command = dataclass_replace(line.command, zone=zone)
                line = dataclass_replace(line, command=command, canonical=f"TIMEZONE {zone}")
        elif isinstance(line.command, SendPress) and kind == "off":
            line = dataclass_replace(line, command=None, error="press is off in this game (game option press=off)")
        elif isinstance(line.command, SendPress) and kind == "grey":
            line = dataclass_replace(line, command=dataclass_replace(line.command, anonymous=True))
        lines.append(line)
    return dataclass_replace(orders, lines=tuple(lines))

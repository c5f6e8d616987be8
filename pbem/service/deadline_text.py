"""A deadline as a letter shows it: short for a subject, in the player's own time zone with UTC beside it."""

from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


@lru_cache(maxsize=256)
def short_deadline(deadline: str | None) -> str:
    """'2026-11-27 18:00 UTC' → 'Fri 27 Nov 18:00 UTC': short enough for a subject on a phone.

    Remembered: the letters of one step show the same deadline, and reading the date is not cheap.
    """
    if not deadline:
        return ""
    try:
        return datetime.strptime(deadline, "%Y-%m-%d %H:%M UTC").strftime("%a %d %b %H:%M UTC")
    except ValueError:
        return deadline


def deadline_in(deadline: str | None, zone: str) -> tuple[str | None, str]:
    """(the deadline as a letter shows it, as a subject shows it) in a player's zone, UTC beside it."""
    if not deadline or zone == "UTC":
        return deadline, short_deadline(deadline)
    try:
        utc = datetime.strptime(deadline, "%Y-%m-%d %H:%M UTC").replace(tzinfo=timezone.utc)
        local = utc.astimezone(ZoneInfo(zone))
    except (ValueError, ZoneInfoNotFoundError):
        return deadline, short_deadline(deadline)
    return f"{local:%Y-%m-%d %H:%M} {zone} ({deadline})", f"{local:%a %d %b %H:%M} {local.tzname()}"

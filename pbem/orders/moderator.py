"""Orders only the moderator may give: the clock and the table of a game.

Each one becomes an event carrying the reason the moderator wrote, which
every player's report tells, so nobody wonders why a deadline moved.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from pbem.rules.core.commands import Moderate, PassDeadline, ReplacePlayer
from pbem.rules.core.state import GameState

from .grammar import Actor, LineError, Parser, name

#: How deadlines are written in the log (the service's scheduler writes them so).
DEADLINE_FORMAT = "%Y-%m-%d %H:%M UTC"
#: The longest extension one order gives: a month.
MAX_EXTENSION_HOURS = 24 * 31


def _moderator_only(actor: Actor, verb: str) -> None:
    if not actor.moderator:
        raise LineError(f"only the moderator can {verb}")


def _deadline(state: GameState, actor: Actor, rest: str, notes: list[str]) -> PassDeadline:
    _moderator_only(actor, "end a step early")
    return PassDeadline(by="moderator")


def _reason(rest: str, verb: str) -> str:
    reason = " ".join(rest.split())
    if not reason:
        raise LineError(f"write the reason the players are told: {verb} <reason>")
    return reason[:300]


def _pause(state: GameState, actor: Actor, rest: str, notes: list[str]) -> Moderate:
    _moderator_only(actor, "pause the game")
    return Moderate("pause", _reason(rest, "PAUSE"))


def _resume(state: GameState, actor: Actor, rest: str, notes: list[str]) -> Moderate:
    _moderator_only(actor, "resume the game")
    return Moderate("resume", " ".join(rest.split())[:300] or "play goes on")


def _extend(state: GameState, actor: Actor, rest: str, notes: list[str]) -> Moderate:
    _moderator_only(actor, "extend a deadline")
    words = rest.split(None, 1)
    if not words or not words[0].isdigit() or not 0 < int(words[0]) <= MAX_EXTENSION_HOURS:
        raise LineError(f"write EXTEND <hours> <reason>, with 1 to {MAX_EXTENSION_HOURS} hours")
    if not state.deadline:
        raise LineError("no deadline is running to extend")
    hours = int(words[0])
    due = (datetime.strptime(state.deadline, DEADLINE_FORMAT) + timedelta(hours=hours)).strftime(DEADLINE_FORMAT)
    return Moderate("extend", _reason(words[1] if len(words) > 1 else "", "EXTEND <hours>"), due=due, hours=hours)


def _announce(state: GameState, actor: Actor, rest: str, notes: list[str]) -> Moderate:
    _moderator_only(actor, "announce")
    return Moderate("announce", _reason(rest, "ANNOUNCE"))


_REPLACE = re.compile(r"^(?P<seat>.+?)\s+WITH\s+(?P<name>[^\s@]+)\s+<?(?P<email>[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+)>?\s*(?P<reason>.*)$", re.I)


def _replace(state: GameState, actor: Actor, rest: str, notes: list[str]) -> ReplacePlayer:
    _moderator_only(actor, "replace a player")
    match = _REPLACE.match(rest.strip())
    if not match:
        raise LineError("write REPLACE <nation or player> WITH <name> <email> <reason>")
    seats = {p.nation: p.id for p in state.players if p.nation} | {p.name: p.id for p in state.players}
    player_id = seats[name(match["seat"], seats, "nation or player")]
    return ReplacePlayer(player_id, match["name"], _reason(match["reason"], "REPLACE ... WITH <name> <email>"), match["email"].lower())


VERBS: dict[str, tuple[Parser, str]] = {
    "DEADLINE": (_deadline, "DEADLINE  (moderator: apply defaults for missing orders now)"),
    "PAUSE": (_pause, "PAUSE <reason>  (moderator: no deadline passes until RESUME)"),
    "RESUME": (_resume, "RESUME [reason]  (moderator: a fresh deadline starts)"),
    "EXTEND": (_extend, "EXTEND <hours> <reason>  (moderator: move the deadline)"),
    "ANNOUNCE": (_announce, "ANNOUNCE <text>  (moderator: told to every player)"),
    "REPLACE": (_replace, "REPLACE <nation> WITH <name> <email> <reason>  (moderator: hand a seat to someone new)"),
}


def _canonical(c: Moderate) -> str:
    if c.action == "extend":
        return f"EXTEND {c.hours} {c.reason}"
    return f"{c.action.upper()} {c.reason}"


CANONICAL = {
    PassDeadline: lambda c: "DEADLINE",
    Moderate: _canonical,
    ReplacePlayer: lambda c: f"REPLACE player {c.player_id} WITH {c.name} {c.email} {c.reason}",
}

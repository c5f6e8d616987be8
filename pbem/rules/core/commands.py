"""Commands: what a player, the moderator or the clock asks the engine to do.

The order parser turns text into these; `decide` turns them into events.
Each phase declares its own commands (frozen dataclasses beside its rules,
carrying the ``player_id`` who gives them); only the service's commands,
common to every phase (the clock's, and its note of a bounced letter), are
declared here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias


@dataclass(frozen=True)
class SetDeadline:
    """The service's scheduler announces when the current step's orders are due."""

    due: str


@dataclass(frozen=True)
class PassDeadline:
    """The deadline passed (or the moderator forced it): defaults fill the gaps."""

    by: str = "clock"


@dataclass(frozen=True)
class NoteBounce:
    """A letter to a player bounced: kept in the log for the moderator; the game is unchanged."""

    player_id: int
    status: str = ""
    reason: str = ""


@dataclass(frozen=True)
class Moderate:
    """A moderator's action on the game's clock or table, with the reason the players are told.

    ``action``: ``pause`` (no deadline passes until ``resume``), ``resume``,
    ``extend`` (the deadline moves to ``due``, ``hours`` later) or ``announce``
    (``reason`` is the text told to every player).
    """

    action: str
    reason: str
    due: str = ""
    hours: int = 0


@dataclass(frozen=True)
class SendPress:
    """A message from one player to others (or ALL), kept in the log; only its readers see it.

    ``anonymous`` (grey press, a game option) hides the sender from the readers,
    never from the moderator.
    """

    player_id: int
    to: tuple[str, ...]  # nations, or ("ALL",)
    text: str
    anonymous: bool = False


@dataclass(frozen=True)
class SetTimezone:
    """A player's time zone (an IANA name such as Europe/Berlin, or UTC), for the deadlines his letters show."""

    player_id: int
    zone: str


@dataclass(frozen=True)
class ReplacePlayer:
    """The moderator hands a player's seat (his nation, all it holds) to someone new.

    ``email`` is for the service (the new address of record); the log keeps
    only the name and the reason.
    """

    player_id: int
    name: str
    reason: str
    email: str = ""


@dataclass(frozen=True)
class NoteAbsence:
    """A player announces he will be away (dates as YYYY-MM-DD, both days included); empty dates: back after all."""

    player_id: int
    start: str
    end: str
    reason: str = ""


#: Any command: a phase's own, or the clock's above.
Command: TypeAlias = object

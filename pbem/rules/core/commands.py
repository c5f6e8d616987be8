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
    """The deadline passed (or the moderator forced it, saying why): defaults fill the gaps."""

    by: str = "clock"
    reason: str = ""


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
    never from the moderator. A reply to a press letter (``reply``: the log
    version of the press answered) goes to one player, ``reader``, the writer of
    that press, and names no nation in ``to``; ``blind``: that press was
    anonymous, so the replier is never told whom he answered.
    """

    player_id: int
    to: tuple[str, ...]  # nations, or ("ALL",); empty for a reply
    text: str
    anonymous: bool = False
    reader: int | None = None
    reply: int = 0
    blind: bool = False


@dataclass(frozen=True)
class SetTimezone:
    """A player's time zone (an IANA name such as Europe/Berlin, or UTC), for the deadlines his letters show."""

    player_id: int
    zone: str


@dataclass(frozen=True)
class SetMailPreference:
    """How a player wants the game's mail (MAIL): ``delivery`` "every" letter as it is written, or a "digest"
    once a turn beside the letters that ask him something; ``pictures`` of the board or none. A word left out
    of the order (None) keeps what he had."""

    player_id: int
    delivery: str | None
    pictures: bool | None


@dataclass(frozen=True)
class ReplacePlayer:
    """The moderator hands a player's seat (his nation, all it holds) to someone new.

    ``email`` is for the service (the new address of record); the log keeps
    only the name and the reason. ``seat`` is how the moderator's order named
    the seat (its nation, or its player before he chose one), so his
    acknowledgement repeats it; it is not recorded, so older logs re-derive.
    ``bot``: the strategy of the bot that takes the seat (REPLACE ... WITH BOT),
    recorded; empty for a person, which also hands a bot's seat back to one.
    """

    player_id: int
    name: str
    reason: str
    email: str = ""
    seat: str = ""
    bot: str = ""


@dataclass(frozen=True)
class NoteAbsence:
    """A player announces he will be away (dates as YYYY-MM-DD, both days included); empty dates: back after all."""

    player_id: int
    start: str
    end: str
    reason: str = ""




@dataclass(frozen=True)
class RevokeLinks:
    """The moderator revokes a reader's links to the game's page (pbem/web): the old ones stop working, his
    next letters carry a new one, and LINK sends it to him.

    ``reader``: ``p<seat>``, ``o<observer>`` or ``moderator``; ``seat``: how the order named him (not
    recorded, like `Kick.seat`).
    """

    reader: str
    reason: str
    seat: str = ""


@dataclass(frozen=True)
class Kick:
    """The moderator takes a player out: his nation plays by its defaults (``lift``: it is his again).

    ``seat``: the nation (or player) as the acknowledgement names it; not recorded, like `ReplacePlayer.seat`.
    """

    player_id: int
    reason: str
    lift: bool = False
    seat: str = ""


@dataclass(frozen=True)
class AskToObserve:
    """Someone asked to watch the game (OBSERVE); ``observer`` numbers him, the service keeps his address."""

    observer: int
    name: str


@dataclass(frozen=True)
class AdmitObserver:
    """The moderator lets an observer who asked watch the game: he gets the public reports from now on."""

    observer: int
    reason: str = ""


@dataclass(frozen=True)
class DismissObserver:
    """An observer stops watching (he asked, or the moderator ended it)."""

    observer: int
    reason: str = ""


@dataclass(frozen=True)
class QueueOrders:
    """Orders a player sent before his turn in a step taken in turn; kept to be played when it comes."""

    player_id: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class TakeQueued:
    """A player's turn came: his kept orders are taken up, to be played one by one as orders of his."""

    player_id: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class RevealSeed:
    """Publish the game's secret seed: to everyone when the game has ended, or to the moderator who asks.

    The seed travels in the command because the engine never holds it; the
    engine only checks it against the commitment published at the start.
    """

    seed: str
    to: str = "everyone"  # or "moderator"


@dataclass(frozen=True)
class RollBack:
    """The moderator takes the game back to an earlier version; what followed stays in the log, superseded.

    The version may be named as a moment (`pbem.rules.branches.rollback_target`): ``before`` the batch that
    holds ``to``, or the start of ``turn`` (and ``phase``), ``to`` then 0. ``confirmed`` is False for a
    rollback the moderator has not yet seen previewed: the service shows what it would change instead.
    """

    to: int
    reason: str
    before: bool = False
    turn: int | None = None
    phase: str | None = None
    confirmed: bool = True


#: Any command: a phase's own, or the clock's and the table's above.
Command: TypeAlias = object

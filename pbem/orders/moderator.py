"""Orders only the moderator may give: the clock and the table of a game.

Each one becomes an event carrying the reason the moderator wrote, which
every player's report tells, so nobody wonders why a deadline moved.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from pbem.rules.core.commands import (
    AdmitObserver,
    DismissObserver,
    Kick,
    RevokeLinks,
    Moderate,
    PassDeadline,
    ReplacePlayer,
    RevealSeed,
    RollBack,
)
from pbem.rules.core.state import GameState
from pbem.rules.table import BOT_STRATEGIES, kicked, observers

from .grammar import Actor, LineError, Parser, name
from .moments import Moment, read_moment

#: How deadlines are written in the log (the service's scheduler writes them so).
DEADLINE_FORMAT = "%Y-%m-%d %H:%M UTC"
#: The longest extension one order gives: a month.
MAX_EXTENSION_HOURS = 24 * 31
#: How close a first word after WITH BOT must come to a strategy's name to be read as a mistyped one and refused
#: ("planer", "gredy", "randon": 0.83 to 0.92), not as the reason's first word ("player", "planet": 0.77).
MISTYPED_STRATEGY = 0.8


def _moderator_only(actor: Actor, verb: str) -> None:
    if not actor.moderator:
        raise LineError(f"only the moderator can {verb}")


def _deadline(state: GameState, actor: Actor, rest: str, notes: list[str]) -> PassDeadline:
    _moderator_only(actor, "end a step early")
    return PassDeadline(by="moderator", reason=" ".join(rest.split())[:300])


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


#: The WITH of "REPLACE <seat> WITH <name> <email> <reason>", a word of its own.
_WITH = re.compile(r"(?<!\S)WITH(?!\S)", re.I)
#: The newcomer's address, maybe in angle brackets. It starts where a run of address characters does (the
#: look-behind) and takes the part before the "@" whole, so no run is read again from each of its characters.
_NEWCOMER = re.compile(r"<?(?<![^\s<>@])(?P<email>[^\s<>@]++@[^\s<>@]+\.[^\s<>@]+)>?")


def _replace(state: GameState, actor: Actor, rest: str, notes: list[str]) -> ReplacePlayer:
    _moderator_only(actor, "replace a player")
    usage = "write REPLACE <nation or player> WITH <name> <email> <reason>, or WITH BOT [strategy] <reason>"
    rest = rest.strip()
    with_ = _WITH.search(rest)
    after = rest[with_.end():].split() if with_ else []
    if after and after[0].upper() == "BOT":
        return _to_bot(state, rest[: with_.start()].strip(), after[1:], usage)
    newcomer = _NEWCOMER.search(rest, with_.end()) if with_ else None
    seat = rest[: with_.start()].strip() if with_ else ""
    who = rest[with_.end() : newcomer.start()].strip() if with_ and newcomer else ""
    if not seat or not who or "@" in who or "<" in who or ">" in who:
        raise LineError(usage)
    seats = {p.nation: p.id for p in state.players if p.nation} | {p.name: p.id for p in state.players}
    player_id = seats[name(seat, seats, "nation or player")]
    name_ = " ".join(who.split())[:60]
    if any(p.name.lower() == name_.lower() and p.id != player_id for p in state.players):
        raise LineError(f"{name_} already plays in this game: give the newcomer another name")
    reason = rest[newcomer.end():]
    return ReplacePlayer(player_id, name_, _reason(reason, "REPLACE ... WITH <name> <email>"), newcomer["email"].lower(),
                         seat=_named(state, player_id))


def _to_bot(state: GameState, seat: str, words: list[str], usage: str) -> ReplacePlayer:
    """``REPLACE <nation> WITH BOT [planner|greedy|random] <reason>``: the seat played by the server's bot."""
    if not seat:
        raise LineError(usage)
    seats = {p.nation: p.id for p in state.players if p.nation} | {p.name: p.id for p in state.players}
    player_id = seats[name(seat, seats, "nation or player")]
    near = difflib.get_close_matches(words[0].lower(), BOT_STRATEGIES, n=1, cutoff=MISTYPED_STRATEGY) if words else []
    if near and words[0].lower() not in BOT_STRATEGIES:  # "planer": a strategy mistyped, not the reason's first word
        raise LineError(f"{words[0]}: not a bot strategy; did you mean {near[0]}? "
                        f"Write WITH BOT {'|'.join(BOT_STRATEGIES)} <reason>, or WITH BOT <reason> for the planner")
    strategy = words[0].lower() if words and words[0].lower() in BOT_STRATEGIES else "planner"
    reason = " ".join(words[1:] if words and words[0].lower() in BOT_STRATEGIES else words)
    named = _named(state, player_id)
    return ReplacePlayer(player_id, f"Bot for {named} ({strategy})", _reason(reason, "REPLACE ... WITH BOT"),
                         seat=named, bot=strategy)


def _named(state: GameState, player_id: int) -> str:
    """A seat as the acknowledgement names it: its nation, or its player's name before he chose one."""
    player = state.player(player_id)
    return player.nation or player.name


def _seat(state: GameState, text: str) -> int:
    seats = {p.nation: p.id for p in state.players if p.nation} | {p.name: p.id for p in state.players}
    return seats[name(text, seats, "nation or player")]


def _seat_and_reason(state: GameState, rest: str) -> tuple[int, str]:
    """``<nation or player> <reason>``: the longest leading words that name a seat, the rest the reason."""
    words = rest.split()
    for cut in range(min(len(words), 4), 0, -1):
        try:
            return _seat(state, " ".join(words[:cut])), " ".join(words[cut:])
        except (LineError, LookupError):
            continue
    return _seat(state, words[0] if words else ""), " ".join(words[1:])


def _kick(state: GameState, actor: Actor, rest: str, notes: list[str]) -> Kick:
    _moderator_only(actor, "kick a player")
    player_id, reason = _seat_and_reason(state, rest)
    return Kick(player_id, _reason(reason, "KICK <nation>"), seat=_named(state, player_id))


def _unkick(state: GameState, actor: Actor, rest: str, notes: list[str]) -> Kick:
    _moderator_only(actor, "give a kicked nation back")
    player_id, reason = _seat_and_reason(state, rest)
    if player_id not in kicked(state):
        raise LineError("that nation was not kicked: nobody plays it by defaults")
    return Kick(player_id, " ".join(reason.split())[:300] or "back at the table", lift=True, seat=_named(state, player_id))


def _revoke(state: GameState, actor: Actor, rest: str, notes: list[str]) -> RevokeLinks:
    """``REVOKE <nation or player> <reason>``, ``REVOKE OBSERVER <number> <reason>``, ``REVOKE MODERATOR <reason>``,
    ``REVOKE AUDITOR <reason>``: that reader's page links stop working (a link forwarded by mistake, a phone lost)."""
    _moderator_only(actor, "revoke a page link")
    words = rest.split()
    head = words[0].upper() if words else ""
    if head in ("MODERATOR", "AUDITOR", "AUDITORS"):
        reader, seat, reason = head.lower().rstrip("s"), head.rstrip("S"), " ".join(words[1:])
    elif head == "OBSERVER":
        number, reason = _observer(state, " ".join(words[1:]), "watching")
        reader, seat = f"o{number}", f"OBSERVER {number}"
    else:
        player_id, reason = _seat_and_reason(state, rest)
        reader, seat = f"p{player_id}", _named(state, player_id)
    notes.append("the next letters to that reader carry a new link; LINK sends it at once")
    return RevokeLinks(reader, _reason(reason, "REVOKE <nation>"), seat=seat)


def _observer(state: GameState, rest: str, status: str | None) -> tuple[int, str]:
    """``<number or name> [reason]`` among the observers who asked (``status`` asked), watch, or either (None)."""
    known = {**observers(state, "asked"), **observers(state)} if status is None else observers(state, status)
    if not known:
        raise LineError("nobody asked to watch this game" if status == "asked" else "nobody watches this game")
    words = rest.split(None, 1)
    head, reason = (words[0] if words else ""), (words[1] if len(words) > 1 else "")
    if head.lstrip("#").isdigit() and int(head.lstrip("#")) in known:
        return int(head.lstrip("#")), reason
    by_name = {f"{n} ({number})": number for number, n in known.items()}
    listed = ", ".join(f"{n} ({number})" for number, n in known.items())
    try:
        return by_name[name(head, by_name, "observer")], reason
    except (LineError, LookupError):
        raise LineError(f"say which observer, by number: {listed}") from None


def _approve(state: GameState, actor: Actor, rest: str, notes: list[str]) -> AdmitObserver:
    _moderator_only(actor, "let someone watch")
    number, reason = _observer(state, rest, "asked")
    return AdmitObserver(number, " ".join(reason.split())[:300])


def _deny(state: GameState, actor: Actor, rest: str, notes: list[str]) -> DismissObserver:
    _moderator_only(actor, "turn an observer away")
    number, reason = _observer(state, rest, None)
    return DismissObserver(number, " ".join(reason.split())[:300])


def _rollback(state: GameState, actor: Actor, rest: str, notes: list[str]) -> RollBack:
    """``ROLLBACK <moment> [CONFIRM] <reason>``: a moment as `moments.read_moment` reads it.

    Without CONFIRM the service answers with what the rollback would change and applies nothing: the
    moderator then replies CONFIRM (or sends the line again with CONFIRM after the moment).
    """
    _moderator_only(actor, "roll the game back")
    read = read_moment(rest.split())
    if read is None:
        raise LineError("write ROLLBACK <version> <reason>, ROLLBACK BEFORE <version> <reason> or "
                        "ROLLBACK TO turn <n> [phase] <reason>: HISTORY numbers the versions")
    moment, words = read
    confirmed = bool(words) and words[0].upper().rstrip(":,") == "CONFIRM"
    reason = _reason(" ".join(words[confirmed:]), "ROLLBACK <version>")
    return RollBack(moment.version or 0, reason, before=moment.before, turn=moment.turn, phase=moment.phase,
                    confirmed=confirmed)


@dataclass(frozen=True)
class Confirm:
    """CONFIRM: apply the rollback the moderator's latest preview showed (the service finds it)."""


def _confirm(state: GameState, actor: Actor, rest: str, notes: list[str]) -> Confirm:
    _moderator_only(actor, "confirm a rollback")
    if rest.strip() and rest.strip().upper() != "ROLLBACK":
        raise LineError("CONFIRM takes nothing after it: it applies the rollback your latest preview showed")
    return Confirm()


def rollback_text(c: RollBack) -> str:
    """The rollback as an order line: how the moderator named its moment, and the reason."""
    moment = Moment(c.to or None, c.before, c.turn, c.phase)
    return f"ROLLBACK {moment.text()} {c.reason}"


def _seed(state: GameState, actor: Actor, rest: str, notes: list[str]) -> RevealSeed:
    _moderator_only(actor, "ask for the secret seed")
    if rest.strip():
        raise LineError("SEED takes nothing after it")
    notes.append("every player is told that you asked for the seed")
    return RevealSeed("", "moderator")


VERBS: dict[str, tuple[Parser, str]] = {
    "DEADLINE": (_deadline, "DEADLINE [reason]  (moderator: apply defaults for missing orders now)"),
    "PAUSE": (_pause, "PAUSE <reason>  (moderator: no deadline passes until RESUME)"),
    "RESUME": (_resume, "RESUME [reason]  (moderator: the clock runs again; the deadline is the later of the running one "
                        "and a fresh one)"),
    "EXTEND": (_extend, "EXTEND <hours> <reason>  (moderator: move the deadline)"),
    "ANNOUNCE": (_announce, "ANNOUNCE <text>  (moderator: told to every player)"),
    "REPLACE": (_replace, "REPLACE <nation> WITH <name> <email> <reason>  (moderator: hand a seat to someone new; "
                          "WITH BOT [planner|greedy|random] <reason>: to the server's bot)"),
    "KICK": (_kick, "KICK <nation> <reason>  (moderator: the nation plays by its defaults from now on)"),
    "UNKICK": (_unkick, "UNKICK <nation> [reason]  (moderator: the player gives its orders again)"),
    "REVOKE": (_revoke, "REVOKE <nation>|OBSERVER <n>|MODERATOR|AUDITOR <reason>  (moderator: that reader's page links stop "
                        "working; his next letters carry a new one)"),
    "APPROVE": (_approve, "APPROVE <observer>  (moderator: let someone who asked watch the game)"),
    "DENY": (_deny, "DENY <observer> [reason]  (moderator: turn a request away, or end an observer's watch)"),
    "ROLLBACK": (_rollback, "ROLLBACK <version>|BEFORE <version>|TO turn <n> [phase] <reason>  (moderator: take the game "
                 "back, after a preview you CONFIRM; later events are kept, superseded)"),
    "CONFIRM": (_confirm, "CONFIRM  (moderator: apply the rollback your latest preview showed)"),
    "SEED": (_seed, "SEED  (moderator: be told the secret seed; every player learns that you asked)"),
}


def _canonical(c: Moderate) -> str:
    if c.action == "extend":
        return f"EXTEND {c.hours} {c.reason}"
    return f"{c.action.upper()} {c.reason}"


def _seat_named(c: Kick | ReplacePlayer) -> str:
    """The seat as the order named it; ``player N`` only for a command made from a recorded event (no name kept)."""
    return c.seat or f"player {c.player_id}"


def _canonical_kick(c: Kick) -> str:
    return f"{'UNKICK' if c.lift else 'KICK'} {_seat_named(c)} {c.reason}"


CANONICAL = {
    PassDeadline: lambda c: f"DEADLINE {c.reason}".rstrip(),
    Kick: _canonical_kick,
    RevokeLinks: lambda c: f"REVOKE {c.seat or c.reader} {c.reason}",
    AdmitObserver: lambda c: f"APPROVE {c.observer}",
    DismissObserver: lambda c: f"DENY {c.observer} {c.reason}".rstrip(),
    Moderate: _canonical,
    ReplacePlayer: lambda c: (f"REPLACE {_seat_named(c)} WITH BOT {c.bot} {c.reason}" if c.bot
                              else f"REPLACE {_seat_named(c)} WITH {c.name} {c.email} {c.reason}"),
    RollBack: rollback_text,
    Confirm: lambda c: "CONFIRM",
    RevealSeed: lambda c: "SEED",
}

"""Turning the text of an email into commands, line by line.

Made for people typing on a phone: verbs are short and may be abbreviated,
case never matters, names forgive small misspellings (the nearest names are
offered), and one bad line never spoils the others. Lines that are not orders
(blank lines, ``#`` comments, ``SECRET`` lines handled by authentication) are
skipped.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pbem.rules.commands import ChooseNation, Command, PassDeadline, PlaceStartToken
from .names import understand_name
from pbem.rules.rulebook import ruleset_of
from pbem.rules.state import GameState


@dataclass(frozen=True)
class Actor:
    """Who wrote the orders: a player (by id) or the moderator."""

    player_id: int | None = None
    moderator: bool = False


@dataclass(frozen=True)
class OrderLine:
    number: int
    text: str
    command: Command | None = None
    canonical: str = ""
    error: str | None = None
    suggestions: tuple[str, ...] = ()
    help: str | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Orders:
    lines: tuple[OrderLine, ...] = ()
    secret: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def commands(self) -> list[tuple[OrderLine, Command]]:
        return [(line, line.command) for line in self.lines if line.command is not None]

    @property
    def errors(self) -> list[OrderLine]:
        return [line for line in self.lines if line.error]


class _LineError(Exception):
    def __init__(self, message: str, suggestions: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.suggestions = tuple(suggestions)


Parser = Callable[[GameState, Actor, str, list[str]], Command]


def _name(text: str, candidates: Iterable[str], what: str, notes: list[str] | None = None) -> str:
    if not text:
        raise _LineError(f"say which {what}")
    names = list(candidates)
    try:
        name, note = understand_name(text, names, what)
    except LookupError as exc:
        near = difflib.get_close_matches(text.title(), names, n=3, cutoff=0.5)
        raise _LineError(str(exc).strip("'\""), near) from exc
    if note and notes is not None:
        notes.append(note)
    return name


def _player_of(actor: Actor) -> int:
    if actor.player_id is None:
        raise _LineError("the moderator gives this order for a player: FOR <player or nation> <order>")
    return actor.player_id


def _nation(state: GameState, actor: Actor, rest: str, notes: list[str]) -> Command:
    nation = _name(rest, ruleset_of(state).nations, "nation", notes)
    return ChooseNation(_player_of(actor), nation)


def _place(state: GameState, actor: Actor, rest: str, notes: list[str]) -> Command:
    area = _name(rest, ruleset_of(state).areas, "area", notes)
    return PlaceStartToken(_player_of(actor), area)


def _deadline(state: GameState, actor: Actor, rest: str, notes: list[str]) -> Command:
    if not actor.moderator:
        raise _LineError("only the moderator can end a step early")
    return PassDeadline(by="moderator")


#: Verb -> (parser, usage). Aliases map to the same parser.
VERBS: dict[str, tuple[Parser, str]] = {
    "NATION": (_nation, "NATION <nation>"),
    "PLAY": (_nation, "NATION <nation>"),
    "PLACE": (_place, "PLACE <area>"),
    "START": (_place, "PLACE <area>"),
    "DEADLINE": (_deadline, "DEADLINE  (moderator: apply defaults for missing orders now)"),
}
HELP_VERBS = ("HELP", "?")


def _verb(word: str) -> str:
    word = word.upper().rstrip(":")
    if word in VERBS:
        return word
    starts = sorted({v for v in VERBS if v.startswith(word)}) if len(word) >= 3 else []
    if len(starts) == 1:
        return starts[0]
    near = difflib.get_close_matches(word, list(VERBS), n=3, cutoff=0.6)
    raise _LineError(f"unknown order {word!r}", [VERBS[v][1] for v in near])


def canonical(command: Command, state: GameState) -> str:
    """The order as the server understood it, in the form a player would write it."""
    if isinstance(command, ChooseNation):
        return f"NATION {command.nation}"
    if isinstance(command, PlaceStartToken):
        return f"PLACE {command.area}"
    if isinstance(command, PassDeadline):
        return "DEADLINE"
    return type(command).__name__


def _help(state: GameState | None, rest: str) -> str:
    from pbem.rules.reference import describe
    from pbem.rules.rulebook import ruleset_for_options

    ruleset = ruleset_of(state) if state is not None and state.players else ruleset_for_options({})
    words = rest.split(None, 1)
    if not words:
        return "Orders: " + "; ".join(sorted({usage for _, usage in VERBS.values()})) + (
            ". HELP AREA <name>, HELP CARD <name>, HELP CALAMITY <name>, HELP STACKS, HELP AST."
        )
    topic = words[0].lower()
    return describe(ruleset, topic, words[1] if len(words) > 1 else None)


_FOR = re.compile(r"^for\s+(.+?)\s*[:]\s*(.+)$|^for\s+(\S+)\s+(.+)$", re.IGNORECASE)


def _on_behalf(state: GameState, text: str) -> tuple[Actor, str]:
    match = _FOR.match(text)
    if not match:
        raise _LineError("write FOR <player or nation>: <order>")
    who = (match.group(1) or match.group(3)).strip()
    order = (match.group(2) or match.group(4)).strip()
    by_name = {p.name: p.id for p in state.players}
    by_name.update({p.nation: p.id for p in state.players if p.nation})
    return Actor(player_id=by_name[_name(who, by_name, "player or nation")], moderator=True), order


def parse_orders(text: str, state: GameState, actor: Actor) -> Orders:
    """Parse every line; a bad line gets an error and the rest still count."""
    lines: list[OrderLine] = []
    secret: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("//"):
            continue
        words = line.split(None, 1)
        head, rest = words[0], (words[1].strip() if len(words) > 1 else "")
        if head.upper().rstrip(":") == "SECRET":
            secret = rest
            continue
        try:
            if head.upper() in HELP_VERBS:
                lines.append(OrderLine(number, line, help=_help(state, rest)))
                continue
            who = actor
            if head.upper() == "FOR" and actor.moderator:
                who, line_order = _on_behalf(state, line)
                words = line_order.split(None, 1)
                head, rest = words[0], (words[1].strip() if len(words) > 1 else "")
            parser, _usage = VERBS[_verb(head)]
            notes: list[str] = []
            command = parser(state, who, rest, notes)
            lines.append(OrderLine(number, line, command, canonical(command, state), notes=tuple(notes)))
        except LookupError as exc:
            lines.append(OrderLine(number, line, error=str(exc).strip("'\"")))
        except _LineError as exc:
            lines.append(OrderLine(number, line, error=str(exc), suggestions=exc.suggestions))
    return Orders(tuple(lines), secret)

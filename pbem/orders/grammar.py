"""The pieces every phase's orders are made of: who writes, names, errors.

Each phase has a module here (`setup`, `tax`, ...) exporting ``VERBS``
(verb -> parser and usage) and ``CANONICAL`` (command type -> the order as
a player would write it); `language` puts them together.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of

from .names import understand_name


@dataclass(frozen=True)
class Actor:
    """Who wrote the orders: a player (by id) or the moderator."""

    player_id: int | None = None
    moderator: bool = False


class LineError(Exception):
    """One line cannot be read; the message says why, with the nearest valid words."""

    def __init__(self, message: str, suggestions: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.suggestions = tuple(suggestions)


#: A verb's parser: (state, who wrote it, the rest of the line, notes to add) -> command.
Parser = Callable[[GameState, Actor, str, list[str]], Any]


def name(text: str, candidates: Iterable[str], what: str, notes: list[str] | None = None, *,
         explain: bool = True) -> str:
    """The one name meant by ``text`` (see `names`); a note is added when a misspelling was read.

    Without ``explain`` a refusal names no near names: for a caller that tries
    which words form a name and drops the refusals (finding the nearest of a
    hundred areas was most of reading a MOVE line)."""
    if not text:
        raise LineError(f"say which {what}")
    names = list(candidates)
    try:
        found, note = understand_name(text, names, what, explain=explain)
    except LookupError as exc:
        near = difflib.get_close_matches(text.title(), names, n=3, cutoff=0.5) if explain else []
        raise LineError(str(exc).strip("'\""), near) from exc
    if note and notes is not None:
        notes.append(note)
    return found


def area(state: GameState, text: str, notes: list[str] | None = None, *, explain: bool = True) -> str:
    return name(text, ruleset_of(state).areas, "area", notes, explain=explain)


def areas(state: GameState, text: str, notes: list[str] | None = None) -> tuple[str, ...]:
    """Several areas on one line, separated by commas, or by spaces when each name is one word."""
    parts = [p.strip() for p in re.split(r"[,;]", text) if p.strip()]
    if len(parts) == 1 and " " in parts[0]:
        try:
            return (area(state, parts[0], notes),)
        except LineError:
            parts = parts[0].split()
    return tuple(area(state, p, notes) for p in parts)


def count(text: str, what: str = "number") -> int:
    if not text.isdigit():
        raise LineError(f"'{text}' is not a {what}")
    return int(text)


def player_of(actor: Actor) -> int:
    if actor.player_id is None:
        raise LineError("the moderator gives this order for a player: FOR <player or nation>: <order>")
    return actor.player_id

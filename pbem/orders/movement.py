"""Orders of phase 3 (§22, §23, R-2.2): ships in 3a, movement in 3b.

    SHIP Tanis            build a ship in Tanis, paid from treasury first, the rest in tokens there
    SHIP Tanis LEVY 2     build it with two tokens levied from Tanis
    KEEP Tanis            pay a ship's upkeep from treasury (KEEP Tanis LEVY: with a token there)
    SCRAP Tanis           give a ship up (it returns to stock)
    MOVE 3 Thebes Buhen   three tokens over land (MOVE ALL Thebes Buhen: every token that may move)
    SAIL 4 Tanis Gaza     a ship carries four tokens of Tanis to Gaza (the route is found for you)
    HALT                  my orders for this step are complete

Area names of several words may be written as they are ("MOVE 2 Eastern
Desert Sinai"); a ``>`` or ``,`` between the two areas makes it plain.
"""

from __future__ import annotations

import re

from pbem.rules.core.state import GameState
from pbem.rules.phases.movement.turns import (
    BuildShip,
    EndMoves,
    KeepShip,
    MoveTokens,
    SailShip,
    ScrapShip,
)

from .grammar import Actor, LineError, Parser, area, count, player_of


#: What stands between two areas: ">", ",", "->" or " to " (its blanks taken whole from where their run starts:
#: "\\s+to" read a long run of blanks again from each of them).
_BETWEEN_AREAS = re.compile(r">|,|->|(?<!\s)\s++to\s++", re.IGNORECASE)

#: Words two area names take at most, spelled out with a word or two to spare ("Upper Egypt" is the longest).
_MOST_WORDS = 8


def _two_areas(state: GameState, text: str, notes: list[str], usage: str) -> tuple[str, str]:
    """<from> <to>: split at ``>``, ``,`` or `` to ``, else at the one place where both halves name an area."""
    parts = [p.strip() for p in _BETWEEN_AREAS.split(text) if p.strip()]
    if len(parts) == 2:
        return area(state, parts[0], notes), area(state, parts[1], notes)
    if len(parts) > 2:
        raise LineError(f"name two areas, where from and where to: {usage}")
    words = text.split()
    if len(words) < 2:
        raise LineError(f"name two areas, where from and where to: {usage}")
    if len(words) > _MOST_WORDS:  # each cut reads both halves: a line of prose would cost its length squared
        raise LineError(f"name two areas, where from and where to: {usage}")
    readings: list[tuple[str, str, list[str]]] = []
    for cut in range(1, len(words)):
        found: list[str] = []
        try:
            pair = (area(state, " ".join(words[:cut]), found, explain=False),
                    area(state, " ".join(words[cut:]), found, explain=False))
        except LineError:
            continue
        readings.append((*pair, found))
    exact = [r for r in readings if not r[2]]
    if len(exact) == 1:
        readings = exact
    if len(readings) == 1:
        notes.extend(readings[0][2])
        return readings[0][0], readings[0][1]
    if not readings:
        raise LineError(f"'{text}' is not two area names: {usage}")
    raise LineError(f"'{text}' can be read more than one way; put > between the two areas: {usage}")


def _how_many(rest: str, usage: str) -> tuple[int | None, str]:
    words = rest.split(None, 1)
    if not words:
        raise LineError(usage)
    if words[0].upper() == "ALL":
        return None, words[1] if len(words) > 1 else ""
    if words[0].isdigit():
        return count(words[0], "number of tokens"), words[1] if len(words) > 1 else ""
    return None, rest


MOVE_USAGE = "MOVE <n|ALL> <from> <to>"
SAIL_USAGE = "SAIL <n> <from> <to>"


def _move(state: GameState, actor: Actor, rest: str, notes: list[str]) -> MoveTokens:
    n, rest = _how_many(rest, MOVE_USAGE)
    if n == 0:
        raise LineError("move at least 1 token")
    origin, destination = _two_areas(state, rest, notes, MOVE_USAGE)
    return MoveTokens(player_of(actor), n, origin, destination)


def _sail(state: GameState, actor: Actor, rest: str, notes: list[str]) -> SailShip:
    n, rest = _how_many(rest, SAIL_USAGE)
    origin, destination = _two_areas(state, rest, notes, SAIL_USAGE)
    return SailShip(player_of(actor), n, origin, destination)


#: "<area> LEVY [n]"; the blanks before LEVY are taken whole from where their run starts (see cities._TREASURY).
_LEVY = re.compile(r"^(.*?)(?<!\s)\s++levy(?:\s++(\S++))?$", re.IGNORECASE)


def _ship(state: GameState, actor: Actor, rest: str, notes: list[str]) -> BuildShip:
    match = _LEVY.match(rest.strip())
    if match:
        levy = count(match.group(2), "number of tokens to levy") if match.group(2) else 2
        if levy > 2:
            raise LineError("a ship costs 2: levy 0, 1 or 2 tokens")
        return BuildShip(player_of(actor), area(state, match.group(1), notes), levy)
    return BuildShip(player_of(actor), area(state, rest, notes))


def _keep(state: GameState, actor: Actor, rest: str, notes: list[str]) -> KeepShip:
    match = _LEVY.match(rest.strip())
    if match:
        if match.group(2) not in (None, "1"):
            raise LineError("upkeep is 1: write KEEP <area> LEVY")
        return KeepShip(player_of(actor), area(state, match.group(1), notes), True)
    return KeepShip(player_of(actor), area(state, rest, notes))


def _scrap(state: GameState, actor: Actor, rest: str, notes: list[str]) -> ScrapShip:
    return ScrapShip(player_of(actor), area(state, rest, notes))


def _halt(state: GameState, actor: Actor, rest: str, notes: list[str]) -> EndMoves:
    if rest.strip():
        raise LineError("HALT takes nothing more; put each order on its own line")
    return EndMoves(player_of(actor))


VERBS: dict[str, tuple[Parser, str]] = {
    "SHIP": (_ship, "SHIP <area> [LEVY [n]]"),
    "KEEP": (_keep, "KEEP <area> [LEVY]"),
    "SCRAP": (_scrap, "SCRAP <area>"),
    "MOVE": (_move, MOVE_USAGE),
    "SAIL": (_sail, SAIL_USAGE),
    "HALT": (_halt, "HALT"),
}
CANONICAL = {
    BuildShip: lambda c: f"SHIP {c.area}" + ("" if c.levy is None else f" LEVY {c.levy}"),
    KeepShip: lambda c: f"KEEP {c.area}" + (" LEVY" if c.levy else ""),
    ScrapShip: lambda c: f"SCRAP {c.area}",
    MoveTokens: lambda c: f"MOVE {'ALL' if c.count is None else c.count} {c.origin} > {c.destination}",
    SailShip: lambda c: f"SAIL {'ALL' if c.count is None else c.count} {c.origin} > {c.destination}",
    EndMoves: lambda c: "HALT",
}

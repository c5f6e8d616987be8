"""Phase 3: its orders, and whose turn it is (R-2.2, R-2.6; §21.1, §22.11, §23.21).

One nation at a time in census order, fixed when the phase begins: in 3a
every nation with ships or a place to build, then in 3b every nation with
tokens or ships on the board. What each has done is kept in ``state.filed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.board.ranking import census_order
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import acting_nation
from pbem.rules.core.rejection import NotYourTurn, Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.movement.routes import build_sites

PHASE = "movement"
SHIPS, MOVES = "ships", "moves"
SHIP_STEP, MOVE_STEP = "ship-construction", "movement"
MAX_CHOICES = 60
CITE_ORDER = ("R-2.2", "R-2.6", "§21.1", "§22.11", "§23.21")
CITE_BUILD = ("R-2.2", "§22.1", "§22.3", "§22.4")
CITE_UPKEEP = ("R-2.2", "§22.2")
CITE_LAND = ("Q-S1", "§23")
CITE_ROAD = ("Q-S1", "§23.31")
CITE_SHIP = ("Q-S1", "§23.5", "§23.56")
CITE_ATTACK = ("seed 002: [Attacking a city]", "R-3.2")


@dataclass(frozen=True)
class BuildShip:
    """SHIP <area> [LEVY [n]]: build one ship; ``levy`` tokens come from the area (None: treasury first)."""

    player_id: int
    area: str
    levy: int | None = None


@dataclass(frozen=True)
class KeepShip:
    """KEEP <area> [LEVY]: pay a ship's upkeep now, from treasury or (``levy``) with a token there."""

    player_id: int
    area: str
    levy: bool = False


@dataclass(frozen=True)
class ScrapShip:
    """SCRAP <area>: return one of one's ships there to stock (no upkeep is paid for it)."""

    player_id: int
    area: str


@dataclass(frozen=True)
class MoveTokens:
    """MOVE [n|ALL] <from> <to>: tokens go over land (``count`` None: every token that may still move)."""

    player_id: int
    count: int | None
    origin: str
    destination: str


@dataclass(frozen=True)
class SailShip:
    """SAIL [n] <from> <to>: one ship carries n tokens of its area (None: as many as fit) to a coast."""

    player_id: int
    count: int | None
    origin: str
    destination: str


@dataclass(frozen=True)
class EndMoves:
    """HALT: my orders for this step (ships in 3a, movement in 3b) are complete."""

    player_id: int


def census_turns(state: GameState) -> list[str]:
    """The census order fixed when the phase began (computed afresh for a position set up by hand)."""
    if "order" in state.filed:
        return list(state.filed["order"])
    return census_order(state)


def done_in_step(state: GameState, step: str) -> tuple[str, ...]:
    return state.filed.get(f"done:{step}", ())


def unkept_ships(state: GameState, nation: str) -> list[str]:
    return list(state.filed.get(f"unkept:{nation}", ()))


def filed_count(state: GameState, key: str) -> int:
    return state.filed.get(key, (0,))[0]


def movable(state: GameState, nation: str, area: str) -> int:
    """Tokens of ``nation`` in ``area`` that have not moved this phase."""
    return state.area(area).tokens.get(nation, 0) - filed_count(state, f"arrived:{nation}:{area}")


def free_ships(state: GameState, nation: str, area: str) -> int:
    """Ships of ``nation`` in ``area`` that have not sailed this phase."""
    return state.area(area).ships.get(nation, 0) - filed_count(state, f"sailed:{nation}:{area}")


def add_filed(state: GameState, key: str, count: int) -> GameState:
    return replace(state, filed=state.filed.set(key, (filed_count(state, key) + count,)))


def eligible_in_step(state: GameState, nation: str, step: str) -> bool:
    if step == SHIPS:
        return bool(unkept_ships(state, nation)) or state.ships_on_board(nation) > 0 or bool(build_sites(state, nation))
    return state.tokens_on_board(nation) > 0 or state.ships_on_board(nation) > 0


def asked_in_step(state: GameState, step: str) -> list[str]:
    """Who is asked in ``step``, in census order: fixed when the step begins, so a nation that scraps
    its last ship is still asked to HALT (computed afresh for a position set up by hand)."""
    if f"queue:{step}" in state.filed:
        return list(state.filed[f"queue:{step}"])
    return [n for n in census_turns(state) if n in state.nations and eligible_in_step(state, n, step)]


def current_nation(state: GameState) -> str | None:
    """The nation whose turn it is in the current step, or None when the step is over."""
    if state.phase != PHASE or state.step not in (SHIPS, MOVES):
        return None
    done = done_in_step(state, state.step)
    for nation in asked_in_step(state, state.step):
        if nation not in done:
            return nation
    return None


def acting_in_step(state: GameState, player_id: int, step: str) -> str:
    """The nation giving this order, when it is its turn in ``step``; otherwise a clear refusal."""
    nation = acting_nation(state, player_id)
    what = "ships are built and kept" if step == SHIPS else "tokens and ships move"
    if state.phase != PHASE or state.step not in (SHIPS, MOVES):
        raise Rejection(f"{what} only in phase 3 (movement)", "R-2.2" if step == SHIPS else "§23")
    if state.step != step:
        if step == SHIPS:
            raise Rejection("ship construction (step 3a) is over: every nation has built; tokens move now", "R-2.2")
        raise NotYourTurn("tokens move in step 3b, after every nation has finished with its ships (HALT)", "R-2.2")
    current = current_nation(state)
    if current != nation:
        later = nation in asked_in_step(state, step) and nation not in done_in_step(state, step)
        message = f"it is {current}'s turn; you act in census order ({', '.join(census_turns(state))})"
        raise (NotYourTurn if later else Rejection)(message, "§23.21")
    return nation


def spread_choices(choices: list[str]) -> tuple[str, ...]:
    """At most MAX_CHOICES, the do-nothing answer first, the rest picked evenly."""
    first, rest = choices[0], choices[1:]
    room = MAX_CHOICES - 1
    if len(rest) > room:
        rest = [rest[i * len(rest) // room] for i in range(room)]
    return (first, *rest)


def apply_order_fixed(state: GameState, data: dict[str, Any]) -> GameState:
    filed = state.filed.set("order", tuple(data["order"])).set(f"queue:{SHIPS}", tuple(data["asked"]))
    for nation, areas in data["upkeep"].items():
        filed = filed.set(f"unkept:{nation}", tuple(areas))
    return replace(state, step=SHIPS, filed=filed)


def apply_done(state: GameState, data: dict[str, Any]) -> GameState:
    key = f"done:{state.step}"
    return replace(state, filed=state.filed.set(key, state.filed.get(key, ()) + (data["nation"],)))


def apply_ships_ended(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, step=MOVES, filed=state.filed.set(f"queue:{MOVES}", tuple(data["asked"])))

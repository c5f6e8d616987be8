"""Phase 4: its orders, and the state of its token conflicts and city attacks as they are resolved.

Progress lives in ``state.filed`` (see the phase's docstring); the folds of
every event of the phase are here, so what a later step may rely on is in
one place.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pbem.rules.board.battle import (
    PIRATES,
    area_limit,
    city_defenders_due,
    fight_removals,
    holds,
    in_conflict,
    party_of_city,
)
from pbem.rules.board.ranking import BARBARIANS, ast_rank
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import ruleset_of

PHASE = "conflict"
STAGES = ("fight", "sweep", "spoils")
FIGHT_CITES = ("seed 002: 4A", "R-3.1", "D-16", "D-17", "§24.2")
ATTACK_CITES = ("seed 002: 4B", "R-3.2", "D-19")
STEP1 = "seed 001: [city-attack step 1]"
STEP2 = "seed 001: [city-attack step 2]"
SPOILS_CITES = ("seed 001: [city-attack step 3]", "seed 001: [city-attack step 4]", "D-4", "§24.51", "§24.52", "§24.53")
PIRATE_CITES = ("seed 001: [Attacking a pirate city]", "D-5")


@dataclass(frozen=True)
class ChooseCityOrder:
    """A defender's order of his attacked cities (seed 002: 4b); cities not named follow by area name."""

    player_id: int
    areas: tuple[str, ...]


@dataclass(frozen=True)
class ChooseDeferral:
    """A short defender has one of his own attacks resolved first (area), or declines (None) (D-3)."""

    player_id: int
    area: str | None


@dataclass(frozen=True)
class ChooseSpoils:
    """The attacker's spoils of a taken city: draw a card or not, and how much to pillage (D-4).

    Either part may be None when the order gives only the other.
    """

    player_id: int
    draw: bool | None = None
    pillage: int | None = None


def rule_numbers(state: GameState) -> Any:
    return ruleset_of(state).numbers


def is_land(state: GameState, area: str) -> bool:
    return area in ruleset_of(state).areas


def fight_event(state: GameState, area: str, in_attack: bool) -> Event:
    a = state.area(area)
    before = {p: n for p, n in a.tokens.items() if n > 0}
    late = {p for p in before if holds(state, p, "Metalworking")}
    steps = fight_removals(state, area, before, a.city is not None)
    removed = {p: sum(1 for s in steps if p in s) for p in before}
    after = {p: before[p] - removed[p] for p in before}
    cites = FIGHT_CITES
    if late:
        cites += ("§24.24",)
    if BARBARIANS in before:
        cites += ("seed 002: [The barbarians]", "Q-S17")
    if in_attack:
        cites += (STEP2,)
    data = {
        "area": area, "limit": area_limit(state, area), "city": a.city, "before": before, "after": after,
        "removed": removed, "steps": steps, "in_attack": in_attack,
    }
    return Event("TokenConflictResolved", data, cites)


def find_attacks(state: GameState) -> list[tuple[str, str, str]]:
    """Every city area where one party other than the city's own has tokens: (area, attacker, defender), in 4b order."""
    found = []
    for name, a in state.areas.items():
        if a.city is None or not is_land(state, name):
            continue
        parties = [p for p, n in a.tokens.items() if n > 0 and p != party_of_city(a.city)]
        if len(parties) == 1 and sum(1 for n in a.tokens.values() if n > 0) == 1:
            found.append((name, parties[0], a.city))

    def key(attack: tuple[str, str, str]) -> tuple[int, int, str]:
        area, attacker, defender = attack
        if defender == PIRATES:
            return (0, ast_rank(state, attacker), area)
        return (1, ast_rank(state, defender) if defender in state.nations else 98, area)

    return sorted(found, key=key)


def attack_queue(state: GameState) -> tuple[tuple[str, str, str], ...]:
    return state.filed.get("queue", ())


def _stack(state: GameState) -> tuple[tuple[str, str, str, str], ...]:
    return state.filed.get("stack", ())


def _listed(state: GameState, key: str) -> tuple:
    return state.filed.get(key, ())


def current_attack(state: GameState) -> tuple[str, str, str, str] | None:
    """The attack being resolved now: the innermost begun one, else the next in the queue (stage "start")."""
    if _stack(state):
        return _stack(state)[-1]
    if attack_queue(state):
        return (*attack_queue(state)[0], "start")
    return None


def _with(state: GameState, key: str, value: tuple) -> GameState:
    return replace(state, filed=state.filed.set(key, value))


def needs_order(state: GameState) -> str | None:
    """The defender who must now order his attacked cities (he has 2 or more, seed 002: 4b), if any."""
    if _stack(state) or not attack_queue(state):
        return None
    defender = attack_queue(state)[0][2]
    if defender not in state.nations or defender in _listed(state, "ordered"):
        return None
    return defender if sum(1 for q in attack_queue(state) if q[2] == defender) >= 2 else None


def _short(state: GameState, attacker: str, defender: str) -> bool:
    return defender in state.nations and state.nations[defender].stock < city_defenders_due(state, attacker, defender)


def _attacks_on(state: GameState, attacker: str, defender: str) -> bool:
    return any(q[1] == attacker and q[2] == defender for q in (*attack_queue(state), *_stack(state)))


def _deferrable(state: GameState, defender: str) -> list[tuple[str, str, str]]:
    """The defender's own attacks not yet begun that may be resolved before his city is replaced (D-3)."""
    mine = [q for q in attack_queue(state) if q[1] == defender]
    if options_of(state).city_defender_deferral == "1991":
        # A cycle (two players attacking each other's cities) is broken: the city that came up first is
        # replaced without waiting for the attack on its attacker's city (RULINGS D-3, 1991).
        mine = [q for q in mine if not _attacks_on(state, q[2], defender)]
    return mine


def deferral_question(state: GameState) -> tuple[str, str, list[tuple[str, str, str]]] | None:
    """(city area, defender, candidates) when the current replacement waits on a deferral, else None."""
    current = current_attack(state)
    if current is None or current[3] != "replace":
        return None
    area, attacker, defender, _ = current
    if area in _listed(state, "declined") or not _short(state, attacker, defender):
        return None
    if options_of(state).city_defender_deferral == "seed" and defender in _listed(state, "deferred"):
        return None
    candidates = _deferrable(state, defender)
    return (area, defender, candidates) if candidates else None


def spoils_parts(state: GameState, attacker: str, defender: str) -> tuple[bool, bool, int]:
    """(a card can be taken, the attacker is asked whether to draw, the most he may pillage)."""
    if attacker not in state.nations:
        return False, False, 0  # the Barbarians take no spoils (§24.53)
    card = defender in state.nations and bool(state.nations[defender].hand)
    ask_draw = card and options_of(state).city_capture_spoils == "seed"
    return card, ask_draw, min(rule_numbers(state)["pillage_max"], state.nations[attacker].stock)


def _has_work(state: GameState, entry: tuple[str, str, str, str], stage: str) -> bool:
    area, attacker, defender, _ = entry
    if stage == "fight":
        return in_conflict(state, area)
    if stage == "sweep":
        return (defender == PIRATES and options_of(state).pirate_city_attack == "1991"
                and state.area(area).tokens.get(BARBARIANS, 0) > 0)
    card, _, most = spoils_parts(state, attacker, defender)
    return card or most > 0


def _advance(state: GameState, stage: str) -> GameState:
    """Move the current attack to the first stage from ``stage`` on that has work; finish it if none has."""
    stack = _stack(state)
    entry = stack[-1]
    for next_stage in STAGES[STAGES.index(stage):]:
        if _has_work(state, entry, next_stage):
            return _with(state, "stack", stack[:-1] + ((*entry[:3], next_stage),))
    state = _with(state, "stack", stack[:-1])
    return replace(state, filed=state.filed.without("spoils"))


def _add_tokens(state: GameState, area: str, party: str, count: int, from_stock: bool = True) -> GameState:
    """Move tokens between the party's stock and the area (negative: back to stock). Barbarians have no stock."""
    if not count:
        return state
    state = state.with_area(area, state.area(area).add_tokens(party, count))
    if from_stock and party in state.nations:
        n = state.nations[party]
        state = state.with_nation(replace(n, stock=n.stock - count))
    return state


def apply_fight(state: GameState, data: dict[str, Any]) -> GameState:
    for party, count in data["removed"].items():
        state = _add_tokens(state, data["area"], party, -count)
    if data.get("in_attack") and _stack(state) and _stack(state)[-1][0] == data["area"]:
        state = _advance(state, "sweep")
    return state


def apply_found(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, step="attacks", filed=state.filed.set("queue", tuple(tuple(a) for a in data["attacks"])))


def apply_order(state: GameState, data: dict[str, Any]) -> GameState:
    defender = data["defender"]
    queue = attack_queue(state)
    by_area = {q[0]: q for q in queue if q[2] == defender}
    mine = iter(by_area[a] for a in data["areas"] if a in by_area)
    queue = tuple(next(mine) if q[2] == defender else q for q in queue)
    state = _with(state, "queue", queue)
    return _with(state, "ordered", (*_listed(state, "ordered"), defender))


def _take(state: GameState, area: str) -> tuple[GameState, tuple[str, str, str]]:
    """Take the attack on ``area`` off the queue or the stack."""
    for q in attack_queue(state):
        if q[0] == area:
            return _with(state, "queue", tuple(x for x in attack_queue(state) if x[0] != area)), q
    stack = _stack(state)
    entry = next(s for s in stack if s[0] == area)
    return _with(state, "stack", tuple(s for s in stack if s[0] != area)), entry[:3]


def apply_failed(state: GameState, data: dict[str, Any]) -> GameState:
    state, _ = _take(state, data["area"])
    return _add_tokens(state, data["area"], data["attacker"], -data["tokens"])


def apply_succeeded(state: GameState, data: dict[str, Any]) -> GameState:
    state, attack = _take(state, data["area"])
    return _with(state, "stack", (*_stack(state), (*attack, "replace")))


def apply_deferral(state: GameState, data: dict[str, Any]) -> GameState:
    if data["area"] is None:
        return _with(state, "declined", (*_listed(state, "declined"), data["city"]))
    state, attack = _take(state, data["area"])
    state = _with(state, "stack", (*_stack(state), (*attack, "start")))
    return _with(state, "deferred", (*_listed(state, "deferred"), data["defender"]))


def apply_resolved_first(state: GameState, data: dict[str, Any]) -> GameState:
    for area in reversed(data["areas"]):
        state, attack = _take(state, area)
        state = _with(state, "stack", (*_stack(state), (*attack, "start")))
    return _with(state, "declined", (*_listed(state, "declined"), data["city"]))


def apply_replaced(state: GameState, data: dict[str, Any]) -> GameState:
    state = state.with_area(data["area"], replace(state.area(data["area"]), city=None))
    state = _add_tokens(state, data["area"], data["party"], data["placed"])
    return _advance(state, "fight")


def apply_swept(state: GameState, data: dict[str, Any]) -> GameState:
    state = _add_tokens(state, data["area"], BARBARIANS, -data["count"])
    return _advance(state, "spoils")


def apply_spoils_chosen(state: GameState, data: dict[str, Any]) -> GameState:
    draw, pillage = state.filed.get("spoils", (None, None))
    if data.get("draw") is not None:
        draw = data["draw"]
    if data.get("pillage") is not None:
        pillage = data["pillage"]
    return _with(state, "spoils", (draw, pillage))


def apply_spoils(state: GameState, data: dict[str, Any]) -> GameState:
    attacker, defender, card = data["attacker"], data["defender"], data.get("card")
    if card is not None:
        hand = list(state.nations[defender].hand)
        hand.remove(card)
        state = state.with_nation(replace(state.nations[defender], hand=tuple(hand)))
        state = state.with_nation(replace(state.nations[attacker], hand=(*state.nations[attacker].hand, card)))
    if data["pillage"]:
        n = state.nations[attacker]
        state = state.with_nation(replace(n, stock=n.stock - data["pillage"], treasury=n.treasury + data["pillage"]))
    stack = _stack(state)
    state = _with(state, "stack", stack[:-1])
    return replace(state, filed=state.filed.without("spoils"))

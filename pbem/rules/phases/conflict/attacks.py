"""Phase 4: its orders, and the state of its token conflicts and city attacks as they are resolved.

Progress lives in ``state.filed`` (see the phase's docstring); the folds of
every event of the phase are here, so what a later step may rely on is in
one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.board.battle import (
    PIRATES,
    area_limit,
    city_defenders_due,
    fight_removals,
    forces,
    holds,
    in_conflict,
    party_of_city,
    town_loss_range,
)
from pbem.rules.board.ranking import BARBARIANS, ast_rank
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

PHASE = "conflict"
STAGES = ("fight", "restore", "sweep", "spoils")
FIGHT_CITES = ("seed 002: 4A", "R-3.1", "D-16", "D-17", "§24.2")
ATTACK_CITES = ("seed 002: 4B", "R-3.2", "D-19")
STEP1 = "seed 001: [city-attack step 1]"
STEP2 = "seed 001: [city-attack step 2]"
SPOILS_CITES = ("seed 001: [city-attack step 3]", "seed 001: [city-attack step 4]", "D-4", "§24.51", "§24.52", "§24.53")
PIRATE_CITES = ("seed 001: [Attacking a pirate city]", "D-5")
TOWN_CITY_CITES = ("SC-16", "Q-SC7")
PLUNDER_CITES = ("SC-17", "Q-SC8")
TOWNS_TO_CITY = 6  # six of the defender's towns left standing restore his city (SC-16)


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


def fight_removed(state: GameState, area: str) -> dict[str, int]:
    """Each party's units the token conflict in ``area`` removes (R-3.1; towns count, SC-15)."""
    before = forces(state, area)
    steps = fight_removals(state, area, before, state.area(area).city is not None)
    return {p: sum(1 for s in steps if p in s) for p in before}


def town_split_questions(state: GameState, area: str) -> dict[str, range]:
    """Parties still to say how many of their removals in ``area`` are towns: their choice is real (SC-15)."""
    chosen = dict(state.filed.get(f"split:{area}", ()))
    out = {}
    for party, lost in fight_removed(state, area).items():
        choices = town_loss_range(state, area, party, lost)
        if party in state.nations and len(choices) > 1 and party not in chosen:
            out[party] = choices
    return out


def _towns_lost(state: GameState, area: str, removed: dict[str, int]) -> dict[str, int]:
    chosen = dict(state.filed.get(f"split:{area}", ()))
    out = {}
    for party, lost in removed.items():
        choices = town_loss_range(state, area, party, lost)
        take = chosen.get(party, choices[0])
        if take:
            out[party] = take
    return out


def _plunderer(state: GameState, before: dict[str, int], victim: str) -> str:
    """Who may plunder the victim's towns destroyed in a conflict: the opponent strongest at its start (Q-SC8)."""
    rivals = [p for p in before if p != victim]
    return min(rivals, key=lambda p: (-before[p], ast_rank(state, p) if p in state.nations else 99))


def fight_event(state: GameState, area: str, in_attack: bool) -> Event:
    a = state.area(area)
    before = forces(state, area)
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
    if any(n > 0 for n in a.towns.values()):  # Small Cities: towns fight with their owner's tokens (SC-15)
        data["towns"] = {p: n for p, n in a.towns.items() if n > 0}
        data["towns_lost"] = _towns_lost(state, area, removed)
        cites += ("SC-15",)
        if not in_attack:  # towns destroyed in a plain conflict may be plundered (SC-17, Q-SC8)
            data["plunder"] = [[victim, _plunderer(state, before, victim), lost]
                               for victim, lost in data["towns_lost"].items()
                               if victim in state.nations and _plunderer(state, before, victim) in state.nations]
            cites += PLUNDER_CITES if data["plunder"] else ()
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


def plunder_towns(state: GameState, area: str, defender: str) -> int | None:
    """Small Cities: T, the defender's towns destroyed or forfeited in ``area`` (SC-17); None where plain spoils apply."""
    if not parts_of(state).pieces.towns or defender not in state.nations:
        return None  # pirate cities keep their own rule (D-5, Q-SC9)
    plunders = state.filed.get("plunders", ())
    if state.step == "" and plunders:
        return plunders[0][3]
    return dict(state.filed.get("plunder", ())).get(area, 0)


def spoils_parts(state: GameState, area: str, attacker: str, defender: str) -> tuple[bool, bool, int]:
    """(a card can be taken, the attacker is asked whether to draw, the most he may pillage)."""
    if attacker not in state.nations:
        return False, False, 0  # the Barbarians take no spoils (§24.53)
    most = min(rule_numbers(state)["pillage_max"], state.nations[attacker].stock)
    towns = plunder_towns(state, area, defender)
    if towns is not None:  # Small Cities: plunder by the towns lost (SC-17)
        stays = state.area(area).tokens.get(attacker, 0) > 0
        card = towns > rule_numbers(state)["pillage_max"] and stays and bool(state.nations[defender].hand)
        return card, False, min(most, towns)
    card = defender in state.nations and bool(state.nations[defender].hand)
    ask_draw = card and options_of(state).city_capture_spoils == "seed"
    return card, ask_draw, most


def current_fight(state: GameState) -> str | None:
    """The area whose token conflict is resolved next: in 4a the first by area name, in 4b the current attack's."""
    if state.phase != PHASE:
        return None
    if state.step == "":
        if state.filed.get("plunders"):
            return None
        return next((a for a in state.areas if is_land(state, a) and in_conflict(state, a)), None)
    current = current_attack(state)
    return current[0] if current is not None and current[3] == "fight" else None


def current_spoils(state: GameState) -> tuple[str, str, str] | None:
    """(area, attacker, defender) whose spoils are due now: a taken city's (4b), or towns plundered in 4a (SC-17)."""
    plunders = state.filed.get("plunders", ())
    if state.step == "" and plunders:
        return tuple(plunders[0][:3])  # type: ignore[return-value]
    current = current_attack(state)
    if current is not None and current[3] == "spoils":
        return current[:3]
    return None


def _has_work(state: GameState, entry: tuple[str, str, str, str], stage: str) -> bool:
    area, attacker, defender, _ = entry
    if stage == "fight":
        return in_conflict(state, area)
    if stage == "restore":
        return restores(state, area, defender)
    if stage == "sweep":
        return (defender == PIRATES and options_of(state).pirate_city_attack == "1991"
                and state.area(area).tokens.get(BARBARIANS, 0) > 0)
    card, _, most = spoils_parts(state, area, attacker, defender)
    return card or most > 0


def towns_for_city(state: GameState, defender: str) -> bool:
    """Small Cities: a player's city attacked in 4b becomes towns, whatever the attacker's strength (SC-16)."""
    return parts_of(state).pieces.towns and defender in state.nations


def restores(state: GameState, area: str, defender: str) -> bool:
    """Six or more of the defender's towns stand after the fight: his city is put back (SC-16)."""
    return towns_for_city(state, defender) and state.area(area).towns.get(defender, 0) >= TOWNS_TO_CITY


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


def _add_towns(state: GameState, area: str, nation: str, count: int) -> GameState:
    """Towns placed from (positive) or returned to (negative) the nation's stock."""
    state = state.with_area(area, state.area(area).add_towns(nation, count))
    n = state.nations[nation]
    return state.with_nation(replace(n, stock=n.stock - count))


def apply_fight(state: GameState, data: dict[str, Any]) -> GameState:
    towns_lost = data.get("towns_lost", {})
    for party, count in data["removed"].items():
        state = _add_tokens(state, data["area"], party, -(count - towns_lost.get(party, 0)))
        if towns_lost.get(party):
            state = _add_towns(state, data["area"], party, -towns_lost[party])
    state = replace(state, filed=state.filed.without(f"split:{data['area']}"))
    if data.get("plunder"):
        queue = tuple((data["area"], plunderer, victim, lost) for victim, plunderer, lost in data["plunder"])
        state = _with(state, "plunders", state.filed.get("plunders", ()) + queue)
    if data.get("in_attack") and _stack(state) and _stack(state)[-1][0] == data["area"]:
        defender = _stack(state)[-1][2]
        if towns_lost.get(defender):
            state = _count_plunder(state, data["area"], towns_lost[defender])
        state = _advance(state, "restore")
    return state


def _count_plunder(state: GameState, area: str, towns: int) -> GameState:
    counts = dict(state.filed.get("plunder", ()))
    counts[area] = counts.get(area, 0) + towns
    return _with(state, "plunder", tuple(counts.items()))


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
    if data.get("towns"):  # Small Cities: the city becomes towns; those his stock lacks are forfeited (SC-16, SC-17)
        state = _add_towns(state, data["area"], data["party"], data["placed"])
        state = _count_plunder(state, data["area"], data["due"] - data["placed"])
    else:
        state = _add_tokens(state, data["area"], data["party"], data["placed"])
    return _advance(state, "fight")


def apply_split(state: GameState, data: dict[str, Any]) -> GameState:
    """An owner's choice of how many of his removals in a conflict are towns (SC-15), kept until the fight."""
    key = f"split:{data['area']}"
    return _with(state, key, (*state.filed.get(key, ()), (data["nation"], data["towns"])))


def apply_restored(state: GameState, data: dict[str, Any]) -> GameState:
    """Six or more towns left: they go to stock and the city stands again, not as one built this turn (SC-16)."""
    area, defender = data["area"], data["defender"]
    for owner, count in state.area(area).towns.items():
        state = _add_towns(state, area, owner, -count)  # no town stands beside a city (SC-5)
    state = state.with_area(area, replace(state.area(area), city=defender))
    return _advance(state, "sweep")


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
    if state.step == "" and state.filed.get("plunders"):  # towns plundered in 4a (SC-17)
        state = _with(state, "plunders", state.filed.get("plunders", ())[1:])
        return replace(state, filed=state.filed.without("spoils"))
    stack = _stack(state)
    state = _with(state, "stack", stack[:-1])
    return replace(state, filed=state.filed.without("spoils"))

"""Phase 4: conflict (seed 002: 4, 4a, 4b, 4A, 4B, [The barbarians]; seed 001: [city-attack steps 1-4],
[Attacking a pirate city]; R-3.1, R-3.2; D-3, D-4, D-5, D-16 to D-19).

4a. Every token conflict on the board is resolved first, area by area (the
areas do not interact, so the order is only that of the log: by area name).
A conflict exists where two or more parties have tokens in a land area and
their total exceeds its population limit; an area holding a city counts as
full. Rounds of removal: in each round the parties remove one token each in
ascending order of their count at the start of the round, equal counts
together, Metalworking holders after all non-holders (§24.24). The conflict
stops at once when the total is within the limit or only one party is left;
while a city stands there only the second condition counts. The Barbarian
tokens (and pirate cities) form one party, "Barbarians", holding no cards.

4b. What a non-owner has left in a city area is a city attack. Attacks are
resolved one at a time: pirate cities first (attacker's A.S.T.-ranking, then
area name), then by defender in A.S.T.-ranking order, each defender choosing
the order of his own cities (ORDER; default by area name). An attack below
the threshold (7; 6 / 8 with Engineering, D-19) removes the attacker's tokens
there. A successful one: (1) the city becomes *due* tokens of the defender
from stock, fewer if short (deferral per option `city-defender-deferral`,
D-3), (2) token conflict as in 4a, (3) the card and (4) the pillage per
option `city-capture-spoils` (D-4); a pirate city becomes Barbarian tokens
whose survivors stay or go per option `pirate-city-attack` (D-5).

Progress lives in ``state.filed``:
  "queue"    attacks not begun, in resolution order: (area, attacker, defender)
  "stack"    attacks being resolved, innermost last: (area, attacker, defender, stage)
  "ordered"  defenders who have fixed the order of their cities
  "deferred" defenders who used their one deferral this turn (D-3 seed, Q-S9)
  "declined" city areas whose replacement needs no further deferral question
  "spoils"   (draw, pillage) answered so far by the attacker of the current city

The Barbarian supply (tokens of unused nations) is not tracked here: the
engine always has enough Barbarian tokens for a pirate city (RULINGS D-5
allows "as many as there are"). Barbarian Hordes (phase 9) counts it from
the sets nobody plays (`calamity_barbarians.supply`) and fights with
`fight_removals`, `city_attack_needed` and `city_defenders_due` below.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import permutations
from typing import Any

from pbem.rules.board.battle import (
    PIRATES,
    area_limit,
    city_defenders_due,
    engineering_involved,
    fight_removals,
    holds,
    in_conflict,
    party_of_city,
    threshold,
)
from pbem.rules.board.ranking import BARBARIANS, ast_rank
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.phase import PhaseRules, acting_nation, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
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


# -- commands --------------------------------------------------------------------------


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


# -- facts of the position -------------------------------------------------------------------


def _numbers(state: GameState) -> Any:
    return ruleset_of(state).numbers


def _land(state: GameState, area: str) -> bool:
    return area in ruleset_of(state).areas


def _fight_event(state: GameState, area: str, in_attack: bool) -> Event:
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


def _find_attacks(state: GameState) -> list[tuple[str, str, str]]:
    """Every city area where one party other than the city's own has tokens: (area, attacker, defender), in 4b order."""
    found = []
    for name, a in state.areas.items():
        if a.city is None or not _land(state, name):
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


# -- progress within 4b ------------------------------------------------------------------------------


def _queue(state: GameState) -> tuple[tuple[str, str, str], ...]:
    return state.filed.get("queue", ())


def _stack(state: GameState) -> tuple[tuple[str, str, str, str], ...]:
    return state.filed.get("stack", ())


def _listed(state: GameState, key: str) -> tuple:
    return state.filed.get(key, ())


def _current(state: GameState) -> tuple[str, str, str, str] | None:
    """The attack being resolved now: the innermost begun one, else the next in the queue (stage "start")."""
    if _stack(state):
        return _stack(state)[-1]
    if _queue(state):
        return (*_queue(state)[0], "start")
    return None


def _with(state: GameState, key: str, value: tuple) -> GameState:
    return replace(state, filed=state.filed.set(key, value))


def _needs_order(state: GameState) -> str | None:
    """The defender who must now order his attacked cities (he has 2 or more, seed 002: 4b), if any."""
    if _stack(state) or not _queue(state):
        return None
    defender = _queue(state)[0][2]
    if defender not in state.nations or defender in _listed(state, "ordered"):
        return None
    return defender if sum(1 for q in _queue(state) if q[2] == defender) >= 2 else None


def _short(state: GameState, attacker: str, defender: str) -> bool:
    return defender in state.nations and state.nations[defender].stock < city_defenders_due(state, attacker, defender)


def _attacks_on(state: GameState, attacker: str, defender: str) -> bool:
    return any(q[1] == attacker and q[2] == defender for q in (*_queue(state), *_stack(state)))


def _deferrable(state: GameState, defender: str) -> list[tuple[str, str, str]]:
    """The defender's own attacks not yet begun that may be resolved before his city is replaced (D-3)."""
    mine = [q for q in _queue(state) if q[1] == defender]
    if options_of(state).city_defender_deferral == "1991":
        # A cycle (two players attacking each other's cities) is broken: the city that came up first is
        # replaced without waiting for the attack on its attacker's city (RULINGS D-3, 1991).
        mine = [q for q in mine if not _attacks_on(state, q[2], defender)]
    return mine


def _deferral_question(state: GameState) -> tuple[str, str, list[tuple[str, str, str]]] | None:
    """(city area, defender, candidates) when the current replacement waits on a deferral, else None."""
    current = _current(state)
    if current is None or current[3] != "replace":
        return None
    area, attacker, defender, _ = current
    if area in _listed(state, "declined") or not _short(state, attacker, defender):
        return None
    if options_of(state).city_defender_deferral == "seed" and defender in _listed(state, "deferred"):
        return None
    candidates = _deferrable(state, defender)
    return (area, defender, candidates) if candidates else None


def _spoils_parts(state: GameState, attacker: str, defender: str) -> tuple[bool, bool, int]:
    """(a card can be taken, the attacker is asked whether to draw, the most he may pillage)."""
    if attacker not in state.nations:
        return False, False, 0  # the Barbarians take no spoils (§24.53)
    card = defender in state.nations and bool(state.nations[defender].hand)
    ask_draw = card and options_of(state).city_capture_spoils == "seed"
    return card, ask_draw, min(_numbers(state)["pillage_max"], state.nations[attacker].stock)


def _has_work(state: GameState, entry: tuple[str, str, str, str], stage: str) -> bool:
    area, attacker, defender, _ = entry
    if stage == "fight":
        return in_conflict(state, area)
    if stage == "sweep":
        return (defender == PIRATES and options_of(state).pirate_city_attack == "1991"
                and state.area(area).tokens.get(BARBARIANS, 0) > 0)
    card, _, most = _spoils_parts(state, attacker, defender)
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


# -- folding ---------------------------------------------------------------------------------------


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
    queue = _queue(state)
    by_area = {q[0]: q for q in queue if q[2] == defender}
    mine = iter(by_area[a] for a in data["areas"] if a in by_area)
    queue = tuple(next(mine) if q[2] == defender else q for q in queue)
    state = _with(state, "queue", queue)
    return _with(state, "ordered", (*_listed(state, "ordered"), defender))


def _take(state: GameState, area: str) -> tuple[GameState, tuple[str, str, str]]:
    """Take the attack on ``area`` off the queue or the stack."""
    for q in _queue(state):
        if q[0] == area:
            return _with(state, "queue", tuple(x for x in _queue(state) if x[0] != area)), q
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


# -- who acts ----------------------------------------------------------------------------------------


def _player(state: GameState, nation: str) -> int:
    return state.nations[nation].player_id


def _board_line(state: GameState, area: str) -> str:
    a = state.area(area)
    parts = [f"{p} {n}" for p, n in a.tokens.items()]
    city = f"{a.city} city, " if a.city else ""
    return f"{area} (limit {area_limit(state, area)}): {city}{', '.join(parts) or 'no tokens'}"


def _order_prompt(state: GameState, defender: str) -> Prompt:
    mine = [q for q in _queue(state) if q[2] == defender]
    areas = [q[0] for q in mine]
    situation = tuple(
        f"{_board_line(state, q[0])}; attacked by {q[1]}, {threshold(state, q[1], defender, 'city_attack_tokens')} needed."
        for q in mine
    ) + (f"Your stock: {state.nations[defender].stock}.",)
    choices: tuple[str, ...] = ()
    if len(areas) <= 4:
        choices = tuple("ORDER " + ", ".join(p) for p in permutations(areas))
    else:  # too many orders to list: each city first, the rest by area name
        choices = tuple("ORDER " + ", ".join([a, *[b for b in areas if b != a]]) for a in areas)
    return Prompt(
        who=defender.lower(),
        player_id=_player(state, defender),
        step="city-order",
        question=(f"{len(areas)} of your cities are attacked: {', '.join(areas)}. "
                  "Choose the order in which their attacks are resolved (cities you leave out follow by area name)."),
        choices=choices[:60],
        template="ORDER " + ", ".join(areas),
        default=f"by area name ({', '.join(areas)})",
        situation=situation,
        cites=("seed 002: 4b", "R-3.2", "Q-S13"),
    )


def _defer_prompt(state: GameState) -> Prompt:
    area, defender, candidates = _deferral_question(state)  # type: ignore[misc]
    attacker = _current(state)[1]  # type: ignore[index]
    due = city_defenders_due(state, attacker, defender)
    stock = state.nations[defender].stock
    first = candidates[0]
    return Prompt(
        who=defender.lower(),
        player_id=_player(state, defender),
        step="city-defer",
        question=(
            f"{attacker} has taken your city in {area}: it becomes {due} of your tokens, but you have only {stock} "
            f"in stock. Once this turn you may first have one of your own city attacks resolved (tokens it frees "
            f"return to your stock). Which one, or none?"
        ),
        choices=(*(f"DEFER {q[0]}" for q in candidates), "DEFER no"),
        template=f"DEFER {first[0]}",
        default=f"defer to your first pending attack, in {first[0]}",
        situation=tuple(f"Your attack on {q[2]}'s city: {_board_line(state, q[0])}." for q in candidates),
        cites=(STEP1, "D-3", "Q-S9"),
    )


def _spoils_prompt(state: GameState) -> Prompt | None:
    current = _current(state)
    if current is None or current[3] != "spoils":
        return None
    area, attacker, defender, _ = current
    _, ask_draw, most = _spoils_parts(state, attacker, defender)
    draw, pillage = state.filed.get("spoils", (None, None))
    want_draw = ask_draw and draw is None
    want_pillage = most > 0 and pillage is None
    if not (want_draw or want_pillage):
        return None
    amounts = range(most, -1, -1)
    if want_draw and want_pillage:
        choices = tuple(f"SPOILS {yn} {k}" for yn in ("yes", "no") for k in amounts)
        template, default = f"SPOILS yes {most}", f"draw a card and pillage {most}"
    elif want_draw:
        choices, template, default = ("DRAW yes", "DRAW no"), "DRAW yes", "draw a card"
    else:
        choices, template, default = tuple(f"PILLAGE {k}" for k in amounts), f"PILLAGE {most}", f"pillage {most}"
    whose = "the pirate city" if defender == PIRATES else f"{defender}'s city"
    asks = []
    if want_draw:
        asks.append(f"whether to draw one trade card at random from {defender}'s hand ({len(state.nations[defender].hand)} cards)")
    if want_pillage:
        asks.append(f"how many tokens (0 to {most}) to move from your stock to your treasury")
    n = state.nations[attacker]
    return Prompt(
        who=attacker.lower(),
        player_id=n.player_id,
        step="city-spoils",
        question=f"You took {whose} in {area}. Choose " + " and ".join(asks) + ".",
        choices=choices,
        template=template,
        default=default,
        situation=(_board_line(state, area), f"Your stock {n.stock}, treasury {n.treasury}."),
        cites=SPOILS_CITES + (PIRATE_CITES if defender == PIRATES else ()),
    )


def pending(state: GameState) -> dict[str, Prompt]:
    if state.step != "attacks":
        return {}
    defender = _needs_order(state)
    if defender is not None:
        return {defender.lower(): _order_prompt(state, defender)}
    if _deferral_question(state) is not None and options_of(state).city_defender_deferral == "seed":
        prompt = _defer_prompt(state)
        return {prompt.who: prompt}
    prompt = _spoils_prompt(state)
    return {prompt.who: prompt} if prompt else {}


# -- deciding --------------------------------------------------------------------------------------------


def _asked(state: GameState, player_id: int, step: str, what: str, cite: str) -> Prompt:
    prompt = pending(state).get(acting_nation(state, player_id).lower()) if state.phase == PHASE else None
    if prompt is None or prompt.step != step:
        raise Rejection(f"no {what} is asked of you now", cite)
    return prompt


def decide_order(state: GameState, command: ChooseCityOrder, by_default: bool = False) -> list[Event]:
    _asked(state, command.player_id, "city-order", "order of attacked cities", "seed 002: 4b")
    defender = acting_nation(state, command.player_id)
    mine = [q[0] for q in _queue(state) if q[2] == defender]
    named = list(dict.fromkeys(command.areas))
    wrong = [a for a in named if a not in mine]
    if wrong:
        raise Rejection(f"{', '.join(wrong)}: not one of your attacked cities; they are {', '.join(mine)}", "seed 002: 4b")
    full = named + [a for a in mine if a not in named]
    data: dict[str, Any] = {"defender": defender, "areas": full}
    if by_default:
        data["by_default"] = True
    return [Event("CityOrderChosen", data, ("seed 002: 4b", "R-3.2") + (("Q-S13",) if by_default else ()))]


def decide_deferral(state: GameState, command: ChooseDeferral, by_default: bool = False) -> list[Event]:
    _asked(state, command.player_id, "city-defer", "deferral", STEP1)
    city, defender, candidates = _deferral_question(state)  # type: ignore[misc]
    areas = [q[0] for q in candidates]
    if command.area is not None and command.area not in areas:
        raise Rejection(
            f"{command.area}: you have no pending city attack there; choose {', '.join(areas)}, or DEFER no", STEP1
        )
    data: dict[str, Any] = {"defender": defender, "city": city, "area": command.area}
    if by_default:
        data["by_default"] = True
    return [Event("DeferralChosen", data, (STEP1, "D-3", "Q-S9"))]


def decide_spoils(state: GameState, command: ChooseSpoils, by_default: bool = False) -> list[Event]:
    _asked(state, command.player_id, "city-spoils", "choice of spoils", "D-4")
    area, attacker, defender, _ = _current(state)  # type: ignore[misc]
    card, ask_draw, most = _spoils_parts(state, attacker, defender)
    draw, pillage = command.draw, command.pillage
    if draw is not None and not ask_draw:
        if defender == PIRATES:
            raise Rejection("a pirate city yields no trade card; send PILLAGE <0-3> only", "D-5")
        if not card:
            raise Rejection(f"{defender} holds no trade cards, so there is nothing to draw; send PILLAGE <n> only", "seed 001: [city-attack step 3]")
        raise Rejection("in this game the card is drawn without asking (city-capture-spoils=1991); send PILLAGE <n> only", "D-4")
    if pillage is not None and not 0 <= pillage <= most:
        raise Rejection(
            f"you may pillage 0 to {most} (at most {_numbers(state)['pillage_max']}, and no more than your stock)",
            "seed 001: [city-attack step 4]",
        )
    if draw is None and pillage is None:
        raise Rejection("say whether to draw a card (DRAW yes / DRAW no) or how much to pillage (PILLAGE <n>)", "D-4")
    data: dict[str, Any] = {"attacker": attacker, "area": area, "draw": draw, "pillage": pillage}
    if by_default:
        data["by_default"] = True
    return [Event("SpoilsChosen", data, SPOILS_CITES)]


def defaults(state: GameState, prompt: Prompt) -> list[Event]:
    if prompt.step == "city-order":
        defender = acting_nation(state, prompt.player_id)
        mine = tuple(q[0] for q in _queue(state) if q[2] == defender)
        return decide_order(state, ChooseCityOrder(prompt.player_id, mine), True)
    if prompt.step == "city-defer":
        _, _, candidates = _deferral_question(state)  # type: ignore[misc]
        return decide_deferral(state, ChooseDeferral(prompt.player_id, candidates[0][0]), True)
    _, attacker, defender, _ = _current(state)  # type: ignore[misc]
    _, ask_draw, most = _spoils_parts(state, attacker, defender)
    draw, pillage = state.filed.get("spoils", (None, None))
    command = ChooseSpoils(
        prompt.player_id,
        True if ask_draw and draw is None else None,
        most if most > 0 and pillage is None else None,
    )
    return decide_spoils(state, command, True)


# -- resolving ---------------------------------------------------------------------------------------


def _judge(state: GameState, area: str, attacker: str, defender: str) -> Event:
    tokens = state.area(area).tokens.get(attacker, 0)
    needed = threshold(state, attacker, party_of_city(defender), "city_attack_tokens")
    cites = ATTACK_CITES + (("§24.35",) if engineering_involved(state, attacker, defender) else ())
    if defender == PIRATES:
        cites += PIRATE_CITES + (("Q-S11",) if holds(state, attacker, "Engineering") else ())
    data = {"area": area, "attacker": attacker, "defender": defender, "tokens": tokens, "needed": needed}
    return Event("CityAttackSucceeded" if tokens >= needed else "CityAttackFailed", data, cites)


def _replace_event(state: GameState, area: str, attacker: str, defender: str) -> Event:
    due = city_defenders_due(state, attacker, defender)
    party = party_of_city(defender)
    placed = due if party == BARBARIANS else min(due, state.nations[defender].stock) if defender in state.nations else 0
    cites = (STEP1, "R-3.2", "D-19") + (("§24.35",) if engineering_involved(state, attacker, defender) else ())
    if defender == PIRATES:
        cites += PIRATE_CITES + (("Q-S11",) if holds(state, attacker, "Engineering") else ())
    if placed < due:
        cites += ("D-3",)
    data = {"area": area, "attacker": attacker, "defender": defender, "party": party, "due": due, "placed": placed}
    return Event("CityReplaced", data, cites)


def _spoils_event(state: GameState, draws: Draws, area: str, attacker: str, defender: str) -> list[Event]:
    card_possible, ask_draw, most = _spoils_parts(state, attacker, defender)
    draw, pillage = state.filed.get("spoils", (None, None))
    if (ask_draw and draw is None) or (most > 0 and pillage is None):
        return []  # waiting for the attacker
    take_card = card_possible and (draw if ask_draw else True)
    card = None
    if take_card:
        card = draws.choice(sorted(state.nations[defender].hand), f"{state.version}:spoils:{area}")
    data = {"area": area, "attacker": attacker, "defender": defender, "card": card, "pillage": pillage or 0}
    cites = SPOILS_CITES + (PIRATE_CITES if defender == PIRATES else ())
    return [Event("SpoilsTaken", data, cites)]


def settle(state: GameState, draws: Draws) -> list[Event]:
    if state.step == "":
        for area in state.areas:
            if _land(state, area) and in_conflict(state, area):
                return [_fight_event(state, area, in_attack=False)]
        attacks = _find_attacks(state)
        if not attacks:
            idle = state.version == state.phase_began  # nothing happened: the phase is skipped
            return [phase_ended(PHASE, ("seed 002: 4", "§18.2") if idle else ("seed 002: 4",))]
        cites = ("seed 002: 4a", "seed 002: 4b", "R-3.2", "D-18")
        if any(a[2] == PIRATES for a in attacks):
            cites += ("Q-S12",)
        return [Event("CityAttacksFound", {"attacks": [list(a) for a in attacks]}, cites)]
    if state.step != "attacks":
        return [phase_ended(PHASE, ("seed 002: 4",))]
    current = _current(state)
    if current is None:
        return [phase_ended(PHASE, ("seed 002: 4",))]
    area, attacker, defender, stage = current
    if stage == "start":
        if _needs_order(state):
            return []
        return [_judge(state, area, attacker, defender)]
    if stage == "replace":
        question = _deferral_question(state)
        if question is not None:
            if options_of(state).city_defender_deferral == "seed":
                return []  # the defender decides (DEFER)
            data = {"defender": defender, "city": area, "areas": [q[0] for q in question[2]]}
            return [Event("AttacksResolvedFirst", data, ("D-3", "§24.32"))]
        return [_replace_event(state, area, attacker, defender)]
    if stage == "fight":
        return [_fight_event(state, area, in_attack=True)]
    if stage == "sweep":
        count = state.area(area).tokens.get(BARBARIANS, 0)
        return [Event("BarbariansRemoved", {"area": area, "count": count}, PIRATE_CITES + ("Q-S16", "§24.34"))]
    return _spoils_event(state, draws, area, attacker, defender)


# -- telling ------------------------------------------------------------------------------------------


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{p} {n}" for p, n in counts.items())


def _tell_fight(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    where = f"In {d['area']} (limit {d['limit']}{', with a city' if d['city'] else ''})"
    removed = ", ".join(f"{p} {n}" for p, n in d["removed"].items() if n)
    return f"{where} tokens fought: {_counts(d['before'])} became {_counts(d['after'])} (removed to stock: {removed or 'none'})."


def _tell_found(state: GameState, event: Event, viewer: str) -> str:
    parts = [
        f"{area} ({attacker} against {'the pirate city' if defender == PIRATES else defender})"
        for area, attacker, defender in event.data["attacks"]
    ]
    return "City attacks, in the order they are resolved: " + "; ".join(parts) + "."


def _whose(defender: str) -> str:
    return "the pirate city" if defender == PIRATES else f"{defender}'s city"


def _tell_failed(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    return (f"{d['attacker']}'s attack on {_whose(d['defender'])} in {d['area']} failed ({d['tokens']} tokens, "
            f"{d['needed']} needed): its {d['tokens']} tokens there are removed.")


def _tell_succeeded(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    return (f"{d['attacker']} attacks {_whose(d['defender'])} in {d['area']} with {d['tokens']} tokens "
            f"({d['needed']} needed): the attack succeeds.")


def _tell_replaced(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    if d["defender"] == PIRATES:
        return f"The pirate city in {d['area']} is replaced by {d['placed']} Barbarian tokens."
    short = f" (of {d['due']} due; his stock was short)" if d["placed"] < d["due"] else ""
    return f"{d['defender']}'s city in {d['area']} is replaced by {d['placed']} of its tokens{short}."


def _tell_deferral(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    if d["area"] is None:
        return f"{d['defender']} does not defer: its city in {d['city']} is replaced now."
    return f"{d['defender']}, short of stock, has its own attack in {d['area']} resolved before its city in {d['city']} is replaced."


def _tell_resolved_first(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    return f"Before its city in {d['city']} is replaced, {d['defender']}'s own attacks are resolved first: {', '.join(d['areas'])}."


def _tell_spoils_chosen(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    parts = []
    if d.get("draw") is not None:
        parts.append("to draw a card" if d["draw"] else "not to draw a card")
    if d.get("pillage") is not None:
        parts.append(f"to pillage {d['pillage']}")
    return f"{d['attacker']} chose, for the city taken in {d['area']}, " + " and ".join(parts) + "."


def _sees_card(viewer: str, attacker: str, defender: str) -> bool:
    return viewer in ("moderator", "auditor") or viewer in (f"player:{attacker.lower()}", f"player:{defender.lower()}")


def _tell_spoils(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    parts = []
    if d["card"] is not None:
        named = f" ({d['card']})" if _sees_card(viewer, d["attacker"], d["defender"]) else ""
        parts.append(f"took a trade card{named} at random from {d['defender']}'s hand")
    if d["pillage"]:
        parts.append(f"pillaged {d['pillage']} (stock to treasury)")
    return f"{d['attacker']} " + (" and ".join(parts) or "took no spoils") + f" for the city in {d['area']}."


RULES = PhaseRules(
    name=PHASE,
    apply={
        "TokenConflictResolved": apply_fight,
        "CityAttacksFound": apply_found,
        "CityOrderChosen": apply_order,
        "CityAttackFailed": apply_failed,
        "CityAttackSucceeded": apply_succeeded,
        "DeferralChosen": apply_deferral,
        "AttacksResolvedFirst": apply_resolved_first,
        "CityReplaced": apply_replaced,
        "BarbariansRemoved": apply_swept,
        "SpoilsChosen": apply_spoils_chosen,
        "SpoilsTaken": apply_spoils,
    },
    decide={ChooseCityOrder: decide_order, ChooseDeferral: decide_deferral, ChooseSpoils: decide_spoils},
    pending=pending,
    defaults=defaults,
    settle=settle,
    inputs={
        "CityOrderChosen": lambda s, d: ChooseCityOrder(s.nations[d["defender"]].player_id, tuple(d["areas"])),
        "DeferralChosen": lambda s, d: ChooseDeferral(s.nations[d["defender"]].player_id, d["area"]),
        "SpoilsChosen": lambda s, d: ChooseSpoils(s.nations[d["attacker"]].player_id, d.get("draw"), d.get("pillage")),
    },
    narrate={
        "TokenConflictResolved": _tell_fight,
        "CityAttacksFound": _tell_found,
        "CityOrderChosen": lambda s, e, v: f"{e.data['defender']} set the order of its attacked cities: {', '.join(e.data['areas'])}.",
        "CityAttackFailed": _tell_failed,
        "CityAttackSucceeded": _tell_succeeded,
        "DeferralChosen": _tell_deferral,
        "AttacksResolvedFirst": _tell_resolved_first,
        "CityReplaced": _tell_replaced,
        "BarbariansRemoved": lambda s, e, v: f"The {e.data['count']} surviving Barbarian tokens in {e.data['area']} are removed.",
        "SpoilsChosen": _tell_spoils_chosen,
        "SpoilsTaken": _tell_spoils,
    },
)

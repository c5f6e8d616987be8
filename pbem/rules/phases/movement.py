"""Phase 3: ship construction and maintenance (3a), then movement (3b).

R-2.2, Q-S1, Q-S4: the seeds say nothing about ships or about how tokens
move, so §22 and §23 of the 1991 rules apply; seed 002 adds that entering an
area holding another player's city (or a pirate city) is an attack.

Order of play: census order fixed when the phase begins (most tokens on the
board first, ties by A.S.T.-ranking, Military holders after all others,
§21.1, §22.11, §23.21). One nation at a time (R-2.6): in 3a every nation with
ships or a place to build finishes its ship orders before anyone moves; in 3b
every nation with tokens or ships on the board moves, seeing earlier moves.
A nation's turn in a step ends with HALT (or the deadline).

3a (§22): each ship already on the board owes 1 upkeep (treasury, or a token
levied from the ship's area); a ship not kept or scrapped by HALT is paid for
treasury first, then by levy, else it returns to stock. Building costs 2
(treasury and/or tokens levied from the coastal area where it is built; paid
wholly from treasury it goes in a coastal area holding one of the nation's
units). At most 4 ships on the board.

3b (§23): a token moves once: one land step, two with Roadbuilding when the
area passed through holds no other party's units (§23.31), or aboard a ship.
A ship moves once: from where it stands, with up to 5 tokens of that area
that have not moved, along at most 4 water steps (5 with Cloth Making) of
the ship graph, to a coastal land area where every token goes ashore. Open
sea may be crossed only with Astronomy and never ended in (§23.52–23.55).
The engine finds the shortest legal route itself.

Left out (documented for the lead): ferrying several loads or picking up on
the way (§23.56 allows it; here a ship carries one load from its start),
ships ending in a non-open sea area (here ships always end at a coast),
the double coasts of §23.57, and Towns (SC-14) of the Small Cities variant.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from typing import Any

from pbem.rules.board.card_effects import card_effects
from pbem.rules.board.ranking import census_order
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.phase import PhaseRules, acting_nation, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of

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


# -- commands ---------------------------------------------------------------


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


# -- what the rules and the cards allow ------------------------------------------


def ship_range(state: GameState, nation: str) -> int:
    """Water steps a ship may take: 4, or 5 with Cloth Making (§23.53)."""
    return max([ruleset_of(state).numbers["ship_range"]] + [e.get("value") for e in card_effects(state, nation, "ship-range")])


def crosses_open_sea(state: GameState, nation: str) -> bool:
    """Astronomy (§23.54)."""
    return bool(card_effects(state, nation, "open-sea-passage"))


def land_range(state: GameState, nation: str) -> int:
    """Land areas a token may move: 1, or 2 with Roadbuilding (§23.31)."""
    return max([1] + [e.get("value") for e in card_effects(state, nation, "land-move-range")])


def _numbers(state: GameState) -> dict[str, int]:
    return dict(ruleset_of(state).numbers)


def _in_play(state: GameState) -> frozenset[str]:
    return ruleset_of(state).setup_for(len(state.players)).areas_in_play


def _coastal(state: GameState, area: str) -> bool:
    rules = ruleset_of(state)
    return area in rules.areas and rules.areas[area].coastal and area in _in_play(state)


# -- orders on file (state.filed) --------------------------------------------------------


def _order(state: GameState) -> list[str]:
    """The census order fixed when the phase began (computed afresh for a position set up by hand)."""
    if "order" in state.filed:
        return list(state.filed["order"])
    return census_order(state)


def _done(state: GameState, step: str) -> tuple[str, ...]:
    return state.filed.get(f"done:{step}", ())


def _unkept(state: GameState, nation: str) -> list[str]:
    return list(state.filed.get(f"unkept:{nation}", ()))


def _filed_count(state: GameState, key: str) -> int:
    return state.filed.get(key, (0,))[0]


def movable(state: GameState, nation: str, area: str) -> int:
    """Tokens of ``nation`` in ``area`` that have not moved this phase."""
    return state.area(area).tokens.get(nation, 0) - _filed_count(state, f"arrived:{nation}:{area}")


def free_ships(state: GameState, nation: str, area: str) -> int:
    """Ships of ``nation`` in ``area`` that have not sailed this phase."""
    return state.area(area).ships.get(nation, 0) - _filed_count(state, f"sailed:{nation}:{area}")


def _add_filed(state: GameState, key: str, count: int) -> GameState:
    return replace(state, filed=state.filed.set(key, (_filed_count(state, key) + count,)))


def _ship_areas(state: GameState, nation: str) -> list[str]:
    """One entry per ship, by area name."""
    return [a for a, area in state.areas.items() for _ in range(area.ships.get(nation, 0))]


def _build_payment(state: GameState, nation: str, area: str, levy: int | None) -> tuple[int, int]:
    """(treasury, levy) for a ship built in ``area``: treasury first unless a levy is named."""
    cost = _numbers(state)["ship_cost"]
    if levy is None:
        levy = max(0, cost - state.nations[nation].treasury)
    return cost - levy, levy


def build_sites(state: GameState, nation: str) -> list[str]:
    """Coastal areas where ``nation`` can build a ship now, paying treasury first (§22.1, §22.3)."""
    if state.ships_on_board(nation) >= ruleset_of(state).ships_per_nation:
        return []
    out = []
    for name, area in state.areas.items():
        if not _coastal(state, name):
            continue
        _, levy = _build_payment(state, nation, name, None)
        tokens = area.tokens.get(nation, 0)
        if levy <= tokens and (levy > 0 or tokens > 0 or area.city == nation):
            out.append(name)
    return out


def _eligible(state: GameState, nation: str, step: str) -> bool:
    if step == SHIPS:
        return bool(_unkept(state, nation)) or state.ships_on_board(nation) > 0 or bool(build_sites(state, nation))
    return state.tokens_on_board(nation) > 0 or state.ships_on_board(nation) > 0


def _queue(state: GameState, step: str) -> list[str]:
    """Who is asked in ``step``, in census order: fixed when the step begins, so a nation that scraps
    its last ship is still asked to HALT (computed afresh for a position set up by hand)."""
    if f"queue:{step}" in state.filed:
        return list(state.filed[f"queue:{step}"])
    return [n for n in _order(state) if n in state.nations and _eligible(state, n, step)]


def current_nation(state: GameState) -> str | None:
    """The nation whose turn it is in the current step, or None when the step is over."""
    if state.phase != PHASE or state.step not in (SHIPS, MOVES):
        return None
    done = _done(state, state.step)
    for nation in _queue(state, state.step):
        if nation not in done:
            return nation
    return None


# -- ship routes --------------------------------------------------------------------------


def _search(state: GameState, origin: str, open_sea: bool) -> dict[str, str | None]:
    """Breadth-first search of the ship graph from ``origin``: node -> the node it is reached from.

    Water areas count only where they touch an area in play; open sea only with ``open_sea``.
    Land areas are coasts a ship may pass along or end at; open sea is never an end (§23.55)."""
    rules = ruleset_of(state)
    in_play = _in_play(state)

    def usable(node: str) -> bool:
        if node in rules.waters:
            if rules.waters[node].open_sea and not open_sea:
                return False
            return any(n in in_play for n in rules.water_links.get(node, ()))
        return node in in_play

    came: dict[str, str | None] = {origin: None}
    queue = deque([origin])
    while queue:
        node = queue.popleft()
        for nxt in sorted(rules.water_links.get(node, ())):
            if nxt not in came and usable(nxt):
                came[nxt] = node
                queue.append(nxt)
    return came


def _route(state: GameState, origin: str, destination: str, open_sea: bool) -> list[str] | None:
    """The shortest water route from ``origin`` to ``destination`` (both ends included), or None."""
    came = _search(state, origin, open_sea)
    if destination not in came:
        return None
    path = [destination]
    while came[path[-1]] is not None:
        path.append(came[path[-1]])  # type: ignore[arg-type]
    return path[::-1]


def sail_destinations(state: GameState, nation: str, origin: str) -> list[str]:
    """Coastal land areas a ship of ``nation`` at ``origin`` can reach this phase."""
    rules = ruleset_of(state)
    came = _search(state, origin, crosses_open_sea(state, nation))
    steps: dict[str, int] = {origin: 0}
    for node in came:  # insertion order is breadth-first order
        if came[node] is not None:
            steps[node] = steps[came[node]] + 1  # type: ignore[index]
    reach = ship_range(state, nation)
    return sorted(a for a, n in steps.items() if a != origin and a in rules.areas and n <= reach)


def _pass_through(state: GameState, nation: str, origin: str, destination: str) -> list[str]:
    """Areas a Roadbuilding holder may pass through from ``origin`` to ``destination`` (§23.31)."""
    rules = ruleset_of(state)
    between = rules.land_adjacency.get(origin, frozenset()) & rules.land_adjacency.get(destination, frozenset())
    out = []
    for name in sorted(between):
        area = state.area(name)
        others = [n for n in area.tokens if n != nation]
        if name in _in_play(state) and not others and area.city in (None, nation):
            out.append(name)
    return out


def land_neighbours(state: GameState, area: str) -> list[str]:
    in_play = _in_play(state)
    return sorted(a for a in ruleset_of(state).land_adjacency.get(area, ()) if a in in_play)


# -- folding -------------------------------------------------------------------------------


def apply_order_fixed(state: GameState, data: dict[str, Any]) -> GameState:
    filed = state.filed.set("order", tuple(data["order"])).set(f"queue:{SHIPS}", tuple(data["asked"]))
    for nation, areas in data["upkeep"].items():
        filed = filed.set(f"unkept:{nation}", tuple(areas))
    return replace(state, step=SHIPS, filed=filed)


def _pay(state: GameState, nation: str, area: str, treasury: int, levy: int) -> GameState:
    n = state.nations[nation]
    state = state.with_nation(replace(n, treasury=n.treasury - treasury, stock=n.stock + treasury + levy))
    if levy:
        state = state.with_area(area, state.area(area).add_tokens(nation, -levy))
    return state


def _add_ship(state: GameState, nation: str, area: str, count: int) -> GameState:
    a = state.area(area)
    left = a.ships.get(nation, 0) + count
    ships = a.ships.set(nation, left) if left else a.ships.without(nation)
    return state.with_area(area, replace(a, ships=ships))


def _strike_unkept(state: GameState, nation: str, area: str) -> GameState:
    unkept = _unkept(state, nation)
    if area in unkept:
        unkept.remove(area)
    return replace(state, filed=state.filed.set(f"unkept:{nation}", tuple(unkept)))


def apply_built(state: GameState, data: dict[str, Any]) -> GameState:
    state = _pay(state, data["nation"], data["area"], data["treasury"], data["levy"])
    return _add_ship(state, data["nation"], data["area"], 1)


def apply_kept(state: GameState, data: dict[str, Any]) -> GameState:
    state = _pay(state, data["nation"], data["area"], data["treasury"], data["levy"])
    return _strike_unkept(state, data["nation"], data["area"])


def apply_scrapped(state: GameState, data: dict[str, Any]) -> GameState:
    state = _add_ship(state, data["nation"], data["area"], -1)
    return _strike_unkept(state, data["nation"], data["area"])


def apply_upkeep(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    for paid in data["paid"]:
        state = _pay(state, nation, paid["area"], paid["treasury"], paid["levy"])
    for area in data["lost"]:
        state = _add_ship(state, nation, area, -1)
    return replace(state, filed=state.filed.without(f"unkept:{nation}"))


def apply_done(state: GameState, data: dict[str, Any]) -> GameState:
    key = f"done:{state.step}"
    return replace(state, filed=state.filed.set(key, state.filed.get(key, ()) + (data["nation"],)))


def apply_ships_ended(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, step=MOVES, filed=state.filed.set(f"queue:{MOVES}", tuple(data["asked"])))


def _move(state: GameState, nation: str, origin: str, destination: str, count: int) -> GameState:
    state = state.with_area(origin, state.area(origin).add_tokens(nation, -count))
    state = state.with_area(destination, state.area(destination).add_tokens(nation, count))
    return _add_filed(state, f"arrived:{nation}:{destination}", count)


def apply_moved(state: GameState, data: dict[str, Any]) -> GameState:
    return _move(state, data["nation"], data["from"], data["to"], data["count"])


def apply_sailed(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    if data["count"]:
        state = _move(state, nation, data["from"], data["to"], data["count"])
    state = _add_ship(_add_ship(state, nation, data["from"], -1), nation, data["to"], 1)
    return _add_filed(state, f"sailed:{nation}:{data['to']}", 1)


def apply_attacked(state: GameState, data: dict[str, Any]) -> GameState:
    return _add_filed(state, f"attacked:{data['attacker']}:{data['area']}", 1)


# -- who acts ---------------------------------------------------------------------------


def _spread(choices: list[str]) -> tuple[str, ...]:
    """At most MAX_CHOICES, the do-nothing answer first, the rest picked evenly."""
    first, rest = choices[0], choices[1:]
    room = MAX_CHOICES - 1
    if len(rest) > room:
        rest = [rest[i * len(rest) // room] for i in range(room)]
    return (first, *rest)


def _ship_prompt(state: GameState, nation: str) -> Prompt:
    n = state.nations[nation]
    unkept = _unkept(state, nation)
    sites = build_sites(state, nation)
    ships = _ship_areas(state, nation)
    choices = ["HALT"]
    for area in sorted(set(unkept)):
        choices.append(f"SCRAP {area}\nHALT")
        if state.area(area).tokens.get(nation, 0):
            choices.append(f"KEEP {area} LEVY\nHALT")
    choices += [f"SHIP {area}\nHALT" for area in sites]
    template = [f"# KEEP {a}        upkeep 1 from treasury (KEEP {a} LEVY: a token there); SCRAP {a}: give it up" for a in sorted(set(unkept))]
    template += [f"# SHIP {a}        build: 2 from treasury first (SHIP {a} LEVY 2: two tokens there)" for a in sites[:3]]
    template.append("HALT")
    situation = [
        f"Treasury {n.treasury}, stock {n.stock}; ships on the board {len(ships)} of {ruleset_of(state).ships_per_nation}"
        + (f" ({', '.join(ships)})" if ships else "") + ".",
    ]
    if unkept:
        situation.append(f"Ships owing upkeep: {', '.join(unkept)}.")
    situation.append(f"You can build at: {', '.join(sites)}." if sites else "You cannot build a ship now.")
    return Prompt(
        who=nation.lower(),
        player_id=n.player_id,
        step=SHIP_STEP,
        question=(
            "Step 3a, ship construction: each ship already on the board costs 1 upkeep (treasury, or a token levied "
            "where it stands); a new ship costs 2 (treasury and/or tokens of the coastal area where you build it); "
            "at most 4 ships. Orders: KEEP <area> [LEVY], SCRAP <area>, SHIP <area> [LEVY [n]]; end with HALT."
        ),
        choices=_spread(choices),
        template="\n".join(template),
        default=(
            "no ship is built; upkeep for each ship not yet kept or scrapped is paid from treasury while it lasts, "
            "then with a token levied from the ship's area, and a ship nobody can pay for returns to stock"
        ),
        situation=tuple(situation),
        cites=CITE_BUILD + ("§22.2", "§22.11"),
    )


def _move_prompt(state: GameState, nation: str) -> Prompt:
    n = state.nations[nation]
    rules = ruleset_of(state)
    choices = ["HALT"]
    tokens = {a: movable(state, nation, a) for a in state.areas if movable(state, nation, a) > 0}
    for area, count in tokens.items():
        choices += [f"MOVE {count} {area} {to}\nHALT" for to in land_neighbours(state, area)]
    ships = {a: free_ships(state, nation, a) for a in state.areas if free_ships(state, nation, a) > 0}
    for area in ships:
        load = min(tokens.get(area, 0), rules.numbers["ship_capacity"])
        choices += [f"SAIL {load} {area} {to}\nHALT" for to in sail_destinations(state, nation, area)]
    cards = [c for c in ("Roadbuilding", "Cloth Making", "Astronomy", "Military") if c in n.civ_cards]
    order = _queue(state, MOVES)
    situation = [
        "Your tokens that may move: " + (", ".join(f"{a} {c}" for a, c in tokens.items()) or "none") + ".",
        "Your ships that may sail: " + (", ".join(f"{a} {c}" for a, c in ships.items()) or "none") + ".",
        "Order of movement: " + ", ".join(order) + ".",
    ]
    if cards:
        situation.append("Your cards that matter here: " + ", ".join(cards) + ".")
    example = next(iter(tokens), None)
    template = []
    if example:
        to = (land_neighbours(state, example) or [example])[0]
        template.append(f"MOVE {tokens[example]} {example} {to}")
    if ships:
        area = max(ships, key=lambda a: (tokens.get(a, 0), a))
        to = (sail_destinations(state, nation, area) or [area])[0]
        template.append(f"SAIL {min(tokens.get(area, 0), rules.numbers['ship_capacity'])} {area} {to}")
    template.append("HALT")
    return Prompt(
        who=nation.lower(),
        player_id=n.player_id,
        step=MOVE_STEP,
        question=(
            "Step 3b, movement: each token moves once, into a neighbouring land area"
            f"{' (or two, through an area free of other units: Roadbuilding)' if land_range(state, nation) > 1 else ''}"
            f" or aboard a ship; a ship carries up to {rules.numbers['ship_capacity']} tokens of its "
            f"area up to {ship_range(state, nation)} water areas to a coast"
            f"{'' if crosses_open_sea(state, nation) else ', never through open sea (Astronomy)'}. Entering an area "
            "with another player's or a pirate city attacks it (the conflict phase resolves it). Orders, one a line: "
            "MOVE <n> <from> <to>, SAIL <n> <from> <to>; end with HALT."
        ),
        choices=_spread(choices),
        template="\n".join(template),
        default="your movement ends: moves already accepted stand, every other token and ship stays where it is",
        situation=tuple(situation),
        cites=CITE_LAND + ("§23.21", "seed 002: [Attacking a city]"),
    )


def pending(state: GameState) -> dict[str, Prompt]:
    nation = current_nation(state)
    if nation is None:
        return {}
    prompt = _ship_prompt(state, nation) if state.step == SHIPS else _move_prompt(state, nation)
    return {prompt.who: prompt}


# -- deciding -----------------------------------------------------------------------------


def _acting(state: GameState, player_id: int, step: str) -> str:
    """The nation giving this order, when it is its turn in ``step``; otherwise a clear refusal."""
    nation = acting_nation(state, player_id)
    what = "ships are built and kept" if step == SHIPS else "tokens and ships move"
    if state.phase != PHASE or state.step not in (SHIPS, MOVES):
        raise Rejection(f"{what} only in phase 3 (movement)", "R-2.2" if step == SHIPS else "§23")
    if state.step != step:
        if step == SHIPS:
            raise Rejection("ship construction (step 3a) is over: every nation has built; tokens move now", "R-2.2")
        raise Rejection("tokens move in step 3b, after every nation has finished with its ships (HALT)", "R-2.2")
    current = current_nation(state)
    if current != nation:
        raise Rejection(f"it is {current}'s turn; you act in census order ({', '.join(_order(state))})", "§23.21")
    return nation


def decide_build(state: GameState, command: BuildShip) -> list[Event]:
    nation = _acting(state, command.player_id, SHIPS)
    n = state.nations[nation]
    rules = ruleset_of(state)
    area = command.area
    if not _coastal(state, area):
        raise Rejection(f"{area} has no sea coast: ships are built only in coastal areas", "§22.3")
    if state.ships_on_board(nation) >= rules.ships_per_nation:
        raise Rejection(f"you already have {rules.ships_per_nation} ships on the board, the most allowed; SCRAP one first", "§22.4")
    cost = rules.numbers["ship_cost"]
    if command.levy is not None and not 0 <= command.levy <= cost:
        raise Rejection(f"a ship costs {cost}: levy 0 to {cost} tokens", "§22.1")
    treasury, levy = _build_payment(state, nation, area, command.levy)
    here = state.area(area).tokens.get(nation, 0)
    if levy > here:
        if command.levy is None:
            raise Rejection(f"a ship costs {cost}: your treasury holds {n.treasury} and you have {here} tokens in {area}", "§22.1")
        raise Rejection(f"you have only {here} tokens in {area} to levy", "§22.1")
    if treasury > n.treasury:
        raise Rejection(f"your treasury holds only {n.treasury}; levy more tokens (SHIP {area} LEVY {cost - n.treasury})", "§22.1")
    if levy == 0 and here == 0 and state.area(area).city != nation:
        raise Rejection(f"a ship paid from treasury goes where you have a token or a city; you have none in {area}", "§22.3")
    return [Event("ShipBuilt", {"nation": nation, "area": area, "treasury": treasury, "levy": levy}, CITE_BUILD)]


def decide_keep(state: GameState, command: KeepShip) -> list[Event]:
    nation = _acting(state, command.player_id, SHIPS)
    area = command.area
    if area not in _unkept(state, nation):
        owing = ", ".join(_unkept(state, nation)) or "none"
        raise Rejection(f"no ship of yours in {area} owes upkeep (ships owing upkeep: {owing})", "§22.2")
    upkeep = _numbers(state)["ship_upkeep"]
    here = state.area(area).tokens.get(nation, 0)
    levy = command.levy or state.nations[nation].treasury < upkeep
    if levy and here < upkeep:
        raise Rejection(f"you have no token in {area} to pay the upkeep and not enough treasury; SCRAP the ship", "§22.2")
    data = {"nation": nation, "area": area, "treasury": 0 if levy else upkeep, "levy": upkeep if levy else 0}
    return [Event("ShipKept", data, CITE_UPKEEP)]


def decide_scrap(state: GameState, command: ScrapShip) -> list[Event]:
    nation = _acting(state, command.player_id, SHIPS)
    if state.area(command.area).ships.get(nation, 0) < 1:
        raise Rejection(f"you have no ship in {command.area}", "§22.2")
    return [Event("ShipScrapped", {"nation": nation, "area": command.area}, CITE_UPKEEP)]


def decide_end(state: GameState, command: EndMoves) -> list[Event]:
    if state.phase != PHASE or state.step not in (SHIPS, MOVES):
        raise Rejection("HALT ends your ship orders (3a) or your movement (3b) in phase 3; nothing is waiting for it now", "R-2.2")
    step = state.step
    nation = _acting(state, command.player_id, step)
    kind = "ShipOrdersDone" if step == SHIPS else "MovesDone"
    return [Event(kind, {"nation": nation}, ("R-2.2",) if step == SHIPS else ("R-2.6",))]


def _attacks(state: GameState, nation: str, area: str) -> list[Event]:
    city = state.area(area).city
    if city is None or city == nation or _filed_count(state, f"attacked:{nation}:{area}"):
        return []
    data = {"attacker": nation, "area": area, "defender": city, "pirate": city not in state.nations}
    return [Event("CityAttacked", data, CITE_ATTACK)]


def _count(state: GameState, nation: str, area: str, wanted: int | None, most: int | None = None) -> int:
    """How many tokens an order moves from ``area``, refusing more than may move."""
    free = movable(state, nation, area)
    here = state.area(area).tokens.get(nation, 0)
    count = wanted if wanted is not None else (free if most is None else min(free, most))
    if here == 0 and count:
        raise Rejection(f"you have no tokens in {area}", "§23")
    if count > free:
        if free < here:
            raise Rejection(
                f"only {free} of your {here} tokens in {area} have not moved yet; a token moves once a turn", "§23.56"
            )
        raise Rejection(f"you have only {here} tokens in {area}", "§23")
    return count


def decide_move(state: GameState, command: MoveTokens) -> list[Event]:
    nation = _acting(state, command.player_id, MOVES)
    rules = ruleset_of(state)
    origin, destination = command.origin, command.destination
    if origin == destination:
        raise Rejection("a move must go to another area", "§23")
    if destination not in _in_play(state):
        raise Rejection(f"{destination} is not in play in a game of {len(state.players)} players", "§16")
    count = _count(state, nation, origin, command.count)
    if count < 1:
        raise Rejection(f"none of your tokens in {origin} can move", "§23")
    via = None
    if destination not in rules.land_adjacency.get(origin, ()):
        near = ", ".join(land_neighbours(state, origin))
        if land_range(state, nation) < 2:
            raise Rejection(
                f"{destination} does not border {origin} by land; a token moves one land area ({origin} borders {near}); "
                "use SAIL to go by ship", "§23"
            )
        between = _pass_through(state, nation, origin, destination)
        if not between:
            common = rules.land_adjacency.get(origin, frozenset()) & rules.land_adjacency.get(destination, frozenset())
            if not common:
                raise Rejection(f"{destination} is more than two land areas from {origin}, even with Roadbuilding", "§23.31")
            raise Rejection(
                f"with Roadbuilding a token passes through one area free of other players' units, Barbarians and "
                f"pirate cities; {', '.join(sorted(common))} between {origin} and {destination} is not free", "§23.31"
            )
        via = between[0]
    data: dict[str, Any] = {"nation": nation, "from": origin, "to": destination, "count": count}
    if via:
        data["via"] = via
    return [Event("TokensMoved", data, CITE_ROAD if via else CITE_LAND)] + _attacks(state, nation, destination)


def decide_sail(state: GameState, command: SailShip) -> list[Event]:
    nation = _acting(state, command.player_id, MOVES)
    rules = ruleset_of(state)
    origin, destination = command.origin, command.destination
    capacity = rules.numbers["ship_capacity"]
    if state.area(origin).ships.get(nation, 0) < 1:
        raise Rejection(f"you have no ship in {origin}", "§23.5")
    if free_ships(state, nation, origin) < 1:
        raise Rejection(f"your ship in {origin} has already sailed this turn; a ship moves once", "§23.56")
    if command.count is not None and command.count > capacity:
        raise Rejection(f"a ship carries at most {capacity} tokens", "§23.5")
    count = _count(state, nation, origin, command.count, capacity)
    if origin == destination:
        raise Rejection("a ship must sail to another area", "§23.5")
    if destination not in rules.areas or not rules.areas[destination].coastal or destination not in _in_play(state):
        raise Rejection(f"{destination} has no coast in play: a ship ends its move at a coastal land area", "§23.55")
    reach = ship_range(state, nation)
    astronomy = crosses_open_sea(state, nation)
    path = _route(state, origin, destination, astronomy)
    if path is None:
        if not astronomy and _route(state, origin, destination, True) is not None:
            raise Rejection(
                f"every water route from {origin} to {destination} crosses open sea, which only Astronomy allows", "§23.54"
            )
        raise Rejection(f"there is no water route from {origin} to {destination}", "§23.5")
    if len(path) - 1 > reach:
        shorter = "" if reach > rules.numbers["ship_range"] else " (5 with Cloth Making)"
        message = f"{destination} is {len(path) - 1} water areas from {origin}; your ships move at most {reach}{shorter}"
        open_path = None if astronomy else _route(state, origin, destination, True)
        if open_path is not None and len(open_path) - 1 <= reach:
            message += f"; across open sea it is {len(open_path) - 1}, but only Astronomy allows that"
            raise Rejection(message, "§23.54")
        raise Rejection(message, "§23.53")
    data = {"nation": nation, "from": origin, "to": destination, "count": count, "route": path}
    cites = CITE_SHIP + (("§23.53",) if reach > rules.numbers["ship_range"] else ())
    if any(p in rules.waters and rules.waters[p].open_sea for p in path):
        cites += ("§23.52", "§23.54")
    return [Event("TokensSailed", data, cites)] + (_attacks(state, nation, destination) if count else [])


def defaults(state: GameState, prompt: Prompt) -> list[Event]:
    nation = current_nation(state)
    if nation is None or nation.lower() != prompt.who:
        return []
    kind = "ShipOrdersDone" if state.step == SHIPS else "MovesDone"
    return [Event(kind, {"nation": nation, "by_default": True}, ("R-2.2",) if state.step == SHIPS else ("R-2.6",))]


# -- resolving --------------------------------------------------------------------------


def _upkeep(state: GameState, nation: str) -> Event:
    """Upkeep for ships nobody kept or scrapped: treasury first, then a levy there, else the ship goes."""
    upkeep = _numbers(state)["ship_upkeep"]
    treasury = state.nations[nation].treasury
    tokens = {a: state.area(a).tokens.get(nation, 0) for a in _unkept(state, nation)}
    paid, lost = [], []
    for area in sorted(_unkept(state, nation)):
        if treasury >= upkeep:
            treasury -= upkeep
            paid.append({"area": area, "treasury": upkeep, "levy": 0})
        elif tokens[area] >= upkeep:
            tokens[area] -= upkeep
            paid.append({"area": area, "treasury": 0, "levy": upkeep})
        else:
            lost.append(area)
    return Event("UpkeepCollected", {"nation": nation, "paid": paid, "lost": lost}, CITE_UPKEEP)


def settle(state: GameState, draws: Draws) -> list[Event]:
    if state.step == "":
        if not any(state.tokens_on_board(n) or state.ships_on_board(n) for n in state.nations):
            return [phase_ended(PHASE, ("R-2.5", "§18.2"))]
        order = census_order(state)
        upkeep = {n: _ship_areas(state, n) for n in state.nations if state.ships_on_board(n)}
        asked = [n for n in order if _eligible(state, n, SHIPS)]
        return [Event("MovementOrderFixed", {"order": order, "asked": asked, "upkeep": upkeep}, CITE_ORDER)]
    if state.step == SHIPS:
        for nation in _done(state, SHIPS):
            if _unkept(state, nation):
                return [_upkeep(state, nation)]
        if current_nation(state) is not None:
            return []
        asked = [n for n in _order(state) if n in state.nations and _eligible(state, n, MOVES)]
        return [Event("ShipConstructionEnded", {"asked": asked}, ("R-2.2", "R-2.6"))]
    if state.step == MOVES:
        if current_nation(state) is not None:
            return []
        return [phase_ended(PHASE, ("§23",))]
    return [phase_ended(PHASE)]


# -- telling -------------------------------------------------------------------------------


def _paid(d: dict[str, Any]) -> str:
    parts = []
    if d["treasury"]:
        parts.append(f"{d['treasury']} from treasury")
    if d["levy"]:
        parts.append(f"{d['levy']} token{'s' if d['levy'] > 1 else ''} levied there")
    return " and ".join(parts) or "nothing"


def _tell_upkeep(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    parts = [f"{p['area']} ({_paid(p)})" for p in d["paid"]]
    text = f"{d['nation']} paid upkeep for ships in " + (", ".join(parts) if parts else "no area")
    if d["lost"]:
        text += f"; ships it could not pay for returned to stock: {', '.join(d['lost'])}"
    return text + "."


def _tell_moved(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    via = f" through {d['via']} (Roadbuilding)" if d.get("via") else ""
    return f"{d['nation']} moved {d['count']} token{'s' if d['count'] != 1 else ''} from {d['from']} to {d['to']}{via}."


def _tell_sailed(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    route = " > ".join(d["route"])
    return f"{d['nation']} sailed a ship with {d['count']} token{'s' if d['count'] != 1 else ''} from {d['from']} to {d['to']} ({route})."


def _tell_attacked(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    whose = "the pirate city" if d["pirate"] else f"{d['defender']}'s city"
    return f"{d['attacker']} entered {d['area']}, attacking {whose}; the attack is resolved in the conflict phase."


RULES = PhaseRules(
    name=PHASE,
    apply={
        "MovementOrderFixed": apply_order_fixed,
        "ShipBuilt": apply_built,
        "ShipKept": apply_kept,
        "ShipScrapped": apply_scrapped,
        "ShipOrdersDone": apply_done,
        "UpkeepCollected": apply_upkeep,
        "ShipConstructionEnded": apply_ships_ended,
        "TokensMoved": apply_moved,
        "TokensSailed": apply_sailed,
        "CityAttacked": apply_attacked,
        "MovesDone": apply_done,
    },
    decide={
        BuildShip: decide_build,
        KeepShip: decide_keep,
        ScrapShip: decide_scrap,
        MoveTokens: decide_move,
        SailShip: decide_sail,
        EndMoves: decide_end,
    },
    pending=pending,
    defaults=defaults,
    settle=settle,
    inputs={
        "ShipBuilt": lambda s, d: BuildShip(s.nations[d["nation"]].player_id, d["area"], d["levy"]),
        "ShipKept": lambda s, d: KeepShip(s.nations[d["nation"]].player_id, d["area"], d["levy"] > 0),
        "ShipScrapped": lambda s, d: ScrapShip(s.nations[d["nation"]].player_id, d["area"]),
        "ShipOrdersDone": lambda s, d: EndMoves(s.nations[d["nation"]].player_id),
        "TokensMoved": lambda s, d: MoveTokens(s.nations[d["nation"]].player_id, d["count"], d["from"], d["to"]),
        "TokensSailed": lambda s, d: SailShip(s.nations[d["nation"]].player_id, d["count"], d["from"], d["to"]),
        "MovesDone": lambda s, d: EndMoves(s.nations[d["nation"]].player_id),
    },
    narrate={
        "MovementOrderFixed": lambda s, e, v: "Order of ship building and movement (census, Military last): "
        + ", ".join(e.data["order"]) + ".",
        "ShipBuilt": lambda s, e, v: f"{e.data['nation']} built a ship in {e.data['area']} ({_paid(e.data)}).",
        "ShipKept": lambda s, e, v: f"{e.data['nation']} paid upkeep for its ship in {e.data['area']} ({_paid(e.data)}).",
        "ShipScrapped": lambda s, e, v: f"{e.data['nation']} gave up its ship in {e.data['area']}; it returns to stock.",
        "ShipOrdersDone": lambda s, e, v: f"{e.data['nation']} finished with its ships"
        + (" (deadline passed)." if e.data.get("by_default") else "."),
        "UpkeepCollected": _tell_upkeep,
        "ShipConstructionEnded": lambda s, e, v: "Ship construction is over; movement begins.",
        "TokensMoved": _tell_moved,
        "TokensSailed": _tell_sailed,
        "CityAttacked": _tell_attacked,
        "MovesDone": lambda s, e, v: f"{e.data['nation']} finished moving"
        + (" (deadline passed: nothing more moves)." if e.data.get("by_default") else "."),
    },
)

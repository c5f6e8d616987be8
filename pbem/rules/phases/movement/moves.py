"""Phase 3b: tokens move by land or aboard ships (§23; Q-S1; seed 002: [Attacking a city]).

A token moves once; a ship moves once, with up to 5 tokens of its area, to a
coast where every token goes ashore. Entering an area holding another
player's city (or a pirate city) is an attack, resolved in phase 4.
"""

from __future__ import annotations

from typing import Any

from pbem.rules.core.events import Event
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.movement.routes import (
    areas_in_play,
    crosses_open_sea,
    land_neighbours,
    land_range,
    pass_through,
    sail_destinations,
    ship_range,
    ship_route,
)
from pbem.rules.phases.movement.ships import add_ship
from pbem.rules.phases.movement.turns import (
    CITE_ATTACK,
    CITE_LAND,
    CITE_ROAD,
    CITE_SHIP,
    MOVE_STEP,
    MOVES,
    MoveTokens,
    SailShip,
    acting_in_step,
    add_filed,
    asked_in_step,
    filed_count,
    free_ships,
    movable,
    spread_choices,
)
from pbem.rules.ruleset.rulebook import ruleset_of


def _move(state: GameState, nation: str, origin: str, destination: str, count: int) -> GameState:
    state = state.with_area(origin, state.area(origin).add_tokens(nation, -count))
    state = state.with_area(destination, state.area(destination).add_tokens(nation, count))
    return add_filed(state, f"arrived:{nation}:{destination}", count)


def apply_moved(state: GameState, data: dict[str, Any]) -> GameState:
    return _move(state, data["nation"], data["from"], data["to"], data["count"])


def apply_sailed(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    if data["count"]:
        state = _move(state, nation, data["from"], data["to"], data["count"])
    state = add_ship(add_ship(state, nation, data["from"], -1), nation, data["to"], 1)
    return add_filed(state, f"sailed:{nation}:{data['to']}", 1)


def apply_attacked(state: GameState, data: dict[str, Any]) -> GameState:
    return add_filed(state, f"attacked:{data['attacker']}:{data['area']}", 1)


def move_prompt(state: GameState, nation: str) -> Prompt:
    n = state.nations[nation]
    rules = ruleset_of(state)
    choices = ["HALT"]
    menu: list[str] = []
    tokens = {a: movable(state, nation, a) for a in state.areas if movable(state, nation, a) > 0}
    for area, count in tokens.items():
        near = land_neighbours(state, area)
        choices += [f"MOVE {count} {area} {to}\nHALT" for to in near]
        if near:
            menu.append(f"MOVE up to {count} from {area} to: {', '.join(near)}")
    ships = {a: free_ships(state, nation, a) for a in state.areas if free_ships(state, nation, a) > 0}
    for area in ships:
        load = min(tokens.get(area, 0), rules.numbers["ship_capacity"])
        reach = sail_destinations(state, nation, area)
        choices += [f"SAIL {load} {area} {to}\nHALT" for to in reach]
        if reach and load:
            menu.append(f"SAIL up to {load} from {area} to: {', '.join(reach)}")
    menu.append("HALT when your movement is done")
    cards = [c for c in ("Roadbuilding", "Cloth Making", "Astronomy", "Military") if c in n.civ_cards]
    order = asked_in_step(state, MOVES)
    situation = [
        "Your tokens that may move: " + (", ".join(f"{a} {c}" for a, c in tokens.items()) or "none") + ".",
        "Your ships that may sail: " + (", ".join(f"{a} {c}" for a, c in ships.items()) or "none") + ".",
        "Order of movement: " + ", ".join(order) + ".",
    ]
    towns = {a: here.towns[nation] for a, here in sorted(state.areas.items()) if here.towns.get(nation)}
    if towns:  # Small Cities: shown so the player knows what stays (SC-14)
        situation.insert(1, "Your towns, which never move: " + ", ".join(f"{a} {c}" for a, c in towns.items()) + ".")
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
        choices=spread_choices(choices),
        template="\n".join(template),
        default="your movement ends: moves already accepted stand, every other token and ship stays where it is",
        situation=tuple(situation),
        cites=CITE_LAND + ("§23.21", "seed 002: [Attacking a city]"),
        menu=tuple(menu),
    )


def _attacks(state: GameState, nation: str, area: str) -> list[Event]:
    city = state.area(area).city
    if city is None or city == nation or filed_count(state, f"attacked:{nation}:{area}"):
        return []
    data = {"attacker": nation, "area": area, "defender": city, "pirate": city not in state.nations}
    return [Event("CityAttacked", data, CITE_ATTACK)]


def _count(state: GameState, nation: str, area: str, wanted: int | None, most: int | None = None) -> int:
    """How many tokens an order moves from ``area``, refusing more than may move."""
    free = movable(state, nation, area)
    here = state.area(area).tokens.get(nation, 0)
    count = wanted if wanted is not None else (free if most is None else min(free, most))
    towns = state.area(area).towns.get(nation, 0)
    if towns and count > free:  # Small Cities: the towns stand where they are (SC-14)
        raise Rejection(f"only {free} of your tokens in {area} may move; your {towns} towns there never move", "SC-14")
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
    nation = acting_in_step(state, command.player_id, MOVES)
    rules = ruleset_of(state)
    origin, destination = command.origin, command.destination
    if origin == destination:
        raise Rejection("a move must go to another area", "§23")
    if destination not in areas_in_play(state):
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
        between = pass_through(state, nation, origin, destination)
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
    nation = acting_in_step(state, command.player_id, MOVES)
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
    if destination not in rules.areas or not rules.areas[destination].coastal or destination not in areas_in_play(state):
        raise Rejection(f"{destination} has no coast in play: a ship ends its move at a coastal land area", "§23.55")
    reach = ship_range(state, nation)
    astronomy = crosses_open_sea(state, nation)
    path = ship_route(state, origin, destination, astronomy)
    if path is None:
        if not astronomy and ship_route(state, origin, destination, True) is not None:
            raise Rejection(
                f"every water route from {origin} to {destination} crosses open sea, which only Astronomy allows", "§23.54"
            )
        raise Rejection(f"there is no water route from {origin} to {destination}", "§23.5")
    if len(path) - 1 > reach:
        shorter = "" if reach > rules.numbers["ship_range"] else " (5 with Cloth Making)"
        message = f"{destination} is {len(path) - 1} water areas from {origin}; your ships move at most {reach}{shorter}"
        open_path = None if astronomy else ship_route(state, origin, destination, True)
        if open_path is not None and len(open_path) - 1 <= reach:
            message += f"; across open sea it is {len(open_path) - 1}, but only Astronomy allows that"
            raise Rejection(message, "§23.54")
        raise Rejection(message, "§23.53")
    data = {"nation": nation, "from": origin, "to": destination, "count": count, "route": path}
    cites = CITE_SHIP + (("§23.53",) if reach > rules.numbers["ship_range"] else ())
    if any(p in rules.waters and rules.waters[p].open_sea for p in path):
        cites += ("§23.52", "§23.54")
    return [Event("TokensSailed", data, cites)] + (_attacks(state, nation, destination) if count else [])


def tell_moved(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    via = f" through {d['via']} (Roadbuilding)" if d.get("via") else ""
    return f"{d['nation']} moved {d['count']} token{'s' if d['count'] != 1 else ''} from {d['from']} to {d['to']}{via}."


def tell_sailed(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    route = " > ".join(d["route"])
    return f"{d['nation']} sailed a ship with {d['count']} token{'s' if d['count'] != 1 else ''} from {d['from']} to {d['to']} ({route})."


def tell_attacked(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    whose = "the pirate city" if d["pirate"] else f"{d['defender']}'s city"
    return f"{d['attacker']} entered {d['area']}, attacking {whose}; the attack is resolved in the conflict phase."

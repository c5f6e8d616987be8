"""Phase 3a: ship construction and upkeep (§22; R-2.2).

Each ship already on the board owes 1 upkeep (treasury, or a token levied
from its area); a ship not kept or scrapped by HALT is paid for treasury
first, then by levy, else it returns to stock. A new ship costs 2 (treasury
and/or tokens levied from the coastal area where it is built).
"""

from __future__ import annotations

from typing import Any

from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.movement.routes import (
    build_payment,
    build_sites,
    coastal_in_play,
    rule_numbers,
    ship_areas,
)
from pbem.rules.phases.movement.turns import (
    CITE_BUILD,
    CITE_UPKEEP,
    SHIP_STEP,
    SHIPS,
    BuildShip,
    KeepShip,
    ScrapShip,
    acting_in_step,
    spread_choices,
    unkept_ships,
)
from pbem.rules.ruleset.rulebook import ruleset_of


def _pay(state: GameState, nation: str, area: str, treasury: int, levy: int) -> GameState:
    n = state.nations[nation]
    state = state.with_nation(replace(n, treasury=n.treasury - treasury, stock=n.stock + treasury + levy))
    if levy:
        state = state.with_area(area, state.area(area).add_tokens(nation, -levy))
    return state


def add_ship(state: GameState, nation: str, area: str, count: int) -> GameState:
    a = state.area(area)
    left = a.ships.get(nation, 0) + count
    ships = a.ships.set(nation, left) if left else a.ships.without(nation)
    return state.with_area(area, replace(a, ships=ships))


def _strike_unkept(state: GameState, nation: str, area: str) -> GameState:
    unkept = unkept_ships(state, nation)
    if area in unkept:
        unkept.remove(area)
    return replace(state, filed=state.filed.set(f"unkept:{nation}", tuple(unkept)))


def apply_built(state: GameState, data: dict[str, Any]) -> GameState:
    state = _pay(state, data["nation"], data["area"], data["treasury"], data["levy"])
    return add_ship(state, data["nation"], data["area"], 1)


def apply_kept(state: GameState, data: dict[str, Any]) -> GameState:
    state = _pay(state, data["nation"], data["area"], data["treasury"], data["levy"])
    return _strike_unkept(state, data["nation"], data["area"])


def apply_scrapped(state: GameState, data: dict[str, Any]) -> GameState:
    state = add_ship(state, data["nation"], data["area"], -1)
    return _strike_unkept(state, data["nation"], data["area"])


def apply_upkeep(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    for paid in data["paid"]:
        state = _pay(state, nation, paid["area"], paid["treasury"], paid["levy"])
    for area in data["lost"]:
        state = add_ship(state, nation, area, -1)
    return replace(state, filed=state.filed.without(f"unkept:{nation}"))


def ship_prompt(state: GameState, nation: str) -> Prompt:
    n = state.nations[nation]
    unkept = unkept_ships(state, nation)
    sites = build_sites(state, nation)
    ships = ship_areas(state, nation)
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
        choices=spread_choices(choices),
        template="\n".join(template),
        default=(
            "no ship is built; upkeep for each ship not yet kept or scrapped is paid from treasury while it lasts, "
            "then with a token levied from the ship's area, and a ship nobody can pay for returns to stock"
        ),
        situation=tuple(situation),
        cites=CITE_BUILD + ("§22.2", "§22.11"),
    )


def decide_build(state: GameState, command: BuildShip) -> list[Event]:
    nation = acting_in_step(state, command.player_id, SHIPS)
    n = state.nations[nation]
    rules = ruleset_of(state)
    area = command.area
    if not coastal_in_play(state, area):
        raise Rejection(f"{area} has no sea coast: ships are built only in coastal areas", "§22.3")
    if state.ships_on_board(nation) >= rules.ships_per_nation:
        raise Rejection(f"you already have {rules.ships_per_nation} ships on the board, the most allowed; SCRAP one first", "§22.4")
    cost = rules.numbers["ship_cost"]
    if command.levy is not None and not 0 <= command.levy <= cost:
        raise Rejection(f"a ship costs {cost}: levy 0 to {cost} tokens", "§22.1")
    treasury, levy = build_payment(state, nation, area, command.levy)
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
    nation = acting_in_step(state, command.player_id, SHIPS)
    area = command.area
    if area not in unkept_ships(state, nation):
        owing = ", ".join(unkept_ships(state, nation)) or "none"
        raise Rejection(f"no ship of yours in {area} owes upkeep (ships owing upkeep: {owing})", "§22.2")
    upkeep = rule_numbers(state)["ship_upkeep"]
    here = state.area(area).tokens.get(nation, 0)
    levy = command.levy or state.nations[nation].treasury < upkeep
    if levy and here < upkeep:
        raise Rejection(f"you have no token in {area} to pay the upkeep and not enough treasury; SCRAP the ship", "§22.2")
    data = {"nation": nation, "area": area, "treasury": 0 if levy else upkeep, "levy": upkeep if levy else 0}
    return [Event("ShipKept", data, CITE_UPKEEP)]


def decide_scrap(state: GameState, command: ScrapShip) -> list[Event]:
    nation = acting_in_step(state, command.player_id, SHIPS)
    if state.area(command.area).ships.get(nation, 0) < 1:
        raise Rejection(f"you have no ship in {command.area}", "§22.2")
    return [Event("ShipScrapped", {"nation": nation, "area": command.area}, CITE_UPKEEP)]


def upkeep_event(state: GameState, nation: str) -> Event:
    """Upkeep for ships nobody kept or scrapped: treasury first, then a levy there, else the ship goes."""
    upkeep = rule_numbers(state)["ship_upkeep"]
    treasury = state.nations[nation].treasury
    tokens = {a: state.area(a).tokens.get(nation, 0) for a in unkept_ships(state, nation)}
    paid, lost = [], []
    for area in sorted(unkept_ships(state, nation)):
        if treasury >= upkeep:
            treasury -= upkeep
            paid.append({"area": area, "treasury": upkeep, "levy": 0})
        elif tokens[area] >= upkeep:
            tokens[area] -= upkeep
            paid.append({"area": area, "treasury": 0, "levy": upkeep})
        else:
            lost.append(area)
    return Event("UpkeepCollected", {"nation": nation, "paid": paid, "lost": lost}, CITE_UPKEEP)


def paid_text(d: dict[str, Any]) -> str:
    parts = []
    if d["treasury"]:
        parts.append(f"{d['treasury']} from treasury")
    if d["levy"]:
        parts.append(f"{d['levy']} token{'s' if d['levy'] > 1 else ''} levied there")
    return " and ".join(parts) or "nothing"


def tell_upkeep(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    parts = [f"{p['area']} ({paid_text(p)})" for p in d["paid"]]
    text = f"{d['nation']} paid upkeep for ships in " + (", ".join(parts) if parts else "no area")
    if d["lost"]:
        text += f"; ships it could not pay for returned to stock: {', '.join(d['lost'])}"
    return text + "."

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

from pbem.rules.board.ranking import census_order
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.phase import PhaseRules, defaulted, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.movement.moves import (
    apply_attacked,
    apply_moved,
    apply_sailed,
    decide_move,
    decide_sail,
    move_prompt,
    tell_attacked,
    tell_moved,
    tell_sailed,
)
from pbem.rules.phases.movement.routes import ship_areas
from pbem.rules.phases.movement.ships import (
    apply_built,
    apply_kept,
    apply_scrapped,
    apply_upkeep,
    decide_build,
    decide_keep,
    decide_scrap,
    paid_text,
    ship_prompt,
    tell_upkeep,
    upkeep_event,
)
from pbem.rules.phases.movement.turns import (
    CITE_ORDER,
    MOVES,
    PHASE,
    SHIPS,
    BuildShip,
    EndMoves,
    KeepShip,
    MoveTokens,
    SailShip,
    ScrapShip,
    acting_in_step,
    apply_done,
    apply_order_fixed,
    apply_ships_ended,
    census_turns,
    current_nation,
    done_in_step,
    eligible_in_step,
    unkept_ships,
)

# -- who acts ---------------------------------------------------------------------------


def pending(state: GameState) -> dict[str, Prompt]:
    nation = current_nation(state)
    if nation is None:
        return {}
    prompt = ship_prompt(state, nation) if state.step == SHIPS else move_prompt(state, nation)
    return {prompt.who: prompt}


# -- deciding -----------------------------------------------------------------------------


def decide_end(state: GameState, command: EndMoves) -> list[Event]:
    if state.phase != PHASE or state.step not in (SHIPS, MOVES):
        raise Rejection("HALT ends your ship orders (3a) or your movement (3b) in phase 3; nothing is waiting for it now", "R-2.2")
    step = state.step
    nation = acting_in_step(state, command.player_id, step)
    kind = "ShipOrdersDone" if step == SHIPS else "MovesDone"
    return [Event(kind, {"nation": nation}, ("R-2.2",) if step == SHIPS else ("R-2.6",))]


def defaults(state: GameState, prompt: Prompt) -> list[Event]:
    nation = current_nation(state)
    if nation is None or nation.lower() != prompt.who:
        return []
    kind = "ShipOrdersDone" if state.step == SHIPS else "MovesDone"
    return [Event(kind, {"nation": nation, "by_default": True}, ("R-2.2",) if state.step == SHIPS else ("R-2.6",))]


# -- resolving --------------------------------------------------------------------------


def settle(state: GameState, draws: Draws) -> list[Event]:
    if state.step == "":
        if not any(state.tokens_on_board(n) or state.ships_on_board(n) for n in state.nations):
            return [phase_ended(PHASE, ("R-2.5", "§18.2"))]
        order = census_order(state)
        upkeep = {n: ship_areas(state, n) for n in state.nations if state.ships_on_board(n)}
        asked = [n for n in order if eligible_in_step(state, n, SHIPS)]
        return [Event("MovementOrderFixed", {"order": order, "asked": asked, "upkeep": upkeep}, CITE_ORDER)]
    if state.step == SHIPS:
        for nation in done_in_step(state, SHIPS):
            if unkept_ships(state, nation):
                return [upkeep_event(state, nation)]
        if current_nation(state) is not None:
            return []
        asked = [n for n in census_turns(state) if n in state.nations and eligible_in_step(state, n, MOVES)]
        return [Event("ShipConstructionEnded", {"asked": asked}, ("R-2.2", "R-2.6"))]
    if state.step == MOVES:
        if current_nation(state) is not None:
            return []
        return [phase_ended(PHASE, ("§23",))]
    return [phase_ended(PHASE)]


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
        "ShipBuilt": lambda s, e, v: f"{e.data['nation']} built a ship in {e.data['area']} ({paid_text(e.data)}).",
        "ShipKept": lambda s, e, v: f"{e.data['nation']} paid upkeep for its ship in {e.data['area']} ({paid_text(e.data)}).",
        "ShipScrapped": lambda s, e, v: f"{e.data['nation']} gave up its ship in {e.data['area']}; it returns to stock.",
        "ShipOrdersDone": lambda s, e, v: f"{e.data['nation']} finished with its ships"
        + (f" ({defaulted(e.data)})." if e.data.get("by_default") else "."),
        "UpkeepCollected": tell_upkeep,
        "ShipConstructionEnded": lambda s, e, v: "Ship construction is over; movement begins.",
        "TokensMoved": tell_moved,
        "TokensSailed": tell_sailed,
        "CityAttacked": tell_attacked,
        "MovesDone": lambda s, e, v: f"{e.data['nation']} finished moving"
        + (f" ({defaulted(e.data)}: nothing more moves)." if e.data.get("by_default") else "."),
    },
)

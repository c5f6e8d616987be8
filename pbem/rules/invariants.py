"""Facts that hold after every resolved step (DESIGN.md §7), checked in tests and bot games.

A failure names the nation and the numbers, so a broken rule is found from
the first game that breaks it.
"""

from __future__ import annotations

from pbem.rules.core.codec import check_encodable
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of


def broken_invariants(state: GameState) -> list[str]:
    if not state.nations:
        return []
    rules = ruleset_of(state)
    allotment = rules.setup_for(len(state.players)).tokens_per_player
    problems = []
    for name, nation in state.nations.items():
        on_board = state.tokens_on_board(name) + state.towns_on_board(name)  # a town is a token face down (SC-1)
        if nation.stock < 0 or nation.treasury < 0:
            problems.append(f"{name}: negative stock ({nation.stock}) or treasury ({nation.treasury})")
        if nation.stock + on_board + nation.treasury != allotment:
            problems.append(
                f"{name}: stock {nation.stock} + board {on_board} + treasury {nation.treasury} != {allotment}"
            )
        if state.cities_on_board(name) > rules.cities_per_nation:
            problems.append(f"{name}: {state.cities_on_board(name)} cities (at most {rules.cities_per_nation})")
        if state.ships_on_board(name) > rules.ships_per_nation:
            problems.append(f"{name}: {state.ships_on_board(name)} ships (at most {rules.ships_per_nation})")
    for area_name, area in state.areas.items():
        if any(count <= 0 for count in area.tokens.values()):
            problems.append(f"{area_name}: a nation is listed with no tokens")
        if any(count <= 0 for count in area.towns.values()):
            problems.append(f"{area_name}: a nation is listed with no towns")
        if area.towns and state.phase != "conflict" and (area.city is not None or sum(area.towns.values()) > 5):
            problems.append(f"{area_name}: towns beside a city or more than 5 towns (SC-5)")
    try:  # a snapshot may be taken after any event: the state must always encode
        check_encodable(state)
    except TypeError as exc:
        problems.append(f"state cannot be snapshotted: {exc}")
    return problems

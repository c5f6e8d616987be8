"""Events told as sentences, for reports and `pbem log`.

The same sentence serves a player's turn report and a moderator's audit, so
it names the rule clauses the event applied. A viewer is told only what that
viewer may know.
"""

from __future__ import annotations

from .events import Event
from .state import GameState

PHASE_TITLES = {
    "setup": "Nations and start areas",
    "tax-collection": "1. Tax collection",
    "population-expansion": "2. Population expansion",
    "movement": "3. Movement",
    "conflict": "4. Conflict",
    "city-construction": "5. City construction",
    "trade-card-acquisition": "6. Trade cards acquisition",
    "trade": "7. Trade",
    "calamity-selection": "8. Calamity selection",
    "calamity-resolution": "9. Calamity resolution",
    "special-abilities": "10. Special abilities",
    "surplus-removal": "11. Remove surplus population",
    "civilization-advances": "12. Civilization advances acquisition",
    "ast-alteration": "13. A.S.T. alteration",
}


def _name(state: GameState, player_id: int) -> str:
    try:
        return state.player(player_id).name
    except KeyError:
        return f"player {player_id}"


def describe_event(state: GameState, event: Event, viewer: str = "auditor") -> str | None:
    """One line for ``event`` as seen by ``viewer``; None for bookkeeping nobody needs to read."""
    d = event.data
    default = " (by default: no orders by the deadline)" if d.get("by_default") else ""
    if event.type == "GameCreated":
        names = ", ".join(p["name"] + (f" ({p['nation']})" if p["nation"] else "") for p in d["players"])
        return f"Game {d['game']} created for {names}; seed commitment {d['seed_commitment'][:16]}."
    if event.type == "PlaceCardsDealt":
        order = ", ".join(f"{i}. {_name(state, pid)}" for i, pid in enumerate(d["order"], start=1))
        return f"Place cards dealt: {order}."
    if event.type == "NationChosen":
        return f"{_name(state, d['player'])} chose {d['nation']}{default}."
    if event.type == "StartTokenPlaced":
        return f"{d['nation']} placed its first token in {d['area']}{default}."
    if event.type == "SetupCompleted":
        return "Setup is complete; turn 1 begins."
    if event.type == "DeadlinePassed":
        return f"The deadline passed ({d.get('by', 'clock')}); defaults were applied to missing orders."
    if event.type == "DeadlineSet":
        return None if viewer.startswith("player:") else f"Orders are due by {d['due']}."
    return f"{event.type}: {d}"

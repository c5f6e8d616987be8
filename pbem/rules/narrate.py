"""Events told as sentences, for reports and `pbem log`.

The same sentence serves a player's turn report and a moderator's audit, so
it names the rule clauses the event applied. A viewer is told only what that
viewer may know.
"""

from __future__ import annotations

from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState

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


def describe_event(state: GameState, event: Event, viewer: str = "auditor") -> str | None:
    """One line for ``event`` as seen by ``viewer``; None for bookkeeping nobody needs to read."""
    from pbem.rules.engine import NARRATE

    d = event.data
    if event.type == "DeadlinePassed":
        return f"The deadline passed ({d.get('by', 'clock')}); defaults were applied to missing orders."
    if event.type == "DeadlineSet":
        return None if viewer.startswith("player:") else f"Orders are due by {d['due']}."
    tell = NARRATE.get(event.type)
    return tell(state, event, viewer) if tell else f"{event.type}: {dict(d)}"

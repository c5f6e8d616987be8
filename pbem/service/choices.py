"""What became of a player's list of choices, for his acknowledgement.

A calamity that takes several cities may be answered in one message with
the cities in order of preference (`PICK Ur, Elam, Susa`): the engine takes
them as it needs them, passes over those not legal when their turn comes,
and keeps the rest for the next time it asks (pbem/rules/phases/calamities/
preferences.py). The acknowledgement says which were used and which not,
in the same sentences as the turn report, as the player may read them.
"""

from __future__ import annotations

from collections.abc import Sequence

from pbem.rules import engine as rules
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState

#: The events that tell what the engine did with a list of choices.
TOLD = frozenset({"CalamityCitiesChosen", "CalamityCitiesPreferred", "CalamityPreferencesUnused"})


def what_became(state: GameState, events: Sequence[Event], viewer: str) -> list[str]:
    """One sentence per choice event among ``events`` (decided on ``state``), as ``viewer`` may read it."""
    told = []
    for event in events:
        if event.type in TOLD:
            text = rules.describe_event(state, event, viewer)
            if text:
                told.append(text)
    return told

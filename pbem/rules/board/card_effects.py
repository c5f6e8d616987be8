"""What a nation's civilization cards do: their machine-readable effects (ruleset `civ_cards.json`).

Several phases ask the same question of a nation's cards ("does one of them
raise the population limit, and by how much?"); they ask it here.
"""

from __future__ import annotations

from typing import Any

from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of


def card_effects(state: GameState, nation: str, kind: str) -> list[Any]:
    """The effects of one kind among the civilization cards the nation holds."""
    cards = ruleset_of(state).civ_cards
    return [e for c in state.nations[nation].civ_cards if c in cards for e in cards[c].effects_of(kind)]

"""The game turn: thirteen phases in the order of seed 003 (RULINGS.md §2.1).

A phase ends with a ``PhaseEnded`` event from its own module; the turn then
begins the next phase (``PhaseBegan``), and after phase 13 the next turn. A
phase this engine cannot play yet is still begun, so the log and every view
say exactly where the game stands, and nothing after it happens.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pbem.rules.core.events import Event
from pbem.rules.core.frozen import FrozenMap
from pbem.rules.ruleset.options import option
from pbem.rules.core.phase import PhaseRules
from pbem.rules.core.state import GameState

#: (phase id, the seed 003 phase list entry it implements)
TURN_PHASES: tuple[tuple[str, str], ...] = (
    ("tax-collection", "seed 003: 1"),
    ("population-expansion", "seed 003: 2"),
    ("movement", "seed 003: 3"),
    ("conflict", "seed 003: 4"),
    ("city-construction", "seed 003: 5"),
    ("trade-card-acquisition", "seed 003: 6"),
    ("trade", "seed 003: 7"),
    ("calamity-selection", "seed 003: 8"),
    ("calamity-resolution", "seed 003: 9"),
    ("special-abilities", "seed 003: 10"),
    ("surplus-removal", "seed 003: [11]"),
    ("civilization-advances", "seed 003: 12"),
    ("ast-alteration", "seed 003: 13"),
)
PHASE_IDS = tuple(p for p, _ in TURN_PHASES)


def next_phase(state: GameState) -> list[Event]:
    """The PhaseBegan that follows the phase just ended."""
    if state.phase not in PHASE_IDS:
        turn, index = 1, 0
    else:
        index = PHASE_IDS.index(state.phase) + 1
        turn = state.turn
        if index == len(PHASE_IDS):
            turn, index = turn + 1, 0
    phase, clause = TURN_PHASES[index]
    return [Event("PhaseBegan", {"turn": turn, "phase": phase}, (clause,))]


def unplayable(state: GameState) -> list[Event]:
    """A phase this engine cannot play: wait there, or skip it when the game's option says so."""
    if option(state.options, "unplayable-phases") != "skip":
        return []
    return [
        Event("PhaseSkipped", {"phase": state.phase, "reason": "this engine cannot play it yet"}),
        phase_ended(state.phase),
    ]


def phase_ended(phase: str, cites: tuple[str, ...] = ()) -> Event:
    return Event("PhaseEnded", {"phase": phase}, cites)


def _apply_began(state: GameState, data: dict[str, Any]) -> GameState:
    new_turn = data["turn"] != state.turn
    return replace(
        state,
        built_this_turn=() if new_turn else state.built_this_turn,
        gained_this_turn=() if new_turn else state.gained_this_turn,
        calamity_givers=() if new_turn else state.calamity_givers,
        turn=data["turn"],
        phase=data["phase"],
        step="",
        phase_began=state.version + 1,
        deadline=None,
        filed=FrozenMap(),
    )


def _apply_ended(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, step="ended", filed=FrozenMap())


def _tell_began(state: GameState, event: Event, viewer: str) -> str:
    from pbem.rules.narrate import PHASE_TITLES

    return f"Turn {event.data['turn']}: {PHASE_TITLES.get(event.data['phase'], event.data['phase'])} begins."


RULES = PhaseRules(
    name="turn",
    apply={"PhaseBegan": _apply_began, "PhaseEnded": _apply_ended, "PhaseSkipped": lambda s, d: s},
    narrate={
        "PhaseBegan": _tell_began,
        "PhaseEnded": lambda s, e, v: None,
        "PhaseSkipped": lambda s, e, v: f"Phase skipped: {e.data['phase']} ({e.data['reason']}; option unplayable-phases=skip).",
    },
)

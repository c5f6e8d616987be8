"""The game turn: thirteen phases in the order of seed 003 (RULINGS.md §2.1).

A phase ends with a ``PhaseEnded`` event (`core.phase.phase_ended`); the
turn then begins the next phase (``PhaseBegan``), and after phase 13 the next
turn. The phases are data (`TURN_PHASES`): the engine's table of which module
plays each is in `pbem.rules.engine`. A phase this engine cannot play yet is
still begun, so the log and every view say exactly where the game stands,
and nothing after it happens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.core.events import Event
from pbem.rules.core.frozen import FrozenMap, replace
from pbem.rules.core.phase import PhaseRules
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import parts_of


@dataclass(frozen=True)
class TurnPhase:
    """One phase of the turn: its id (the ``phase`` of the state), its title, the seed entry it plays."""

    id: str
    title: str
    clause: str


#: The turn, in order: the phase list of seed 003 (RULINGS.md §2.1).
TURN_PHASES: tuple[TurnPhase, ...] = (
    TurnPhase("tax-collection", "1. Tax collection", "seed 003: 1"),
    TurnPhase("population-expansion", "2. Population expansion", "seed 003: 2"),
    TurnPhase("movement", "3. Movement", "seed 003: 3"),
    TurnPhase("conflict", "4. Conflict", "seed 003: 4"),
    TurnPhase("city-construction", "5. City construction", "seed 003: 5"),
    TurnPhase("trade-card-acquisition", "6. Trade cards acquisition", "seed 003: 6"),
    TurnPhase("trade", "7. Trade", "seed 003: 7"),
    TurnPhase("calamity-selection", "8. Calamity selection", "seed 003: 8"),
    TurnPhase("calamity-resolution", "9. Calamity resolution", "seed 003: 9"),
    TurnPhase("special-abilities", "10. Special abilities", "seed 003: 10"),
    TurnPhase("surplus-removal", "11. Remove surplus population", "seed 003: [11]"),
    TurnPhase("civilization-advances", "12. Civilization advances acquisition", "seed 003: 12"),
    TurnPhase("ast-alteration", "13. A.S.T. alteration", "seed 003: 13"),
)
PHASE_IDS = tuple(p.id for p in TURN_PHASES)
#: What reports and prompts call each phase, setup (before the first turn) included.
PHASE_TITLES = {"setup": "Nations and start areas", **{p.id: p.title for p in TURN_PHASES}}
#: A variant may rename a phase it changes: its parts' ``phase_titles`` (`ruleset.parts`; NT-4, NT-6).


def phase_title(state: GameState, phase: str) -> str:
    """The title of a phase as this game plays it."""
    parts = parts_of(state)
    renamed = parts.deck.phase_titles.get(phase) or parts.calamities.phase_titles.get(phase)
    if renamed:
        return renamed
    return PHASE_TITLES.get(phase, phase)


def next_phase(state: GameState) -> list[Event]:
    """The PhaseBegan that follows the phase just ended."""
    if state.phase not in PHASE_IDS:
        turn, index = 1, 0
    else:
        index = PHASE_IDS.index(state.phase) + 1
        turn = state.turn
        if index == len(PHASE_IDS):
            turn, index = turn + 1, 0
    phase = TURN_PHASES[index]
    return [Event("PhaseBegan", {"turn": turn, "phase": phase.id}, (phase.clause,))]


def _apply_began(state: GameState, data: dict[str, Any]) -> GameState:
    new_turn = data["turn"] != state.turn
    if new_turn:  # Water set aside against a Famine is free to pay again once the turn is over (NT-12)
        for nation in [n for n in state.nations.values() if n.set_aside]:
            state = state.with_nation(replace(nation, set_aside=()))
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
    return f"Turn {event.data['turn']}: {phase_title(state, event.data['phase'])} begins."


RULES = PhaseRules(
    name="turn",
    apply={"PhaseBegan": _apply_began, "PhaseEnded": _apply_ended, "PhaseSkipped": lambda s, d: s},
    narrate={
        "PhaseBegan": _tell_began,
        "PhaseEnded": lambda s, e, v: None,
        "PhaseSkipped": lambda s, e, v: f"Phase skipped: {e.data['phase']} ({e.data['reason']}; option unplayable-phases=skip).",
    },
)

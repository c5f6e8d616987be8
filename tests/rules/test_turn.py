"""The turn (`pbem.rules.turn`): the phases of seed 003's phase list, in its order."""

from __future__ import annotations

from dataclasses import replace

from pbem.rules import engine as E
from pbem.rules.turn import TURN_PHASES, next_phase

#: Seed 003, THE ORDER OF PHASES: the entry between 10 and 12 has no number (RULINGS.md §2, "[11]").
SEED_003_PHASE_LIST = [
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
]


def test_the_turn_plays_the_phase_list_of_seed_003_in_order():
    """Each phase begins after the one before it, citing its entry of the list; after 13 the next turn begins at 1."""
    assert [(p.id, p.clause) for p in TURN_PHASES] == SEED_003_PHASE_LIST
    state = replace(E.new_game("g"), phase="setup", turn=0)
    walked = []
    for _ in range(len(SEED_003_PHASE_LIST) + 1):
        [began] = next_phase(state)
        assert began.type == "PhaseBegan"
        walked.append((began.data["turn"], began.data["phase"], began.cites))
        state = replace(state, phase=began.data["phase"], turn=began.data["turn"])
    assert walked == [(1, phase, (clause,)) for phase, clause in SEED_003_PHASE_LIST] + [
        (2, "tax-collection", ("seed 003: 1",))
    ]

"""Random play through phase 9, shared by the calamity modules' bot tests.

Each calamity module has a test that sets up many random positions and lets
random answers (and missed deadlines) resolve them; the loop that answers
is the same for all of them and lives here.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.state import GameState
from pbem.rules.invariants import broken_invariants

from .casefile import within_phase

RESOLUTION = "calamity-resolution"


def random_board(rng: random.Random, lands: list[str], nations: list[str], most: int) -> dict[str, dict]:
    """Each land a city of one nation, 1..most tokens of one nation, or empty, at random."""
    areas: dict[str, dict] = {}
    for land in lands:
        owner = rng.choice(nations)
        kind = rng.choice(["city", "tokens", "empty"])
        if kind == "city":
            areas[land] = {"city": owner}
        elif kind == "tokens":
            areas[land] = {"tokens": {owner: rng.randint(1, most)}}
    return areas


def resolve_by_bots(
    state: GameState,
    rng: random.Random,
    draws: Draws,
    label: str,
    *,
    steps: int = 60,
    miss: float = 0.3,
    check_prompt: Callable[[Prompt], None] | None = None,
) -> GameState:
    """Answer every prompt of phase 9 with a random choice (or let the deadline pass) until it ends.

    Every prompt must exist when the phase waits, every choice must be accepted,
    and the invariants must hold after every step (when the position they start
    from holds them: some tests set stocks freely to shape the beneficiary ranking).
    """
    strict = not broken_invariants(state)
    for _ in range(steps):
        if state.phase != RESOLUTION or state.step == "ended":
            break
        prompts = E.pending(state)
        assert prompts, f"{label}: waiting with nobody asked"
        prompt = next(iter(prompts.values()))
        if check_prompt is not None:
            check_prompt(prompt)
        if rng.random() < miss:
            events = E.decide(state, PassDeadline(), draws)
        else:
            (line,) = parse_orders(rng.choice(prompt.choices), state, Actor(player_id=prompt.player_id)).lines
            assert line.command is not None, f"{label}: {line.text!r}: {line.error}"
            events = E.decide(state, line.command, draws)
        state = E.fold(state, within_phase(RESOLUTION, events))
        assert not strict or not broken_invariants(state), f"{label}: {broken_invariants(state)}"
    assert state.step == "ended" or state.phase != RESOLUTION, f"{label}: the calamities did not finish"
    for nation in state.nations.values():
        assert nation.stock >= 0, f"{label}: {nation.name} stock {nation.stock}"
    return state

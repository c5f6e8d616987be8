"""Phase 11: remove surplus population, then check city support (seed 003: [11]; §29.8; D-9, D-10).

11a (only under `post-calamity-surplus=seed`, D-9): every nation's surplus
tokens go to stock exactly as in 5b. 11b: the city-support check of 5c,
with the same REDUCE order and the same defaults (D-6 decides which cities
may go first). Nations are handled one at a time in A.S.T.-ranking order.
The helpers are those of phase 5 (`board.support`); only the order of the steps
and the option differ.

D-10 (`slave-revolt-recovery`): under `seed` the tokens a Slave Revolt
disabled count again as the phase begins (``SlavesRecovered``); under `1991`
they stay disabled through the support check and recover after it.
"""

from __future__ import annotations

from typing import Any

from pbem.rules.board.ranking import in_ast_order
from pbem.rules.board.support import (
    ReduceCity,
    apply_reduced,
    chosen_reduction,
    disabled_tokens,
    reduction_prompt,
    reductions_asked,
    revolt_tokens_placed,
    support_candidates,
    support_choices,
    support_shortfall,
    support_step,
    surplus,
    tell_reduced,
    towns_question,
)
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import PhaseRules, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

PHASE = "surplus-removal"
SURPLUS_CITES = ("seed 003: [11]", "D-9", "seed 001: 5B", "§26.1", "§29.8")
SUPPORT_CITES = ("seed 003: [11]", "seed 001: 5C", "§26.3", "§26.41", "§29.8", "D-6")


def _removes_surplus(state: GameState) -> bool:
    return options_of(state).post_calamity_surplus == "seed"


def _current(state: GameState) -> tuple[str, str] | None:
    """(nation, "surplus" or "reduce") for the first nation in A.S.T. order with work left."""
    for nation in in_ast_order(state, state.nations):
        if _removes_surplus(state) and surplus(state, nation):
            return nation, "surplus"
        if support_shortfall(state, nation, disabled_tokens(state, nation)) and support_candidates(state, nation):
            return nation, "reduce"
    return None


def _reduce_prompt(state: GameState) -> Prompt | None:
    current = _current(state) if state.phase == PHASE else None
    if current is None or current[1] != "reduce":
        return None
    nation = current[0]
    candidates = support_choices(state, nation, disabled_tokens(state, nation))
    if candidates is None:
        return None  # one candidate, or every city must go: nothing to choose
    support = ruleset_of(state).numbers["city_support_tokens"]
    count = state.cities_on_board(nation)
    if parts_of(state).pieces.towns:
        question = towns_question(state, nation, disabled_tokens(state, nation))
        rule = "towns above the limit first, the largest excess first; then cities built this turn"
        return reduction_prompt(state, nation, candidates, question, rule, SUPPORT_CITES)
    question = (
        f"City support after the calamities: your {count} cities need {support * count} of your tokens on the "
        f"board; you have {state.tokens_on_board(nation)}"
        + (f", of which {disabled_tokens(state, nation)} are kept from supporting by the Slave Revolt (D-10)" if disabled_tokens(state, nation) else "")
        + ". Choose a city to reduce: it becomes tokens of yours from stock. "
        + reductions_asked(state, nation, disabled_tokens(state, nation))
    )
    return reduction_prompt(state, nation, candidates, question, "cities built this turn first", SUPPORT_CITES)


def pending(state: GameState) -> dict[str, Prompt]:
    prompt = _reduce_prompt(state)
    return {prompt.who: prompt} if prompt else {}


def decide_reduce(state: GameState, command: ReduceCity, by_default: bool = False) -> list[Event]:
    prompt = _reduce_prompt(state)
    if prompt is None or prompt.player_id != command.player_id:
        raise Rejection("no city of yours needs reducing now, so this REDUCE is not needed", "§29.8")
    current = _current(state)
    assert current is not None
    nation = current[0]
    data = chosen_reduction(state, nation, command.area, "§29.8", by_default)
    return [support_step(state, nation, command.area, "CitySupportReductionChosen", SUPPORT_CITES, data)]


def defaults(state: GameState, prompt: Prompt) -> list[Event]:
    current = _current(state)
    assert current is not None
    return decide_reduce(state, ReduceCity(prompt.player_id, support_candidates(state, current[0])[0]), True)


def _recovered(state: GameState) -> Event:
    return Event("SlavesRecovered", {"nations": [r[0] for r in state.slave_revolts]}, ("D-10", "§30.421"))


def apply_recovered(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, slave_revolts=())


def apply_support_reduced(state: GameState, data: dict[str, Any]) -> GameState:
    return revolt_tokens_placed(apply_reduced(state, data), data["nation"], data["tokens"])


def settle(state: GameState, draws: Draws) -> list[Event]:
    if state.slave_revolts and options_of(state).slave_revolt_recovery == "seed":
        return [_recovered(state)]
    current = _current(state)
    if current is None:
        if state.slave_revolts:
            return [_recovered(state)]
        return [phase_ended(PHASE, ("seed 003: [11]", "§29.8"))]
    nation, work = current
    if work == "surplus":
        return [Event("SurplusRemoved", {"nation": nation, "removed": surplus(state, nation)}, SURPLUS_CITES)]
    if _reduce_prompt(state) is not None:
        return []
    return [support_step(state, nation, support_candidates(state, nation)[0], "CitySupportReduced", SUPPORT_CITES)]


# The REDUCE order (`board.support.ReduceCity`) is decided here during phase 11:
# the engine gives a command to the phase in progress when that phase takes it.
# Surplus removal is phase 5's own event; reductions have events of their own
# because they also count toward a Slave Revolt victim's support (§30.422).

RULES = PhaseRules(
    name=PHASE,
    apply={"CitySupportReduced": apply_support_reduced, "CitySupportReductionChosen": apply_support_reduced, "SlavesRecovered": apply_recovered},
    decide={ReduceCity: decide_reduce},
    pending=pending,
    defaults=defaults,
    settle=settle,
    inputs={"CitySupportReductionChosen": lambda s, d: ReduceCity(s.nations[d["nation"]].player_id, d["area"])},
    narrate={
        "CitySupportReduced": tell_reduced,
        "CitySupportReductionChosen": tell_reduced,
        "SlavesRecovered": lambda s, e, v: f"The Slave Revolt is over: {', '.join(e.data['nations'])}'s tokens support cities again.",
    },
)

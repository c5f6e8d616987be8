"""Calamities that reduce the victim's own cities: Superstition, Civil Disorder, Iconoclasm & Heresy, Slave Revolt.

Superstition (§30.32), Civil Disorder (§30.7) and Iconoclasm & Heresy (§30.8,
whose second stage has the victim name other players' cities) are city picks.
Slave Revolt (§30.42, D-10) keeps some of the victim's tokens from supporting
cities while it lasts (`board.support.disabled_tokens`) and checks his cities
at once, one REDUCE at a time.
"""

from __future__ import annotations

from typing import Any

from pbem.rules.board.ranking import in_ast_order
from pbem.rules.board.support import (
    cities_of,
    disabled_tokens,
    reduction_candidates,
    reductions_needed,
    support_shortfall,
)
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.choosing import (
    CalamityFamily,
    Stage,
    Strike,
    held,
    immune,
    quantity,
    reduce_stage,
    stage_index,
)
from pbem.rules.ruleset.rulebook import ruleset_of


def _superstition(state: GameState, cal: Strike, index: int) -> Stage | None:
    name, victim, _ = cal
    if index > 0:
        return None
    base = ruleset_of(state).calamities[name].primary["cities_reduced"]
    count = quantity(state, victim, name, "primary", "cities_reduced", base)
    cards = held(state, victim, name, "cities_reduced")
    note = f" (holds {', '.join(cards)}; only the best Religion card counts)" if cards else ""
    return reduce_stage(state, victim, "primary", count, name, ("§30.32", "§30.322"), note)


def _civil_disorder(state: GameState, cal: Strike, index: int) -> Stage | None:
    name, victim, _ = cal
    if index > 0:
        return None
    spared = ruleset_of(state).calamities[name].primary["cities_spared"]
    cities = state.cities_on_board(victim)
    count = min(cities, quantity(state, victim, name, "primary", "cities_reduced", max(0, cities - spared)))
    cards = held(state, victim, name, "cities_reduced")
    note = f" (holds {', '.join(cards)})" if cards else ""
    return reduce_stage(state, victim, "primary", count, name, ("§30.7",), note)


def _iconoclasm(state: GameState, cal: Strike, index: int) -> Stage | None:
    name, victim, giver = cal
    spec = ruleset_of(state).calamities[name]
    if index == 0:
        count = quantity(state, victim, name, "primary", "cities_reduced", spec.primary["cities_reduced"])
        cards = held(state, victim, name, "cities_reduced")
        note = f" (holds {', '.join(cards)})" if cards else ""
        return reduce_stage(state, victim, "primary", count, name, ("§30.8",), note)
    if index == 1:
        others = [
            n
            for n in in_ast_order(state, state.nations)
            if n not in (victim, giver) and not immune(state, n, name, "secondary")
        ]
        caps = tuple(
            (n, quantity(state, n, name, "secondary", "assigned_cities", spec.secondary["cities_reduced_total"]))
            for n in others
        )
        candidates = tuple(a for n in others for a in cities_of(state, n))
        total = spec.secondary["cities_reduced_total"]
        return Stage(
            nation=victim,
            role="secondary",
            chooser=victim,
            count=total,
            candidates=candidates,
            effect="reduce",
            question=(
                f"{name}: name {total} cities of other players to be reduced"
                + (f" (not {giver}, who traded you the card)" if giver else "")
                + "; Theology holders cannot be named, a Philosophy holder loses at most 1."
            ),
            cites=("§30.8", "§29.61"),
            caps=tuple((n, c) for n, c in caps if c < total),
        )
    return None


def _slave_revolt(state: GameState, cal: Strike, index: int) -> Stage | Event | None:
    name, victim, _ = cal
    if index == 0:
        base = ruleset_of(state).calamities[name].primary["tokens_disabled"]
        disabled = quantity(state, victim, name, "primary", "tokens_disabled", base)
        cards = held(state, victim, name, "tokens_disabled")
        data = {"calamity": name, "victim": victim, "disabled": disabled, "on_board": state.tokens_on_board(victim), "cards": cards}
        return Event("SlavesRevolted", data, ("seed 003: 9", "§30.42", "§30.421", "D-10"))
    if support_shortfall(state, victim, disabled_tokens(state, victim)) and cities_of(state, victim):
        candidates = tuple(reduction_candidates(state, victim))
        fewest, most = reductions_needed(state, victim, disabled_tokens(state, victim))
        many = f"{fewest} to {most}" if fewest < most else str(most)
        return Stage(
            nation=victim,
            role="primary",
            chooser=victim,
            count=1,
            candidates=candidates,
            effect="reduce",
            question=(
                f"Slave Revolt: {disabled_tokens(state, victim)} of your tokens do not support cities now; your cities are "
                f"not supported. {many} of your cities must be reduced, one at a time (a reduced city's tokens count "
                f"at once). Choose up to {most}, in order of preference (PICK <area>, <area> ...): the first legal "
                "one is reduced now, the next ones only while more must go."
            ),
            cites=("§30.42", "§30.422", "§26.41", "D-6"),
            repeat=True,
            free_choice=True,
            up_to=most,
        )
    return None


def apply_revolted(state: GameState, data: dict[str, Any]) -> GameState:
    revolts = tuple(r for r in state.slave_revolts if r[0] != data["victim"]) + ((data["victim"], data["disabled"], 0),)
    return replace(state, slave_revolts=revolts, step=str(stage_index(state) + 1))


def _tell_revolted(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    cards = f" ({', '.join(d['cards'])})" if d["cards"] else ""
    return (
        f"Slave Revolt ({d['victim']}): {min(d['disabled'], d['on_board'])} of its {d['on_board']} tokens on the board "
        f"cannot support cities{cards}; its cities are checked at once."
    )


FAMILY = CalamityFamily(
    resolvers={
        "Superstition": _superstition,
        "Civil Disorder": _civil_disorder,
        "Iconoclasm & Heresy": _iconoclasm,
        "Slave Revolt": _slave_revolt,
    },
    apply={"SlavesRevolted": apply_revolted},
    narrate={"SlavesRevolted": _tell_revolted},
)

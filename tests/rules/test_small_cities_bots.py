"""Small Cities under random play: many random positions with towns, every prompt answered at random.

Phase 5, phase 4 and the calamities of phase 9 each end, every choice a
prompt offers is accepted, and the invariants hold after every step (units
conserved, no town beside a city, at most five in an area, cities supported).
"""

from __future__ import annotations

import random

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.board.support import population_limit, support_shortfall, surplus
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.state import GameState
from pbem.rules.invariants import broken_invariants
from pbem.rules.phases.calamities.resolution import RESOLVERS
from pbem.rules.ruleset.rulebook import ruleset_of

from .botplay import resolve_by_bots
from .casefile import position, within_phase

DRAWS = Draws("small cities bots")
SMALL = {"variant-small-cities": "on"}
NATIONS = ["Egypt", "Crete", "Babylon", "Thrace"]
LANDS = ["Thebes", "Memphis", "Alexandria", "Aleppo", "Athens", "Corinth", "Cyrene", "Knossos", "Sparta", "Sinai",
         "Gaza", "Upper Egypt", "Babylon", "Susa", "Ur", "Babylonia", "Charax", "Media", "Parthia", "Thrace"]


def towns_board(rng: random.Random, nations: list[str]) -> dict[str, dict]:
    """Each land a city, some tokens, some towns (with or without tokens, of one or two nations), or empty."""
    areas: dict[str, dict] = {}
    for land in LANDS:
        owner, other = rng.sample(nations, 2)
        kind = rng.choice(["city", "tokens", "towns", "mixed", "rivals", "contest", "empty"])
        if kind == "city":
            areas[land] = {"city": owner}
        elif kind == "tokens":
            areas[land] = {"tokens": {owner: rng.randint(1, 7)}}
        elif kind == "towns":
            areas[land] = {"towns": {owner: rng.randint(1, 5)}}
        elif kind == "mixed":
            areas[land] = {"tokens": {owner: rng.randint(1, 4)}, "towns": {owner: rng.randint(1, 5)}}
        elif kind == "rivals":
            areas[land] = {"tokens": {other: rng.randint(1, 5)}, "towns": {owner: rng.randint(1, 4)}}
        elif kind == "contest":
            areas[land] = {"tokens": {owner: rng.randint(1, 4), other: rng.randint(1, 5)}, "towns": {owner: rng.randint(1, 4)}}
    return areas


def _answer(state: GameState, rng: random.Random, phase: str, label: str, miss: float = 0.3) -> GameState:
    prompts = E.pending(state)
    assert prompts, f"{label}: waiting with nobody asked"
    prompt = prompts[min(prompts)]
    if rng.random() < miss:
        return E.fold(state, within_phase(phase, E.decide(state, PassDeadline(), DRAWS)))
    events = []
    for line in parse_orders(rng.choice(prompt.choices), state, Actor(player_id=prompt.player_id)).lines:
        assert line.command is not None, f"{label}: {line.text!r}: {line.error}"
        events += within_phase(phase, E.decide(E.fold(state, events), line.command, DRAWS))
    return E.fold(state, events)


def _units(state: GameState, nation: str) -> int:
    n = state.nations[nation]
    return n.stock + n.treasury + state.tokens_on_board(nation) + state.towns_on_board(nation)


def _play_phase(case: dict, seed: int, steps: int = 120) -> tuple[GameState, GameState]:
    rng = random.Random(seed)
    start = position(case)
    state = E.fold(start, within_phase(case["phase"], E.resume(start, DRAWS)))
    for _ in range(steps):
        if state.phase != case["phase"] or state.step == "ended":
            break
        state = _answer(state, rng, case["phase"], f"seed {seed}")
        assert not broken_invariants(state), f"seed {seed}: {broken_invariants(state)}"
    assert state.phase != case["phase"] or state.step == "ended", f"seed {seed}: phase {case['phase']} did not end"
    return start, state


def test_bots_finish_city_construction_with_towns():
    for seed in range(40):
        rng = random.Random(seed)
        cards = ["Architecture", "Agriculture"]
        nations = {n: {"civ_cards": rng.sample(cards, rng.randint(0, 2)), "treasury": rng.randint(0, 8)} for n in NATIONS}
        case = {"players": 6, "phase": "city-construction", "options": SMALL, "nations": nations,
                "areas": towns_board(rng, NATIONS)}
        if broken_invariants(position(case)):
            continue  # more units on this random board than a nation owns
        start, state = _play_phase(case, seed)
        for n in NATIONS:
            assert _units(state, n) == _units(start, n), f"seed {seed}: {n} units not conserved"
            assert support_shortfall(state, n) == 0, f"seed {seed}: {n} not supported"
            # What is left above a limit can only be a town turned back for support (SC-7), beside towns filling it.
            for area in surplus(state, n):
                assert state.area(area).towns.get(n, 0) >= population_limit(state, n, area), f"seed {seed}: {n} {area}"


def test_bots_finish_conflicts_with_towns_and_attacked_cities():
    for seed in range(40):
        rng = random.Random(seed)
        nations = {n: {"civ_cards": rng.sample(["Engineering", "Metalworking"], rng.randint(0, 1)),
                       "hand": ["Ochre"] * rng.randint(0, 3)} for n in NATIONS}
        areas = towns_board(rng, NATIONS)
        for land, spec in areas.items():
            if spec.get("city") and rng.random() < 0.6:
                attacker = rng.choice([n for n in NATIONS if n != spec["city"]])
                spec["tokens"] = {attacker: rng.randint(1, 8)}
        case = {"players": 6, "phase": "conflict", "options": SMALL, "nations": nations, "areas": areas}
        full = position(case)
        if any(full.nations[n].stock < 0 for n in NATIONS):
            continue  # more units on this random board than a nation owns
        for n in NATIONS:  # a short stock, sometimes: the rest waits in treasury, so every unit is still counted
            stock = rng.choice([full.nations[n].stock, rng.randint(0, 6)])
            nations[n].update(stock=stock, treasury=full.nations[n].stock - stock)
        start, state = _play_phase(case, seed)
        for n in NATIONS:
            assert _units(state, n) == _units(start, n), f"seed {seed}: {n} units not conserved"


def test_bots_finish_every_calamity_with_towns():
    cards = ["Medicine", "Roadbuilding", "Theology", "Philosophy", "Mysticism", "Law", "Engineering", "Enlightenment"]
    for seed in range(60):
        rng = random.Random(seed)
        spec = {n: {"civ_cards": rng.sample(cards, 2), "stock": rng.randint(0, 20)} for n in NATIONS}
        setup = position({"players": 6, "phase": "calamity-resolution", "options": SMALL, "nations": spec})
        chosen = rng.sample(sorted(RESOLVERS), 3)
        order = [c for c in ruleset_of(setup).calamity_order() if c in chosen]
        calamities = [[c, rng.choice(NATIONS), ""] for c in order]
        case = {"players": 6, "phase": "calamity-resolution", "options": SMALL, "nations": spec,
                "areas": towns_board(rng, NATIONS), "calamities": calamities}
        state = position(case)
        state = E.fold(state, within_phase("calamity-resolution", E.resume(state, DRAWS)))
        resolve_by_bots(state, rng, DRAWS, f"seed {seed}", steps=80)

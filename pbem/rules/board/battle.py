"""The arithmetic of conflict (§24; seed 002: 4A, 4B; R-3.1, R-3.2; D-16 to D-19).

Token conflicts and city attacks happen in phase 4 and again when Barbarian
Hordes arrive in phase 9; both follow these rules: who removes a token in
which round (Metalworking holders last), how many tokens take a city and how
many defenders it becomes (Engineering). The Barbarians are one party holding
no cards; a pirate city is defended by them.
"""

from __future__ import annotations

from pbem.rules.board.ranking import BARBARIANS
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of

PIRATES = "Pirates"


def holds(state: GameState, party: str, card: str) -> bool:
    """The party is a nation holding this civilization card (the Barbarians hold none)."""
    return party in state.nations and card in state.nations[party].civ_cards


def party_of_city(city: str) -> str:
    """The party that defends a city: its owner, or the Barbarians for a pirate city (seed 002: [The barbarians])."""
    return BARBARIANS if city == PIRATES else city


def area_limit(state: GameState, area: str) -> int:
    """The printed population limit of a land area."""
    return ruleset_of(state).areas[area].population_limit


def forces(state: GameState, area: str) -> dict[str, int]:
    """Each party's units that fight in the area: its tokens, and under Small Cities its towns too (SC-15)."""
    a = state.area(area)
    out = {p: n for p, n in a.tokens.items() if n > 0}
    for p, n in a.towns.items():
        if n > 0:
            out[p] = out.get(p, 0) + n
    return out


def in_conflict(state: GameState, area: str) -> bool:
    """Two parties or more stand in the area, above its limit or around a city (R-3.1; towns count, SC-15)."""
    counts = forces(state, area)
    if len(counts) < 2:
        return False
    return state.area(area).city is not None or sum(counts.values()) > area_limit(state, area)


def town_loss_range(state: GameState, area: str, party: str, lost: int) -> range:
    """How many of ``party``'s ``lost`` units in the area may be towns: his choice within this range (SC-15).

    The smallest value is the default: population tokens go first.
    """
    a = state.area(area)
    tokens, towns = a.tokens.get(party, 0), a.towns.get(party, 0)
    return range(max(0, lost - tokens), min(lost, towns) + 1)


def removal_steps(counts: dict[str, int], limit: int | None, late: set[str]) -> list[list[str]]:
    """The removals of one token conflict (R-3.1): each step lists the parties removing one token together.

    ``limit`` None means the area holds a city: only "one party left" ends the conflict.
    ``late`` are the Metalworking holders, who remove after all non-holders in every round.
    """
    counts = {p: n for p, n in counts.items() if n > 0}
    steps: list[list[str]] = []

    def going() -> bool:
        alive = [p for p, n in counts.items() if n > 0]
        return len(alive) >= 2 and (limit is None or sum(counts.values()) > limit)

    while going():
        start = {p: n for p, n in counts.items() if n > 0}
        for key in sorted({(p in late, n) for p, n in start.items()}):
            if not going():
                break
            group = sorted(p for p, n in start.items() if (p in late, n) == key)
            for p in group:
                counts[p] -= 1
            steps.append(group)
    return steps


def fight_removals(state: GameState, area: str, counts: dict[str, int], city_stands: bool) -> list[list[str]]:
    """The removal steps of one token conflict among ``counts`` in ``area`` (R-3.1, D-16, D-17, §24.24).

    Public so that fights outside phase 4 (the Barbarian Hordes of phase 9)
    follow exactly the phase-4 rules: Metalworking holders remove last, and
    while a city stands only "one party left" ends the conflict.
    """
    late = {p for p in counts if counts[p] > 0 and holds(state, p, "Metalworking")}
    return removal_steps(counts, None if city_stands else area_limit(state, area), late)


def city_attack_needed(state: GameState, attacker: str, city: str) -> int:
    """Tokens ``attacker`` needs to take a city owned by ``city`` (7; Engineering 6 / 8, D-19, §24.35)."""
    return threshold(state, attacker, party_of_city(city), "city_attack_tokens")


def city_defenders_due(state: GameState, attacker: str, city: str) -> int:
    """Tokens a city owned by ``city`` becomes when ``attacker`` takes it (6; Engineering 5 / 7, D-19, §24.35)."""
    return threshold(state, attacker, party_of_city(city), "city_defence_tokens")


def threshold(state: GameState, attacker: str, defender_party: str, key: str) -> int:
    """7 to attack / 6 defenders by default; Engineering: 6 / 5 for the attacker, 8 / 7 against a holder (D-19)."""
    base = ruleset_of(state).numbers[key]
    mine, theirs = holds(state, attacker, "Engineering"), holds(state, defender_party, "Engineering")
    return base - 1 if mine and not theirs else base + 1 if theirs and not mine else base


def engineering_involved(state: GameState, attacker: str, defender: str) -> bool:
    """Engineering changes this city attack's numbers (either side holds it)."""
    return holds(state, attacker, "Engineering") or holds(state, party_of_city(defender), "Engineering")

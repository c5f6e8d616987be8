"""Barbarian Hordes: the board as the Barbarians see it, and what happens where they arrive (§30.52).

The supply of Barbarian tokens, the areas they may enter, and the clash in
an area: a token conflict, or a city attack by the rules of phase 4
(`board.battle`), with the damage it does to the victim.
"""

from __future__ import annotations

from typing import Any

from pbem.rules.board.battle import (
    PIRATES,
    area_limit,
    city_attack_needed,
    city_defenders_due,
    fight_removals,
)
from pbem.rules.board.ranking import BARBARIANS
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of

NAME = "Barbarian Hordes"
CITY_POINTS = 5
CITES = ("seed 003: 9", "§30.52", "fact sheet §2.12")
FIGHT_CITES = ("§30.5212", "seed 002: [The barbarians]", "R-3.1", "D-16", "D-17")
ATTACK_CITES = ("seed 002: 4B", "R-3.2", "D-19")
TIE_CITES = ("§30.5251", "D-1", "Q-S6")


def board(state: GameState) -> frozenset[str]:
    """The land areas of the board in use (rule 16)."""
    return ruleset_of(state).setup_for(len(state.players)).areas_in_play


def supply(state: GameState) -> int:
    """Barbarian tokens left to place: the tokens of the sets nobody plays, less those on the board.

    The box holds one set of pieces per base nation (a nation that replaces
    another, Iberia, shares its set); every player uses one set (§15.31).
    """
    rules = ruleset_of(state)
    sets = sum(1 for n in rules.nations.values() if not n.replaces)
    unused = max(0, sets - len(state.players))
    on_board = sum(a.tokens.get(BARBARIANS, 0) for a in state.areas.values())
    return max(0, rules.tokens_per_nation * unused - on_board)


def open_to_barbarians(state: GameState, area: str) -> bool:
    """The Barbarians may stand here: not an area holding a pirate city (full, and their own)."""
    return state.area(area).city != PIRATES


def neighbours(state: GameState, area: str) -> list[str]:
    """Areas one Barbarian move away: across land or a water boundary, never open sea (§30.5233)."""
    rules = ruleset_of(state)
    near = set(rules.land_adjacency.get(area, ())) | set(rules.coast_links.get(area, ()))
    on = board(state)
    return sorted(a for a in near if a in on and open_to_barbarians(state, a))


def has_units(state: GameState, area: str, nation: str) -> bool:
    here = state.area(area)
    return here.tokens.get(nation, 0) > 0 or here.towns.get(nation, 0) > 0 or here.city == nation


def players_units(state: GameState, area: str) -> bool:
    here = state.area(area)
    return here.city in state.nations or any(n > 0 and p in state.nations for p, n in here.tokens.items()) or any(
        n > 0 for n in here.towns.values())


def _points(tokens: dict[str, int], city: str | None, nation: str) -> int:
    return tokens.get(nation, 0) + (CITY_POINTS if city == nation else 0)


def _live(tokens: dict[str, int]) -> dict[str, int]:
    return {p: n for p, n in sorted(tokens.items()) if n > 0}


def _conflict(state: GameState, area: str, tokens: dict[str, int], city: str | None) -> bool:
    """A token conflict exists (§24.1): two parties or more, above the limit or beside a city."""
    live = _live(tokens)
    return len(live) >= 2 and (city is not None or sum(live.values()) > area_limit(state, area))


def _fight(state: GameState, area: str, tokens: dict[str, int], city: str | None) -> dict[str, int]:
    steps = fight_removals(state, area, _live(tokens), city is not None)
    out = dict(tokens)
    for step in steps:
        for party in step:
            out[party] -= 1
    return out


def clash(state: GameState, area: str, arriving: int, victim: str) -> dict[str, Any]:
    """What happens when ``arriving`` Barbarians enter ``area`` (§30.5212, §30.5242): the record of an event.

    Pure: the state is not changed. ``lost`` gives each nation's unit points
    lost there (city 5, token 1; a taken city's tokens count only as lost).
    """
    here = state.area(area)
    tokens = _live(dict(here.tokens))
    for owner, towns in here.towns.items():  # Small Cities: towns fight as their owner's units (SC-9, SC-15)
        if towns > 0:
            tokens[owner] = tokens.get(owner, 0) + towns
    tokens[BARBARIANS] = tokens.get(BARBARIANS, 0) + arriving
    before = dict(tokens)
    city = here.city
    fight = fight2 = None
    if _conflict(state, area, tokens, city):
        after = _fight(state, area, tokens, city)
        fight = {"before": _live(tokens), "after": _live(after)}
        tokens = after
    attack: dict[str, Any] | None = None
    if city in state.nations and set(_live(tokens)) == {BARBARIANS}:
        owner = city
        needed = city_attack_needed(state, BARBARIANS, owner)
        attack = {"owner": owner, "tokens": tokens[BARBARIANS], "needed": needed, "succeeded": tokens[BARBARIANS] >= needed}
        if attack["succeeded"]:
            due = city_defenders_due(state, BARBARIANS, owner)
            stock = state.nations[owner].stock + before.get(owner, 0) - tokens.get(owner, 0)
            placed = min(due, stock)
            attack.update(due=due, placed=placed)
            city = None
            tokens[owner] = tokens.get(owner, 0) + placed
            if _conflict(state, area, tokens, city):
                after = _fight(state, area, tokens, city)
                fight2 = {"before": _live(tokens), "after": _live(after)}
                tokens = after
        else:
            tokens[BARBARIANS] = 0  # a failed attack: the attackers are removed (seed 002: 4B)
    after = _live(tokens)
    nations = sorted({p for p in before if p in state.nations} | ({here.city} if here.city in state.nations else set()))
    lost = {
        n: {
            "points": _points(before, here.city, n) - _points(after, city, n),
            "tokens": before.get(n, 0),
            "left": after.get(n, 0),
            "city": here.city == n and city != n,
        }
        for n in nations
    }
    towns = {n: k for n, k in sorted(here.towns.items()) if k > 0}
    extra: dict[str, Any] = {}
    if towns:  # tokens go first; the towns that survive stand (nobody plunders them, Q-SC9)
        extra["towns"] = towns
        extra["towns_after"] = {n: min(k, after.get(n, 0)) for n, k in towns.items() if min(k, after.get(n, 0))}
    return extra | {
        "area": area,
        "limit": area_limit(state, area),
        "arriving": arriving,
        "city": here.city,
        "before": before,
        "fight": fight,
        "attack": attack,
        "fight2": fight2,
        "after": after,
        "city_after": city,
        "lost": {n: v for n, v in lost.items() if v["points"] or v["tokens"] != v["left"]},
        "damage": lost.get(victim, {"points": 0})["points"],
    }


def damage(state: GameState, area: str, arriving: int, victim: str) -> int:
    """Unit points the victim loses if ``arriving`` Barbarians enter ``area`` now (the "immediate damage")."""
    if not has_units(state, area, victim):
        return 0
    return clash(state, area, arriving, victim)["damage"]

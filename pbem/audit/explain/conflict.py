"""Explaining phase 4: a token conflict round by round, a city attack against its threshold, a city replaced.

Every number is recomputed from the state just before the event with the
functions the engine ruled with (`pbem.rules.board.battle`); where the
recomputation and the log disagree, the explanation says so.
"""

from __future__ import annotations

from pbem.audit.explain.common import (
    Case,
    Explainer,
    Told,
    area_line,
    counts_text,
    mismatch,
    nation_line,
    plural,
)
from pbem.rules.board.battle import (
    PIRATES,
    area_limit,
    city_defenders_due,
    fight_removals,
    forces,
    holds,
    party_of_city,
    threshold,
)
from pbem.rules.board.ranking import BARBARIANS
from pbem.rules.ruleset.rulebook import ruleset_of


def rounds(steps: list[list[str]]) -> list[list[list[str]]]:
    """The removal steps cut into rounds: a round ends where a party would remove a second time (R-3.1).

    Every party still standing removes once in each round, so the first step
    naming a party already seen in the round opens the next one.
    """
    out: list[list[list[str]]] = []
    seen: set[str] = set()
    for step in steps:
        if not out or seen & set(step):
            out.append([])
            seen = set()
        out[-1].append(step)
        seen |= set(step)
    return out


def _who(party: str) -> str:
    return "the Barbarians" if party == BARBARIANS else party


def _fight_lines(case: Case, area: str, before: dict[str, int], city_stands: bool) -> tuple[list[str], dict[str, int]]:
    """The rounds of one fight as the rules play them, and the units each party removes."""
    state = case.before
    steps = fight_removals(state, area, before, city_stands)
    late = sorted(p for p in before if holds(state, p, "Metalworking"))
    limit = area_limit(state, area)
    lines = [
        f"Units at the start: {counts_text(before)} = {sum(before.values())}; limit {limit}"
        + ("; a city stands, so only one party left ends it (R-3.1)." if city_stands else "."),
        "Each round every party removes one unit (-1), the fewest first (equal counts together)"
        + (f", Metalworking holders last ({', '.join(late)}, §24.24)." if late else "."),
    ]
    counts = dict(before)
    for number, group in enumerate(rounds(steps), 1):
        start = counts_text({p: n for p, n in counts.items() if n > 0})
        order = []
        for step in group:
            for party in step:
                counts[party] -= 1
            order.append(" and ".join(_who(p) for p in step) + (" -1 each" if len(step) > 1 else " -1"))
        left = {p: n for p, n in counts.items() if n > 0}
        lines.append(f"Round {number}: {start}; {', then '.join(order)} -> {counts_text(left)} = {sum(left.values())}.")
    alive = [p for p, n in counts.items() if n > 0]
    total = sum(counts.values())
    if len(alive) < 2:
        lines.append(f"Stop: only {_who(alive[0]) if alive else 'nobody'} is left.")
    else:
        lines.append(f"Stop: {total} units are within the limit of {limit}.")
    removed = {p: before[p] - counts[p] for p in before}
    lines.append(f"Removed to stock: {counts_text(removed)} = {sum(removed.values())} (one unit a round each).")
    return lines, removed


def token_conflict(case: Case) -> Told:
    d = case.event.data
    area, state = d["area"], case.before
    before = forces(state, area)
    city_stands = state.area(area).city is not None
    lines, removed = _fight_lines(case, area, before, city_stands)
    if d.get("towns_lost"):
        lines.append(f"Of those, towns: {counts_text(d['towns_lost'])} (the owner's choice, tokens first by default, SC-15).")
    lines += mismatch("units at the start", before, d["before"])
    lines += mismatch("units removed", removed, d["removed"])
    told_before = [area_line(case.seen_before, area, area_limit(state, area))]
    told_before += [nation_line(case.seen_before, p) for p in before if p in state.nations]
    if d.get("in_attack"):
        told_before.append("This fight is step 2 of a city attack: the attacker against the city's defenders.")
    return Told(tuple(told_before), tuple(lines))


def _engineering(case: Case, attacker: str, party: str, base: int, needed: int, what: str) -> str:
    mine, theirs = holds(case.before, attacker, "Engineering"), holds(case.before, party, "Engineering")
    if mine and not theirs:
        return f"{attacker} holds Engineering and the defender does not: {what} {base} - 1 = {needed} (D-19, §24.35)."
    if theirs and not mine:
        return f"The defender holds Engineering and {attacker} does not: {what} {base} + 1 = {needed} (D-19, §24.35)."
    if mine and theirs:
        return f"Both hold Engineering, which cancels out: {what} {needed} (D-19)."
    return f"Neither side holds Engineering: {what} {needed} (D-19)."


def city_attack(case: Case) -> Told:
    d = case.event.data
    state, area, attacker, defender = case.before, d["area"], d["attacker"], d["defender"]
    party = party_of_city(defender)
    tokens = state.area(area).tokens.get(attacker, 0)
    told_before = [area_line(case.seen_before, area, area_limit(state, area))]
    told_before += [nation_line(case.seen_before, n) for n in (attacker, defender) if n in state.nations]
    if "SC-16" in case.event.cites and d["needed"] == 1:
        lines = [f"Small Cities: any attack on a player's city breaks it into towns (SC-16); {attacker} has "
                 f"{tokens} tokens there, and 1 is enough."]
        return Told(tuple(told_before), tuple(lines + mismatch("attacking tokens", tokens, d["tokens"])))
    base = ruleset_of(state).numbers["city_attack_tokens"]
    needed = threshold(state, attacker, party, "city_attack_tokens")
    lines = [f"A city is taken by {base} tokens of one attacker alone in its area (R-3.2, seed 002: 4B)."]
    if defender == PIRATES:
        lines.append("A pirate city is defended by the Barbarians, who hold no cards (seed 001: [Attacking a pirate city]).")
    lines.append(_engineering(case, attacker, party, base, needed, "tokens needed"))
    if tokens >= needed:
        lines.append(f"{attacker} has {tokens} tokens there: {tokens} >= {needed}, the attack succeeds.")
        due = city_defenders_due(state, attacker, defender)
        lines.append(f"Next the city becomes {due} defending tokens (step 1), then they fight the attacker (step 2).")
    else:
        lines.append(f"{attacker} has {tokens} tokens there: {tokens} < {needed}, the attack fails and its "
                     f"{plural(tokens, 'token')} there go back to stock.")
    lines += mismatch("tokens needed", needed, d["needed"]) + mismatch("attacking tokens", tokens, d["tokens"])
    return Told(tuple(told_before), tuple(lines))


def city_replaced(case: Case) -> Told:
    d = case.event.data
    state, area, attacker, defender = case.before, d["area"], d["attacker"], d["defender"]
    party = party_of_city(defender)
    base = ruleset_of(state).numbers["city_defence_tokens"]
    due = city_defenders_due(state, attacker, defender)
    told_before = [area_line(case.seen_before, area, area_limit(state, area))]
    told_before += [nation_line(case.seen_before, n) for n in (attacker, defender) if n in state.nations]
    what = "towns" if d.get("towns") else "tokens"
    lines = [f"A city taken becomes {base} of its owner's {what} (seed 001: [city-attack step 1], D-19)."]
    lines.append(_engineering(case, attacker, party, base, due, f"{what} due"))
    if party == BARBARIANS:
        placed = due
        lines.append(f"The Barbarians always have the tokens: {placed} placed (D-5).")
    else:
        stock = state.nations[defender].stock
        placed = min(due, stock)
        lines.append(f"{defender} has {stock} in stock: min({due}, {stock}) = {placed} placed"
                     + (" (short: D-3)." if placed < due else "."))
    lines += mismatch(f"{what} due", due, d["due"]) + mismatch(f"{what} placed", placed, d["placed"])
    return Told(tuple(told_before), tuple(lines))


EXPLAINERS: dict[str, Explainer] = {
    "TokenConflictResolved": token_conflict,
    "CityAttackSucceeded": city_attack,
    "CityAttackFailed": city_attack,
    "CityReplaced": city_replaced,
}

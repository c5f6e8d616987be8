"""Explaining phase 1: the tax each nation paid, and a tax revolt with the beneficiary ranking that chose its winner.

The ranking is asked again of `pbem.rules.board.ranking.beneficiary_ranking`
on the state just before the revolt, under the game's option
`beneficiary-rule` (D-1), so the order shown is the one the engine used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pbem.audit.explain.common import (
    Case,
    Explainer,
    Told,
    mismatch,
    nation_line,
    plural,
)
from pbem.rules.board.ranking import beneficiary_ranking, cities_in_stock
from pbem.rules.board.support import cities_of
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of


def _shortfall(case: Case, victim: str) -> Mapping[str, Any] | None:
    """The victim's shortfall in the tax of this phase: the last TaxCollected before the event."""
    for event in reversed(case.log):
        if event.type == "TaxCollected":
            return next((s for s in event.data["shortfalls"] if s["nation"] == victim), None)
        if event.type == "PhaseBegan":
            return None
    return None


def _shortfall_lines(s: Mapping[str, Any]) -> list[str]:
    covered = s["cities"] - s["revolting"]
    due = s["rate"] * s["cities"] + s.get("levy", 0)
    towns = f" + {s['levy']} for its {s['towns']} towns" if s.get("levy") else ""
    lines = [f"Tax: {s['nation']} owed {s['rate']} x {s['cities']} cities{towns} = {due}, with {s['stock']} in stock."]
    if s["democracy"]:
        return lines + ["It holds Democracy: its cities never revolt (§19.34)."]
    left = s["stock"] - s.get("levied", 0)
    lines.append(f"Its stock paid for {left} // {s['rate']} = {covered} cities: {s['cities']} - {covered} = "
                 f"{s['revolting']} revolt (seed 003: 1B, D-2).")
    return lines


def _ranking_lines(case: Case, victim: str) -> tuple[list[str], str | None]:
    """The beneficiary ranking, best first, and the first candidate with a city in stock to give."""
    state = case.before
    ranked = beneficiary_ranking(state, excluding=[victim])
    rule = options_of(state).beneficiary_rule
    points = ruleset_of(state).numbers["city_unit_points"]
    if rule == "1991":
        lines = [f"Beneficiary ranking (D-1, 1991): the most unit points in stock, {points} a city plus each token; "
                 "ties by A.S.T."]
    else:
        lines = ["Beneficiary ranking (D-1, seed): the most cities in stock, then the most tokens in stock, then A.S.T."]
    chosen = None
    for place, nation in enumerate(ranked, 1):
        spare, stock = cities_in_stock(state, nation), state.nations[nation].stock
        text = f"  {place}. {nation}: {plural(spare, 'city', 'cities')} in stock, {stock} tokens"
        if rule == "1991":
            text += f" ({points} x {spare} + {stock} = {points * spare + stock})"
        if chosen is None and spare > 0:
            chosen = nation
            text += " <- the first with a city to give: beneficiary"
        elif chosen is None:
            text += ": no city in stock, passed over"
        lines.append(text)
    return lines, chosen


def revolt(case: Case) -> Told:
    d = case.event.data
    state, victim = case.before, d["victim"]
    lines: list[str] = []
    shortfall = _shortfall(case, victim)
    if shortfall is not None:
        lines += _shortfall_lines(shortfall)
    left = dict(state.filed.get("revolts", ())).get(victim, len(d["areas"]))
    mine = cities_of(state, victim)
    lines.append(f"Still to revolt now: {left} of {victim}'s {plural(len(mine), 'city', 'cities')} "
                 f"({', '.join(mine)}).")
    ranking, chosen = _ranking_lines(case, victim)
    lines += ranking
    if case.event.type == "RevoltingCitiesEliminated":
        lines.append(f"Nobody has a city in stock: the first {left} by area name are eliminated (Q-S5, §19.33).")
        lines += mismatch("beneficiary", chosen, None)
    else:
        spare = cities_in_stock(state, chosen) if chosen else 0
        take = min(left, spare)
        lines.append(f"{chosen} takes min({left} revolting, {spare} in stock) = {take}, each replaced by its own city.")
        if case.event.type == "RevoltChosen":
            how = " by default: the first by area name" if d.get("by_default") else ""
            lines.append(f"Chosen by {d['beneficiary']}, the beneficiary{how} (Q-S5): {', '.join(d['areas'])}.")
        else:
            lines.append(f"No choice to make: every city still to revolt goes ({', '.join(d['areas'])}).")
        lines += mismatch("beneficiary", chosen, d["beneficiary"]) + mismatch("cities taken", take, len(d["areas"]))
    nations = [victim] + ([d["beneficiary"]] if d.get("beneficiary") else [])
    return Told(tuple(nation_line(case.seen_before, n) for n in nations), tuple(lines))


def collected(case: Case) -> Told:
    """Each nation's tax: its rate per city (and the town levy), paid from stock to treasury (§19.1)."""
    d = case.event.data
    state = case.before
    short = {s["nation"]: s for s in d["shortfalls"]}
    lines = []
    for nation, paid in d["paid"].items():
        if nation in short:
            lines += _shortfall_lines(short[nation]) + [f"  it paid {paid}."]
            continue
        cities = len(cities_of(state, nation))
        filed = state.filed.get(f"rate:{nation}")
        rate = filed[0] if filed else ruleset_of(state).numbers["tax_per_city"]
        small = parts_of(state).pieces.towns and state.towns_on_board(nation)
        how = f"{paid} for its {cities} cities and {state.towns_on_board(nation)} towns (SC-12)" if small else (
            f"{rate} x {cities} cities = {paid}")
        lines.append(f"{nation}: {how}, stock {state.nations[nation].stock} -> {state.nations[nation].stock - paid}.")
    return Told(tuple(nation_line(case.seen_before, n) for n in d["paid"]), tuple(lines))


EXPLAINERS: dict[str, Explainer] = {
    "CitiesRevolted": revolt,
    "RevoltChosen": revolt,
    "RevoltingCitiesEliminated": revolt,
    "TaxCollected": collected,
}

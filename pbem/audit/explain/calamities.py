"""Explaining a calamity of phase 9: the losses, how they were counted, and who chose them.

The stage of the calamity that the event resolved is asked again of the
engine's own resolver (`pbem.rules.phases.calamities.resolution.RESOLVERS`)
on the state just before the event, so the unit points, the cities to pick
and the candidates are the ones the engine ruled with.

Who traded a calamity to its victim is told only to those two players and to
the moderator or an auditor, except where the rule itself hands the trader a
public part (he picks Treachery's city or Piracy's: the event names him).
"""

from __future__ import annotations

from typing import Any

from pbem.audit.explain.common import (
    Case,
    Explainer,
    Told,
    mismatch,
    nation_line,
    plural,
)
from pbem.rules.board import losses as L
from pbem.rules.board.battle import PIRATES
from pbem.rules.board.losses import Assign, Loss
from pbem.rules.board.support import reduction_tokens
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.choosing import (
    Stage,
    Strike,
    assigned_shares,
    city_owner,
    feasible,
    held,
    stage_index,
)
from pbem.rules.phases.calamities.reductions import current_reduction
from pbem.rules.phases.calamities.resolution import RESOLVERS
from pbem.rules.ruleset.rulebook import ruleset_of


def _stage(state: GameState) -> tuple[Strike | None, Any]:
    """The calamity being resolved just before the event, and the stage the engine was at (None: none known)."""
    if not state.calamities:
        return None, None
    cal = state.calamities[0]
    resolver = RESOLVERS.get(cal[0])
    if resolver is None or current_reduction(state) is not None:
        return cal, None
    return cal, resolver(state, cal, stage_index(state))


def _header(case: Case, cal: Strike, stage: Any, nations: list[str]) -> tuple[str, ...]:
    """The calamity, its primary victim, the trader where the viewer may know him, and the nations' numbers."""
    name, victim, giver = cal
    text = f"Calamity: {name}, primary victim {victim}"
    public_part = isinstance(stage, Stage) and giver is not None and stage.chooser == giver
    if giver and (case.party(victim, giver) or public_part):
        text += f", traded to it by {giver}"
    elif not ruleset_of(case.before).calamities[name].tradable:
        text += " (a calamity that cannot be traded)"
    lines = [text + "."]
    for nation in dict.fromkeys([victim, *nations]):
        if nation in case.before.nations:
            lines.append(nation_line(case.seen_before, nation))
    return tuple(lines)


def _tells_others(case: Case, cal: Strike) -> bool:
    """Whether the viewer may read which other players a secondary stage could strike.

    They are everyone but the victim and the trader (§29.61), so the list
    would name the trader, or show that there was none: only the two players
    and the overseers read it, unless the card cannot be traded at all.
    """
    name, victim, giver = cal
    return not ruleset_of(case.before).calamities[name].tradable or case.party(victim, giver)


def _unit_values(loss: Loss) -> str:
    text = "Unit points (§29.62): a token 1, a city eliminated 5, a city reduced 5 less the tokens it leaves"
    if loss.keep_one:
        text += "; one unit stays in each area he strips, so an eliminated city leaves 1 token and counts 4 (§30.6)"
    return text + "."


def _points_lines(case: Case, cal: Strike, loss: Loss) -> list[str]:
    """Where the unit points come from: the printed number, or the share given; then the victim's cards."""
    name, victim, _ = cal
    state = case.before
    if loss.role == "primary":
        base = ruleset_of(state).calamities[name].primary.get("unit_points", loss.points)
        lines = [f"{name} costs its primary victim {base} unit points ({', '.join(loss.cites[:1])})."]
        cards = held(state, loss.nation, name, "unit_points")
    else:
        base = dict(assigned_shares(state)).get(loss.nation, loss.points)
        lines = [f"{victim} gave {loss.nation} {base} of the secondary unit points (§29.61)."]
        cards = held(state, loss.nation, name, "assigned_unit_points") + held(state, loss.nation, name, "unit_points")
    aside = state.nations[loss.nation].set_aside
    if loss.points != base:
        why = ", ".join(dict.fromkeys(cards)) or "its cards"
        if aside and case.sees_hand(loss.nation):
            why += f" and Water set aside ({', '.join(aside)}, NT-12)"
        lines.append(f"{loss.nation}'s {why} change it: {base} -> {loss.points} (§32).")
    elif cards:
        lines.append(f"{loss.nation} holds {', '.join(dict.fromkeys(cards))}, which leaves it at {loss.points} here.")
    return lines


def _item_value(item: dict[str, Any], placements: dict[str, int]) -> tuple[int, str]:
    """The unit points of one loss as the rules count them, and how (``placements``: what each city leaves)."""
    area, effect = item["area"], item["effect"]
    if effect in ("tokens", "towns"):
        n = item[effect]
        return n, f"{area}: {plural(n, effect[:-1])} = {n}"
    placed = placements[area]
    value = L.CITY_POINTS - placed
    what = "eliminated" if effect == "city" else "reduced"
    left = f", leaving {plural(placed, 'token')}" if placed else ""
    return value, f"{area}: city {what}{left}: {L.CITY_POINTS} - {placed} = {value}"


def loss(case: Case) -> Told:
    cal, stage = _stage(case.before)
    d = case.event.data
    if cal is None or not isinstance(stage, Loss) or stage.nation != d["nation"]:
        return calamity(case)
    state = case.before
    lines = _points_lines(case, cal, stage) + [_unit_values(stage)]
    room = L.token_room(state, stage)
    cities = L.cities(state, stage)
    lines.append(f"{stage.nation} could remove {sum(room.values())} units ("
                 + (", ".join(f"{a} {n}" for a, n in room.items()) or "none") + ") and has "
                 + plural(len(cities), "city", "cities") + (f" ({', '.join(cities)})." if cities else "."))
    need = L.required(state, stage)
    if need == stage.points:
        lines.append(f"It must lose exactly {need}.")
    elif need > stage.points:
        lines.append(f"It cannot lose exactly {stage.points}: the least above that it can lose is {need}.")
    else:
        lines.append(f"It has only {need} to lose: everything goes.")
    items = tuple((i["area"], i["effect"], i.get(i["effect"], 1)) for i in d["losses"])
    placements = L.placements(state, stage, items)
    counted = [_item_value(item, placements) for item in d["losses"]]
    lines.append("Losses:")
    lines.extend(f"  {text}" for _, text in counted)
    values = [v for v, _ in counted]
    lines.append("Total: " + (" + ".join(map(str, values)) or "0") + f" = {sum(values)}.")
    if case.event.type == "CalamityLossTaken":
        lines.append(f"No choice was left: only one set of losses comes to {need}.")
    else:
        how = " by default: tokens first, by area name, then as few cities as possible" if d.get("by_default") else ""
        lines.append(f"Chosen by {stage.nation}, the player who loses them{how} (§29.62).")
    lines += mismatch("total", sum(values), need) + mismatch("points per loss", values, [c["points"] for c in d["losses"]])
    lines += mismatch("unit points due", stage.points, d["points"])
    return Told(_header(case, cal, stage, [stage.nation]), tuple(lines))


def shares(case: Case) -> Told:
    cal, stage = _stage(case.before)
    d = case.event.data
    if cal is None or not isinstance(stage, Assign):
        return calamity(case)
    name, victim, giver = cal
    caps = dict(stage.caps)
    most = sorted(set(caps.values()))
    cap_text = f"at most {most[0]} each" if len(most) == 1 else "at most " + ", ".join(f"{n} {c}" for n, c in caps.items())
    lines = [f"{name}: {victim} gives {stage.total} more unit points to other players, {cap_text} "
             f"({', '.join(stage.cites)})."]
    if _tells_others(case, cal):
        lines.append("Who may be given points, in A.S.T. order: " + (", ".join(caps) or "nobody") + "."
                     + (f" {giver} traded the card and is spared (§29.61)." if giver else ""))
    else:
        lines.append("Every other player may be given points, except the one who traded the card, if any (§29.61).")
    if stage.due() < stage.total:
        lines.append(f"Only {stage.due()} can be given: the caps add up to {sum(caps.values())}.")
    given = [(n, k) for n, k in d["shares"]]
    lines.append("Given: " + (" + ".join(f"{n} {k}" for n, k in given) or "nothing") + f" = {sum(k for _, k in given)}.")
    if case.event.type == "CalamityLossesShared":
        lines.append("No choice was left: only one way to give them.")
    else:
        how = " by default: the most to each player in A.S.T. order" if d.get("by_default") else ""
        lines.append(f"Chosen by {victim}, the primary victim{how}; each then chooses his own losses.")
    lines += mismatch("points to give", stage.due(), sum(k for _, k in given))
    return Told(_header(case, cal, stage, [n for n, _ in given]), tuple(lines))


def _city_lines(case: Case, stage: Stage, cities: list[dict[str, Any]]) -> list[str]:
    state = case.before
    lines = []
    spent: dict[str, int] = {}
    for c in cities:
        area, owner, effect = c["area"], c.get("owner", ""), c["effect"]
        if effect == "reduce":
            due = reduction_tokens(state, owner, area)
            stock = state.nations[owner].stock - spent.get(owner, 0)
            tokens = min(due, stock)
            spent[owner] = spent.get(owner, 0) + tokens
            lines.append(f"  {area} ({owner}): reduced to the area's limit, {due} tokens (§26.41); stock {stock}: "
                         f"{tokens} placed")
            lines += mismatch(f"tokens placed in {area}", tokens, c["tokens"])
        elif effect == "seize":
            lines.append(f"  {area} ({owner}): becomes " + ("a pirate city" if c["to"] == PIRATES else f"a city of {c['to']}"))
        elif effect == "eliminate":
            why = f" ({stage.to} has no city left in stock)" if stage.effect == "seize" and stage.to else ""
            lines.append(f"  {area} ({owner}): eliminated{why}")
        else:
            lines.append(f"  {area} ({owner}): {effect.replace('-', ' ')}")
    return lines


def cities(case: Case) -> Told:
    cal, stage = _stage(case.before)
    d = case.event.data
    if cal is None or not isinstance(stage, Stage):
        return calamity(case)
    name, _, giver = cal
    state = case.before
    what = {"reduce": "reduced", "seize": "taken"}.get(stage.effect, "struck")
    lines = [f"{name}: {plural(stage.count, 'city', 'cities')} to be {what}{stage.note} "
             f"({', '.join(stage.cites)})."]
    owners: dict[str, list[str]] = {}
    for area in stage.candidates:
        owners.setdefault(city_owner(state, area), []).append(area)
    need = feasible(state, stage)
    if stage.role == "secondary" and not _tells_others(case, cal):
        lines.append("Candidates: cities of the other players, except the one who traded the card, if any (§29.61).")
    else:
        lines.append("Candidates: " + ("; ".join(f"{o}'s {', '.join(a)}" for o, a in owners.items()) or "none") + ".")
        if stage.caps:
            lines.append("At most " + ", ".join(f"{c} of {n}'s" for n, c in stage.caps) + ".")
    if need < stage.count:
        lines.append(f"Only {need} can be picked.")
    if giver is not None and stage.chooser == giver:
        lines.append(f"{giver} chooses: the rule gives the choice to the player who traded the card ({stage.cites[0]}).")
    if case.event.type == "CalamityCitiesChosen":
        how = " by default: the first by area name" if d.get("by_default") else ""
        lines.append(f"Chosen by {stage.chooser}{how}:")
    else:
        lines.append("No choice was left: " + ("nothing to pick:" if need == 0 else "only one pick is legal:"))
    lines += _city_lines(case, stage, d["cities"]) if d["cities"] else ["  no city is affected"]
    return Told(_header(case, cal, stage, [stage.chooser]), tuple(lines))


def calamity(case: Case) -> Told:
    """Any other step of a calamity: which one it is and whom it strikes; the changes are told after."""
    cal, stage = _stage(case.before)
    if cal is None:
        return Told()
    return Told(_header(case, cal, stage, []), ())


def slaves(case: Case) -> Told:
    d = case.event.data
    name = d["calamity"]
    base = ruleset_of(case.before).calamities[name].primary["tokens_disabled"]
    lines = [f"{name}: {base} of the victim's tokens cannot support cities while it lasts (§30.42, D-10)."]
    if d["cards"]:
        lines.append(f"{d['victim']} holds {', '.join(d['cards'])}: {base} -> {d['disabled']} (§30.421).")
    lines.append(f"It has {d['on_board']} tokens on the board: min({d['disabled']}, {d['on_board']}) = "
                 f"{min(d['disabled'], d['on_board'])} cannot support; its cities are checked at once.")
    return Told(calamity(case).before, tuple(lines))


EXPLAINERS: dict[str, Explainer] = {
    "CalamityLossChosen": loss,
    "CalamityLossTaken": loss,
    "CalamityLossesGiven": shares,
    "CalamityLossesShared": shares,
    "CalamityStruck": cities,
    "CalamityCitiesChosen": cities,
    "SlavesRevolted": slaves,
    "CalamityResolved": calamity,
}

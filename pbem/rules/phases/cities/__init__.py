"""Phase 5: city construction, surplus removal, city support (seed 001: 5, 5A-5C; §25, §26).

Orders are simultaneous (Q-S19, R-2.6): every player who could build a city
this turn files his BUILD orders (or DONE); they stay secret until everyone
asked has filed or the deadline passes (default: no city). Then each player
in turn, in A.S.T.-ranking order, does all three steps (D-21):

5a. His cities are built: 6 of his tokens on a city site, 12 elsewhere (12 on
    an island site in a two-player game, §16); none where the population limit
    is 0 (D-7 `seed`); one city per area; at most 9 cities. Every token in the
    area goes back to its owner's stock, whoever owns it (D-20). With
    Architecture, once per turn, up to half of one city's tokens may come from
    his treasury, where no other player's tokens and no Barbarians stand (§25.3).
5b. His tokens above the population limits go to stock, and all his tokens in
    areas holding a city (seed 001: 5B). Agriculture raises the limit by one
    where only his tokens stand (§26.11; Public Works is ignored, Q-S14).
5c. Each city needs 2 of his tokens on the board. While short, he reduces a
    city of his choice: cities built this turn first (D-6), the city becoming
    as many tokens as the area's limit (+1 with Agriculture, §32.241) from his
    stock, counting at once; with too little stock he places what he has, so
    once the stock is empty a reduced city is simply eliminated (§26.41).
"""

from __future__ import annotations

from typing import Any

from pbem.rules.board.card_effects import card_effects
from pbem.rules.board.ranking import cities_in_stock, in_ast_order
from pbem.rules.board.support import (
    ReduceCity,
    apply_reduced,
    apply_surplus,
    apply_town_flipped,
    chosen_reduction,
    reduction_prompt,
    reductions_asked,
    sole_occupant,
    support_candidates,
    support_choices,
    support_shortfall,
    support_step,
    surplus,
    tell_reduced,
    tell_surplus,
    tell_town_flipped,
    towns_question,
)
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import PhaseRules, acting_nation, defaulted, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.cities.construction import (
    MAX_CHOICES,
    PHASE,
    SUPPORT_CITES,
    SURPLUS_CITES,
    BuildCities,
    FinishOrders,
    apply_built,
    build_line,
    buildable,
    check_build,
    filed_builds,
    resolve_builds,
    sees_orders,
    tell_built,
)
from pbem.rules.phases.cities.towns import (
    AS_MANY,
    TOWN_CITES,
    BuildTowns,
    apply_towns_built,
    architecture_cities,
    check_towns,
    filed_towns,
    has_architecture,
    sites_left,
    tell_towns_built,
    tokens_per_town,
    town_line,
    town_sites,
    towns_event,
    towns_treasury,
)
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

# -- the orders step --------------------------------------------------------------------------


def _can_order(state: GameState, nation: str) -> bool:
    """A city to build, or under Small Cities a town to make (SC-1)."""
    return bool(buildable(state, nation)) or (parts_of(state).pieces.towns and bool(town_sites(state, nation)))


def _asked(state: GameState) -> list[str]:
    """Who has a city (or a town) to decide on this turn (only they are asked)."""
    return [n for n in in_ast_order(state, state.nations) if _can_order(state, n)]


def _done(state: GameState, nation: str) -> bool:
    return f"done:{nation}" in state.filed


def _work(state: GameState) -> bool:
    """Anything at all to do in this phase (else it is skipped, R-2.5)."""
    return any(_can_order(state, n) or surplus(state, n) or support_shortfall(state, n) for n in state.nations)


def _build_choices(state: GameState, nation: str) -> tuple[str, ...]:
    """Complete answers: every possible city at once, each city alone, or none."""
    can = buildable(state, nation)
    room = cities_in_stock(state, nation)
    plain = [(a, 0) for a, t in can.items() if t == 0]
    helped = [(a, t) for a, t in can.items() if t > 0]
    lines: list[str] = []
    everything = plain[:room] + (helped[:1] if len(plain) < room else [])
    if everything:
        lines.append(build_line(everything))
    for a, t in can.items():
        line = build_line([(a, t)])
        if line not in lines:
            lines.append(line)
    return tuple(lines[: MAX_CHOICES - 1]) + ("DONE",)


def _town_orders(state: GameState, nation: str) -> list[list[tuple[tuple[str, int, int], ...]]]:
    """Town orders worth offering, in groups of which the first the engine accepts is offered.

    As many as the tokens make everywhere; each area alone; with Architecture,
    each area with as many more from treasury as is still allowed (SC-1, SC-3).
    """
    sites = sites_left(state, nation)
    groups = [[tuple((a, AS_MANY, 0) for a in sites)]] if len(sites) > 1 else []
    for area, most in sites.items():
        groups.append([((area, most, 0),)])
        if has_architecture(state, nation) and sole_occupant(state, nation, area):
            extra = min(most, 3, state.nations[nation].treasury // tokens_per_town(state, area))
            groups.append([((area, most, m),) for m in range(extra, 0, -1)])
    return groups


def _accepted(state: GameState, command: BuildCities | BuildTowns) -> bool:
    """Whether the order would be taken now: a prompt offers only lines the engine accepts."""
    try:
        (decide_build if isinstance(command, BuildCities) else decide_towns)(state, command)  # type: ignore[arg-type]
    except Rejection:
        return False
    return True


def _build_prompt(state: GameState, nation: str) -> Prompt:
    if parts_of(state).pieces.towns:
        return _towns_prompt(state, nation)
    n = state.nations[nation]
    can = buildable(state, nation)
    plain = [(a, 0) for a, t in can.items() if t == 0][: cities_in_stock(state, nation)]
    where = ", ".join(
        f"{a} ({state.area(a).tokens[nation]} tokens" + (f", {t} from treasury)" if t else ")") for a, t in can.items()
    )
    holdings = (
        f"Cities on the board {state.cities_on_board(nation)}, in stock {cities_in_stock(state, nation)}; "
        f"tokens on the board {state.tokens_on_board(nation)}, stock {n.stock}, treasury {n.treasury}."
    )
    situation = [f"You can build in: {where}.", holdings]
    if any(t for t in can.values()):
        situation.append("Architecture: one city this turn may take up to half its tokens from treasury (BUILD <area> TREASURY <n>).")
    return Prompt(
        who=nation.lower(),
        player_id=n.player_id,
        step="build-cities",
        question=(
            "City construction: name every city you build this turn on ONE line (BUILD Thebes, Memphis), "
            "or send DONE to build none. All tokens in the area go back to stock; each city then needs "
            f"{ruleset_of(state).numbers['city_support_tokens']} of your tokens on the board."
        ),
        choices=_build_choices(state, nation),
        template=build_line(plain) if plain else "DONE",
        default="no city is built",
        situation=tuple(situation),
        cites=("seed 001: 5A", "§25", "Q-S19"),
    )


def _on_file(state: GameState, nation: str) -> str:
    builds, towns = filed_builds(state, nation), filed_towns(state, nation)
    lines = ([build_line(builds)] if builds else []) + ([town_line(towns)] if towns else [])
    return "; ".join(lines)


def _towns_prompt(state: GameState, nation: str) -> Prompt:
    """Phase 5a under Small Cities: BUILD and TOWN lines are collected until DONE (or the deadline)."""
    n = state.nations[nation]
    filed = {a for a, _ in filed_builds(state, nation)} | {a for a, _, _ in filed_towns(state, nation)}
    cities = {a: t for a, t in buildable(state, nation).items() if a not in filed}
    cities = cities if len(filed_builds(state, nation)) < cities_in_stock(state, nation) else {}
    sites = sites_left(state, nation)
    offers: list[BuildCities | BuildTowns] = [BuildCities(n.player_id, ((a, t),)) for a, t in cities.items()]
    offers = [c for c in offers if _accepted(state, c)]
    for group in _town_orders(state, nation):
        offers += [c for c in (BuildTowns(n.player_id, t) for t in group) if _accepted(state, c)][:1]
    lines = [build_line(list(c.builds)) if isinstance(c, BuildCities) else town_line(list(c.towns)) for c in offers]
    situation = []
    if _on_file(state, nation):
        situation.append(f"On file: {_on_file(state, nation)}. Send DONE when that is all, or add more lines.")
    if cities:
        situation.append("You can build a city in: " + ", ".join(
            f"{a} ({state.area(a).tokens[nation]} tokens" + (f", {t} from treasury)" if t else ")") for a, t in cities.items()) + ".")
    if sites:
        situation.append("You can make towns in: " + ", ".join(
            f"{a} (up to {most}, {'1 token' if tokens_per_town(state, a) == 1 else '2 tokens'} a town)"
            for a, most in sites.items()) + ".")
    situation.append(
        f"Cities on the board {state.cities_on_board(nation)}, in stock {cities_in_stock(state, nation)}; towns "
        f"{state.towns_on_board(nation)}; tokens on the board {state.tokens_on_board(nation)}, stock {n.stock}, "
        f"treasury {n.treasury}.")
    if has_architecture(state, nation):
        situation.append("Architecture: each town you make may bring one more from treasury (TOWN <area> <n> TREASURY "
                         "<m>), at most 3 a turn; at most one city a turn where you used it.")
    return Prompt(
        who=nation.lower(),
        player_id=n.player_id,
        step="build-cities",
        question=(
            "City construction (Small Cities): send the cities you build (BUILD Thebes) and the towns you make "
            "(TOWN Memphis 2), each on its own line, then DONE. On a city site one token makes a town; elsewhere "
            "two, the second going to stock. Six towns in one area become a city; five at most stay in an area. "
            "Towns above an area's limit need one population token for every two."
        ),
        choices=tuple(f"{line}\nDONE" for line in lines[: MAX_CHOICES - 1]) + ("DONE",),
        template=f"{lines[0]}\nDONE" if lines else "DONE",
        default="what you have sent stands; with nothing sent, no city is built and no town made",
        situation=tuple(situation),
        cites=("seed 001: 5A", "seed 000: 1", "SC-1", "SC-2", "SC-3"),
    )


# -- the resolution step ----------------------------------------------------------------------


def _current(state: GameState) -> tuple[str, str] | None:
    """(nation, what it does next: build, surplus, reduce) for the first nation in A.S.T. order with work left."""
    for nation in in_ast_order(state, state.nations):
        if f"builds:{nation}" in state.filed:
            return nation, "build"
        if f"towns:{nation}" in state.filed:
            return nation, "towns"
        if surplus(state, nation):
            return nation, "surplus"
        if support_shortfall(state, nation) and support_candidates(state, nation):
            return nation, "reduce"
    return None


def _reduce_prompt(state: GameState, nation: str) -> Prompt | None:
    candidates = support_choices(state, nation)
    if candidates is None:
        return None
    support = ruleset_of(state).numbers["city_support_tokens"]
    cities = state.cities_on_board(nation)
    order = options_of(state).support_reduction_order
    rule = "cities built this turn go first" + (" (with cities gained this turn)" if order == "1991" else "")
    question = towns_question(state, nation) if parts_of(state).pieces.towns else (
        f"City support: your {cities} cities need {support * cities} of your tokens on the board; you have "
        f"{state.tokens_on_board(nation)}. Choose a city to reduce: it becomes tokens of yours from stock. "
        + reductions_asked(state, nation)
    )
    if parts_of(state).pieces.towns:
        rule = "towns above the limit first, the largest excess first; then " + rule
    return reduction_prompt(state, nation, candidates, question, rule, SUPPORT_CITES)


def pending(state: GameState) -> dict[str, Prompt]:
    if state.step == "":
        return {n.lower(): _build_prompt(state, n) for n in _asked(state) if not _done(state, n)}
    if state.step == "resolve":
        current = _current(state)
        if current and current[1] == "reduce":
            prompt = _reduce_prompt(state, current[0])
            if prompt:
                return {prompt.who: prompt}
    return {}


# -- folding ------------------------------------------------------------------------------------


def apply_ordered(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    builds = tuple(filed_builds(state, nation)) + tuple((a, t) for a, t in data["builds"])
    filed = state.filed.set(f"builds:{nation}", builds)
    if not parts_of(state).pieces.towns:  # the BUILD line is the whole answer; with towns, DONE closes it
        filed = filed.set(f"done:{nation}", (1,))
    return replace(state, filed=filed)


def apply_towns_ordered(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    towns = tuple(filed_towns(state, nation)) + tuple((a, n, m) for a, n, m in data["towns"])
    return replace(state, filed=state.filed.set(f"towns:{nation}", towns))


def apply_done(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, filed=state.filed.set(f"done:{data['nation']}", (1,)))


def apply_revealed(state: GameState, data: dict[str, Any]) -> GameState:
    filed = state.filed
    for key in [k for k in filed if k.startswith("done:")]:
        filed = filed.without(key)
    return replace(state, step="resolve", filed=filed)


# -- deciding -------------------------------------------------------------------------------------


def decide_build(state: GameState, command: BuildCities) -> list[Event]:
    nation = acting_nation(state, command.player_id)
    if state.phase != PHASE or state.step != "":
        raise Rejection("cities are built in phase 5, before its orders are resolved", "seed 001: 5A")
    if not buildable(state, nation):
        raise Rejection("you have no tokens enough to build a city anywhere this turn", "seed 001: 5A")
    taken = filed_builds(state, nation)
    builds: list[tuple[str, int]] = []
    towns = filed_towns(state, nation)
    for area, treasury in command.builds:
        if any(a == area for a, _, _ in towns):
            raise Rejection(f"{area}: you ordered towns there; a city and towns never share an area", "SC-5")
        builds.append((area, check_build(state, nation, area, treasury, taken + builds)))
    spent = sum(t for _, t in taken + builds) + towns_treasury(state, nation)
    if spent > state.nations[nation].treasury:  # one treasury pays §25.3 cities and Architecture's towns (SC-3)
        raise Rejection(f"your orders would take {spent} tokens from treasury; you hold {state.nations[nation].treasury}",
                        "§25.3")
    if any(t for _, t in builds) and architecture_cities(state, nation, towns):
        raise Rejection("at most one city a turn is placed where you used Architecture, and your towns in "
                        + ", ".join(architecture_cities(state, nation, towns)) + " already make it", "SC-3")
    room = cities_in_stock(state, nation)
    if len(taken) + len(builds) > room:
        raise Rejection(f"you have only {room} cities in stock (at most {ruleset_of(state).cities_per_nation} in play)", "§25.1")
    cites = ("seed 001: 5A", "§25.1") + (("§25.3",) if any(t for _, t in builds) else ())
    return [Event("CitiesOrdered", {"nation": nation, "builds": [[a, t] for a, t in builds]}, cites)]


def decide_towns(state: GameState, command: BuildTowns) -> list[Event]:
    nation = acting_nation(state, command.player_id)
    if not parts_of(state).pieces.towns:
        raise Rejection("towns are made only in the Small Cities variant, which this game does not play", "SC-1")
    if state.phase != PHASE or state.step != "":
        raise Rejection("towns are made in phase 5, before its orders are resolved", "SC-1")
    builds = filed_builds(state, nation)
    orders = check_towns(state, nation, command, filed_towns(state, nation), [a for a, _ in builds],
                         any(t for _, t in builds), sum(t for _, t in builds))
    cites = TOWN_CITES + (("SC-3",) if any(m for _, _, m in orders) else ())
    return [Event("TownsOrdered", {"nation": nation, "towns": [list(t) for t in orders]}, cites)]


def decide_done(state: GameState, command: FinishOrders, by_default: bool = False) -> list[Event]:
    nation = acting_nation(state, command.player_id)
    if state.phase != PHASE or state.step != "":
        raise Rejection("there are no orders of yours to complete now")
    if nation not in _asked(state):
        raise Rejection("you have no city to build this turn, so nothing is asked of you", "seed 001: 5A")
    data: dict[str, Any] = {"nation": nation}
    if by_default:
        data["by_default"] = True
    return [Event("CityOrdersDone", data, ("seed 001: 5A",))]


def decide_reduce(state: GameState, command: ReduceCity, by_default: bool = False) -> list[Event]:
    nation = acting_nation(state, command.player_id)
    current = _current(state) if state.phase == PHASE and state.step == "resolve" else None
    if current is None or current != (nation, "reduce") or _reduce_prompt(state, nation) is None:
        raise Rejection("no city of yours needs reducing now, so this REDUCE is not needed", "seed 001: 5C")
    data = chosen_reduction(state, nation, command.area, "seed 001: 5C", by_default)
    return [support_step(state, nation, command.area, "CityReductionChosen", SUPPORT_CITES, data)]


def defaults(state: GameState, prompt: Prompt) -> list[Event]:
    if prompt.step == "build-cities":
        return decide_done(state, FinishOrders(prompt.player_id), True)
    nation = acting_nation(state, prompt.player_id)
    return decide_reduce(state, ReduceCity(prompt.player_id, support_candidates(state, nation)[0]), True)


# -- resolving -----------------------------------------------------------------------------------------


def settle(state: GameState, draws: Draws) -> list[Event]:
    if state.step == "":
        if not _work(state):
            return [phase_ended(PHASE, ("§18.2", "R-2.5"))]
        if any(not _done(state, n) for n in _asked(state)):
            return []
        builds = {n: [list(b) for b in filed_builds(state, n)] for n in in_ast_order(state, state.nations) if filed_builds(state, n)}
        data: dict[str, Any] = {"builds": builds, "asked": _asked(state)}
        if parts_of(state).pieces.towns:
            data["towns"] = {n: [list(t) for t in filed_towns(state, n)] for n in in_ast_order(state, state.nations)
                             if filed_towns(state, n)}
        return [Event("CityOrdersRevealed", data, ("seed 001: 5", "Q-S19", "D-21"))]
    if state.step != "resolve":
        return []
    current = _current(state)
    if current is None:
        return [phase_ended(PHASE, ("seed 001: 5", "D-21"))]
    nation, work = current
    if work == "build":
        return [resolve_builds(state, nation)]
    if work == "towns":
        return [towns_event(state, nation, f"arch-city:{nation}" in state.filed)]
    if work == "surplus":
        removed = surplus(state, nation)
        agriculture = bool(card_effects(state, nation, "population-limit-bonus"))
        cites = SURPLUS_CITES + (("§26.11",) if agriculture else ())
        return [Event("SurplusRemoved", {"nation": nation, "removed": removed}, cites)]
    if _reduce_prompt(state, nation) is not None:
        return []
    return [support_step(state, nation, support_candidates(state, nation)[0], "CityReduced", SUPPORT_CITES)]


# -- telling ------------------------------------------------------------------------------------------


def _tell_ordered(state: GameState, event: Event, viewer: str) -> str:
    nation = event.data["nation"]
    if not sees_orders(viewer, nation):
        return f"{nation} has given its city orders."
    return f"{nation} orders: {build_line([tuple(b) for b in event.data['builds']])}."  # type: ignore[misc]


def _tell_towns_ordered(state: GameState, event: Event, viewer: str) -> str:
    nation = event.data["nation"]
    if not sees_orders(viewer, nation):
        return f"{nation} has given its town orders."
    return f"{nation} orders: {town_line([tuple(t) for t in event.data['towns']])}."  # type: ignore[misc]


def _tell_done(state: GameState, event: Event, viewer: str) -> str:
    how = f" ({defaulted(event.data)}: no city)" if event.data.get("by_default") else ""
    return f"{event.data['nation']} has completed its city orders{how}."


def _tell_revealed(state: GameState, event: Event, viewer: str) -> str | None:
    builds = event.data["builds"]
    if not event.data.get("asked", True):
        return None  # nobody could build: the phase goes straight to surplus and support
    if not builds:
        return "City orders are in: nobody builds a city."
    return "City orders are in: " + "; ".join(
        f"{n} builds in {', '.join(a for a, _ in b)}" for n, b in builds.items()
    ) + "."


RULES = PhaseRules(
    name=PHASE,
    apply={
        "CitiesOrdered": apply_ordered,
        "TownsOrdered": apply_towns_ordered,
        "TownsBuilt": apply_towns_built,
        "CityOrdersDone": apply_done,
        "CityOrdersRevealed": apply_revealed,
        "CitiesBuilt": apply_built,
        "SurplusRemoved": apply_surplus,
        "CityReductionChosen": apply_reduced,
        "CityReduced": apply_reduced,
        "TownFlipChosen": apply_town_flipped,
        "TownFlipped": apply_town_flipped,
    },
    decide={BuildCities: decide_build, BuildTowns: decide_towns, FinishOrders: decide_done, ReduceCity: decide_reduce},
    pending=pending,
    defaults=defaults,
    settle=settle,
    inputs={
        "CitiesOrdered": lambda s, d: BuildCities(s.nations[d["nation"]].player_id, tuple((a, t) for a, t in d["builds"])),
        "TownsOrdered": lambda s, d: BuildTowns(s.nations[d["nation"]].player_id, tuple((a, n, m) for a, n, m in d["towns"])),
        "CityOrdersDone": lambda s, d: FinishOrders(s.nations[d["nation"]].player_id),
        "CityReductionChosen": lambda s, d: ReduceCity(s.nations[d["nation"]].player_id, d["area"]),
        "TownFlipChosen": lambda s, d: ReduceCity(s.nations[d["nation"]].player_id, d["area"]),
    },
    narrate={
        "CitiesOrdered": _tell_ordered,
        "TownsOrdered": _tell_towns_ordered,
        "TownsBuilt": tell_towns_built,
        "CityOrdersDone": _tell_done,
        "CityOrdersRevealed": _tell_revealed,
        "CitiesBuilt": tell_built,
        "SurplusRemoved": tell_surplus,
        "CityReductionChosen": tell_reduced,
        "CityReduced": tell_reduced,
        "TownFlipChosen": tell_town_flipped,
        "TownFlipped": tell_town_flipped,
    },
)

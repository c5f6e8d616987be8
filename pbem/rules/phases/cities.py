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

from dataclasses import dataclass, replace
from typing import Any

from pbem.rules.board.card_effects import card_effects
from pbem.rules.board.ranking import cities_in_stock, in_ast_order
from pbem.rules.board.support import (
    ReduceCity,
    apply_reduced,
    apply_surplus,
    chosen_reduction,
    cities_of,
    reduction,
    reduction_candidates,
    reduction_prompt,
    sole_occupant,
    support_shortfall,
    surplus,
    tell_reduced,
    tell_surplus,
    tokens_to_stock,
)
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import FrozenMap
from pbem.rules.core.phase import PhaseRules, acting_nation, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import ruleset_of

PHASE = "city-construction"
AS_NEEDED = -1  # BUILD <area> TREASURY with no number: as many as the city needs
MAX_CHOICES = 60
BUILD_CITES = ("seed 001: 5A", "§25.1", "§25.2", "D-20")
SURPLUS_CITES = ("seed 001: 5B", "§26.1", "Q-S14")
SUPPORT_CITES = ("seed 001: 5C", "§26.3", "§26.41", "D-6")


@dataclass(frozen=True)
class BuildCities:
    """BUILD: cities to build this turn, (area, tokens from treasury) each; 0 = none, -1 = as needed."""

    player_id: int
    builds: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class FinishOrders:
    """DONE: my orders for this step are complete (a player who builds nothing says so)."""

    player_id: int


# -- the rules as numbers ----------------------------------------------------------------


def tokens_required(state: GameState, area: str) -> int | None:
    """Tokens of one nation needed to build a city in the area; None if no city may stand there."""
    rules = ruleset_of(state)
    spec = rules.areas[area]
    if spec.population_limit == 0 and options_of(state).zero_limit_city_ban == "seed":
        return None  # D-7: never on a limit-0 area under the seed rule
    numbers = rules.numbers
    if not spec.has_city_site:
        return numbers["city_tokens_off_site"]
    players = len(state.players)
    if spec.island and players in rules.player_counts and rules.setup_for(players).island_city_sites_ignored:
        return numbers["island_city_tokens_two_players"]
    return numbers["city_tokens_on_site"]


def treasury_allowance(state: GameState, nation: str, required: int) -> int:
    """Most tokens of one city that may come from treasury with Architecture (§25.3), 0 without it."""
    effects = card_effects(state, nation, "city-build-from-treasury")
    if not effects:
        return 0
    share = max(e.get("max_percent", 0) for e in effects)
    return min(required * share // 100, state.nations[nation].treasury)


def buildable(state: GameState, nation: str) -> dict[str, int]:
    """Areas where the nation could build now -> tokens it would need from treasury (0: none)."""
    out: dict[str, int] = {}
    if cities_in_stock(state, nation) <= 0:
        return out
    for name in sorted(state.areas):
        area = state.areas[name]
        have = area.tokens.get(nation, 0)
        if not have or area.city is not None or name not in ruleset_of(state).areas:
            continue
        required = tokens_required(state, name)
        if required is None:
            continue
        if have >= required:
            out[name] = 0
        elif sole_occupant(state, nation, name) and required - have <= treasury_allowance(state, nation, required):
            out[name] = required - have
    return out


# -- the orders step --------------------------------------------------------------------------


def _asked(state: GameState) -> list[str]:
    """Who has a city to decide on this turn (only they are asked)."""
    return [n for n in in_ast_order(state, state.nations) if buildable(state, n)]


def _filed(state: GameState, nation: str) -> list[tuple[str, int]]:
    return [tuple(b) for b in state.filed.get(f"builds:{nation}", ())]  # type: ignore[misc]


def _done(state: GameState, nation: str) -> bool:
    return f"done:{nation}" in state.filed


def _work(state: GameState) -> bool:
    """Anything at all to do in this phase (else it is skipped, R-2.5)."""
    return any(buildable(state, n) or surplus(state, n) or support_shortfall(state, n) for n in state.nations)


def _build_line(builds: list[tuple[str, int]]) -> str:
    return "BUILD " + ", ".join(f"{a} TREASURY {t}" if t else a for a, t in builds)


def _build_choices(state: GameState, nation: str) -> tuple[str, ...]:
    """Complete answers: every possible city at once, each city alone, or none."""
    can = buildable(state, nation)
    room = cities_in_stock(state, nation)
    plain = [(a, 0) for a, t in can.items() if t == 0]
    helped = [(a, t) for a, t in can.items() if t > 0]
    lines: list[str] = []
    everything = plain[:room] + (helped[:1] if len(plain) < room else [])
    if everything:
        lines.append(_build_line(everything))
    for a, t in can.items():
        line = _build_line([(a, t)])
        if line not in lines:
            lines.append(line)
    return tuple(lines[: MAX_CHOICES - 1]) + ("DONE",)


def _build_prompt(state: GameState, nation: str) -> Prompt:
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
        template=_build_line(plain) if plain else "DONE",
        default="no city is built",
        situation=tuple(situation),
        cites=("seed 001: 5A", "§25", "Q-S19"),
    )


# -- the resolution step ----------------------------------------------------------------------


def _current(state: GameState) -> tuple[str, str] | None:
    """(nation, what it does next: build, surplus, reduce) for the first nation in A.S.T. order with work left."""
    for nation in in_ast_order(state, state.nations):
        if f"builds:{nation}" in state.filed:
            return nation, "build"
        if surplus(state, nation):
            return nation, "surplus"
        if support_shortfall(state, nation) and cities_of(state, nation):
            return nation, "reduce"
    return None


def _reduce_prompt(state: GameState, nation: str) -> Prompt | None:
    candidates = reduction_candidates(state, nation)
    if len(candidates) < 2:
        return None
    n = state.nations[nation]
    support = ruleset_of(state).numbers["city_support_tokens"]
    cities = state.cities_on_board(nation)
    if n.stock == 0 and -(-support_shortfall(state, nation) // support) >= cities:
        return None  # an empty stock and every city must go: nothing to choose
    order = options_of(state).support_reduction_order
    rule = "cities built this turn go first" + (" (with cities gained this turn)" if order == "1991" else "")
    question = (
        f"City support: your {cities} cities need {support * cities} of your tokens on the board; you have "
        f"{state.tokens_on_board(nation)}. Choose a city to reduce: it becomes tokens of yours from stock, "
        "which count at once. You are asked again if more must go."
    )
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
    builds = tuple(_filed(state, nation)) + tuple((a, t) for a, t in data["builds"])
    filed = state.filed.set(f"builds:{nation}", builds).set(f"done:{nation}", (1,))
    return replace(state, filed=filed)


def apply_done(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, filed=state.filed.set(f"done:{data['nation']}", (1,)))


def apply_revealed(state: GameState, data: dict[str, Any]) -> GameState:
    filed = state.filed
    for key in [k for k in filed if k.startswith("done:")]:
        filed = filed.without(key)
    return replace(state, step="resolve", filed=filed)


def apply_built(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    for city in data["cities"]:
        area = state.area(city["area"])
        for owner, count in area.tokens.items():
            state = tokens_to_stock(state, owner, count)
        state = state.with_area(city["area"], replace(area, tokens=FrozenMap(), city=nation))
        n = state.nations[nation]
        state = state.with_nation(replace(n, treasury=n.treasury - city["treasury"], stock=n.stock + city["treasury"]))
    built = state.built_this_turn + tuple(c["area"] for c in data["cities"] if c["area"] not in state.built_this_turn)
    return replace(state, built_this_turn=built, filed=state.filed.without(f"builds:{nation}"))


# -- deciding -------------------------------------------------------------------------------------


def _check_build(state: GameState, nation: str, area: str, treasury: int, taken: list[tuple[str, int]]) -> int:
    """The tokens this build takes from treasury, or a Rejection saying why it cannot be built."""
    spot = state.area(area)
    if area in (a for a, _ in taken):
        raise Rejection(f"{area}: you already ordered a city there", "seed 001: 5A")
    if spot.city is not None:
        raise Rejection(f"{area} already holds a city; each area holds only one", "seed 001: 5A")
    required = tokens_required(state, area)
    if required is None:
        raise Rejection(f"{area} has population limit 0: no city may be built there, whatever cards you hold", "D-7")
    have = spot.tokens.get(nation, 0)
    short = max(0, required - have)
    if not short:
        return 0
    if treasury == 0:
        hint = " (with Architecture add TREASURY <n>)" if card_effects(state, nation, "city-build-from-treasury") else ""
        raise Rejection(f"{area}: a city there needs {required} of your tokens and you have {have}{hint}", "seed 001: 5A")
    if not card_effects(state, nation, "city-build-from-treasury"):
        raise Rejection("only a holder of Architecture may build with tokens from treasury", "§25.3")
    if any(t for _, t in taken):
        raise Rejection("Architecture helps build only one city per turn", "§25.3")
    if not sole_occupant(state, nation, area):
        raise Rejection(f"{area}: Architecture cannot be used where other players' tokens or Barbarians stand", "§25.3")
    half = required * max(e.get("max_percent", 0) for e in card_effects(state, nation, "city-build-from-treasury")) // 100
    if short > half:
        raise Rejection(f"{area}: at most {half} of the {required} tokens may come from treasury; you have {have} there", "§25.3")
    if short > state.nations[nation].treasury:
        raise Rejection(f"{area}: you need {short} from treasury and hold {state.nations[nation].treasury}", "§25.3")
    if treasury != AS_NEEDED and treasury < short:
        raise Rejection(f"{area}: you need {short} tokens from treasury, not {treasury}", "§25.3")
    return short


def decide_build(state: GameState, command: BuildCities) -> list[Event]:
    nation = acting_nation(state, command.player_id)
    if state.phase != PHASE or state.step != "":
        raise Rejection("cities are built in phase 5, before its orders are resolved", "seed 001: 5A")
    if nation not in _asked(state):
        raise Rejection("you have no tokens enough to build a city anywhere this turn", "seed 001: 5A")
    taken = _filed(state, nation)
    builds: list[tuple[str, int]] = []
    for area, treasury in command.builds:
        builds.append((area, _check_build(state, nation, area, treasury, taken + builds)))
    room = cities_in_stock(state, nation)
    if len(taken) + len(builds) > room:
        raise Rejection(f"you have only {room} cities in stock (at most {ruleset_of(state).cities_per_nation} in play)", "§25.1")
    cites = ("seed 001: 5A", "§25.1") + (("§25.3",) if any(t for _, t in builds) else ())
    return [Event("CitiesOrdered", {"nation": nation, "builds": [[a, t] for a, t in builds]}, cites)]


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
        raise Rejection("no city of yours needs reducing now", "seed 001: 5C")
    data = chosen_reduction(state, nation, command.area, "seed 001: 5C", by_default)
    return [Event("CityReductionChosen", data, SUPPORT_CITES)]


def defaults(state: GameState, prompt: Prompt) -> list[Event]:
    if prompt.step == "build-cities":
        return decide_done(state, FinishOrders(prompt.player_id), True)
    nation = acting_nation(state, prompt.player_id)
    return decide_reduce(state, ReduceCity(prompt.player_id, reduction_candidates(state, nation)[0]), True)


# -- resolving -----------------------------------------------------------------------------------------


def _resolve_builds(state: GameState, nation: str) -> Event:
    cities, skipped = [], []
    done: list[tuple[str, int]] = []
    for area, treasury in _filed(state, nation):
        try:
            used = _check_build(state, nation, area, treasury or 0, done)
        except Rejection as exc:  # cannot happen on the standard board (D-20); kept for house maps
            skipped.append({"area": area, "why": exc.message})
            continue
        if len(done) >= cities_in_stock(state, nation):
            skipped.append({"area": area, "why": "no city left in stock"})
            continue
        done.append((area, used))
        removed = dict(state.area(area).tokens)
        cities.append({"area": area, "treasury": used, "removed": removed})
    cites = BUILD_CITES + ("D-21",) + (("§25.3",) if any(c["treasury"] for c in cities) else ())
    return Event("CitiesBuilt", {"nation": nation, "cities": cities, "skipped": skipped}, cites)


def settle(state: GameState, draws: Draws) -> list[Event]:
    if state.step == "":
        if not _work(state):
            return [phase_ended(PHASE, ("§18.2", "R-2.5"))]
        if any(not _done(state, n) for n in _asked(state)):
            return []
        builds = {n: [list(b) for b in _filed(state, n)] for n in in_ast_order(state, state.nations) if _filed(state, n)}
        data = {"builds": builds, "asked": _asked(state)}
        return [Event("CityOrdersRevealed", data, ("seed 001: 5", "Q-S19", "D-21"))]
    if state.step != "resolve":
        return []
    current = _current(state)
    if current is None:
        return [phase_ended(PHASE, ("seed 001: 5", "D-21"))]
    nation, work = current
    if work == "build":
        return [_resolve_builds(state, nation)]
    if work == "surplus":
        removed = surplus(state, nation)
        agriculture = bool(card_effects(state, nation, "population-limit-bonus"))
        cites = SURPLUS_CITES + (("§26.11",) if agriculture else ())
        return [Event("SurplusRemoved", {"nation": nation, "removed": removed}, cites)]
    if _reduce_prompt(state, nation) is not None:
        return []
    area = reduction_candidates(state, nation)[0]
    return [Event("CityReduced", reduction(state, nation, area), SUPPORT_CITES)]


# -- telling ------------------------------------------------------------------------------------------


def _sees(viewer: str, nation: str) -> bool:
    return viewer in ("moderator", "auditor") or viewer == f"player:{nation.lower()}"


def _tell_ordered(state: GameState, event: Event, viewer: str) -> str:
    nation = event.data["nation"]
    if not _sees(viewer, nation):
        return f"{nation} has given its city orders."
    return f"{nation} orders: {_build_line([tuple(b) for b in event.data['builds']])}."  # type: ignore[misc]


def _tell_done(state: GameState, event: Event, viewer: str) -> str:
    how = " (deadline passed: no city)" if event.data.get("by_default") else ""
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


def _tell_built(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    parts = []
    for c in d["cities"]:
        extra = f", {c['treasury']} tokens from treasury (Architecture)" if c["treasury"] else ""
        parts.append(f"{c['area']}{extra}")
    text = f"{d['nation']} built {len(d['cities'])} cit{'y' if len(d['cities']) == 1 else 'ies'}: {', '.join(parts)}." if parts else ""
    for s in d.get("skipped", ()):
        text += f" {d['nation']} could not build in {s['area']}: {s['why']}."
    return text.strip() or f"{d['nation']} built no city."


RULES = PhaseRules(
    name=PHASE,
    apply={
        "CitiesOrdered": apply_ordered,
        "CityOrdersDone": apply_done,
        "CityOrdersRevealed": apply_revealed,
        "CitiesBuilt": apply_built,
        "SurplusRemoved": apply_surplus,
        "CityReductionChosen": apply_reduced,
        "CityReduced": apply_reduced,
    },
    decide={BuildCities: decide_build, FinishOrders: decide_done, ReduceCity: decide_reduce},
    pending=pending,
    defaults=defaults,
    settle=settle,
    inputs={
        "CitiesOrdered": lambda s, d: BuildCities(s.nations[d["nation"]].player_id, tuple((a, t) for a, t in d["builds"])),
        "CityOrdersDone": lambda s, d: FinishOrders(s.nations[d["nation"]].player_id),
        "CityReductionChosen": lambda s, d: ReduceCity(s.nations[d["nation"]].player_id, d["area"]),
    },
    narrate={
        "CitiesOrdered": _tell_ordered,
        "CityOrdersDone": _tell_done,
        "CityOrdersRevealed": _tell_revealed,
        "CitiesBuilt": _tell_built,
        "SurplusRemoved": tell_surplus,
        "CityReductionChosen": tell_reduced,
        "CityReduced": tell_reduced,
    },
)

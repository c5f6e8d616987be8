"""Phase 10: special abilities — Monotheism (seed 003: 10; R-3.4; D-15; §32.941-942).

Each Monotheism holder in A.S.T.-ranking order may convert one area
land-adjacent to an area holding his units (tokens or a city): the units of
other players there are replaced by his own from stock (a city by one of
his cities). Units of Monotheism or Theology holders, Barbarians and Pirate
cities are never converted. He needs enough in stock for every unit he
converts. Each holder sees the conversions made before his. Under Small
Cities the other players' towns there become his towns, each needing a token
from his stock like a token does (Q-SC10); his own towns count as units he
converts from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.board.ranking import cities_in_stock, in_ast_order
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import PhaseRules, defaulted, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of

PHASE = "special-abilities"
CARD = "Monotheism"
IMMUNE = ("Monotheism", "Theology")
CITES = ("seed 003: 10", "R-3.4", "D-15", "§32.941", "§32.942")
TOWN_CITES = CITES + ("Q-SC10",)


@dataclass(frozen=True)
class Convert:
    """CONVERT <area>, or CONVERT NONE (area None)."""

    player_id: int
    area: str | None


def _holders(state: GameState) -> list[str]:
    return [n for n in in_ast_order(state, state.nations) if CARD in state.nations[n].civ_cards]


def _next(state: GameState) -> str | None:
    done = state.filed.get("converted", ())
    for nation in _holders(state):
        if nation not in done:
            return nation
    return None


def _convertible(state: GameState, nation: str, area: str) -> dict[str, Any] | None:
    """What converting the area would change: {"tokens": {owner: n}, "city": owner or None}; None if nothing."""
    spec = state.area(area)
    immune = {n for n in state.nations if any(c in state.nations[n].civ_cards for c in IMMUNE)}

    def convertible(owner: str) -> bool:
        return owner != nation and owner in state.nations and owner not in immune

    tokens = {o: k for o, k in spec.tokens.items() if convertible(o)}
    towns = {o: k for o, k in spec.towns.items() if convertible(o) and k}
    city = spec.city if spec.city is not None and convertible(spec.city) else None
    if not tokens and not towns and city is None:
        return None
    if sum(tokens.values()) + sum(towns.values()) > state.nations[nation].stock or (city and cities_in_stock(state, nation) < 1):
        return None  # not enough in stock to replace them
    return {"tokens": dict(sorted(tokens.items())), "city": city} | ({"towns": dict(sorted(towns.items()))} if towns else {})


def targets(state: GameState, nation: str) -> list[str]:
    """Areas the nation may convert now, by name."""
    adjacency = ruleset_of(state).land_adjacency
    mine = [a for a, s in state.areas.items() if s.tokens.get(nation, 0) or s.towns.get(nation, 0) or s.city == nation]
    near = sorted({b for a in mine for b in adjacency.get(a, ())})
    return [a for a in near if _convertible(state, nation, a) is not None]


def _prompt(state: GameState) -> Prompt | None:
    nation = _next(state) if state.phase == PHASE else None
    if nation is None:
        return None
    options = targets(state, nation)
    if not options:
        return None
    n = state.nations[nation]

    def describe(area: str) -> str:
        c = _convertible(state, nation, area)
        assert c is not None
        parts = [f"{k} {o}" for o, k in c["tokens"].items()] + [f"{k} {o} towns" for o, k in c.get("towns", {}).items()]
        parts += [f"{c['city']} city"] if c["city"] else []
        return f"{area} ({', '.join(parts)})"

    return Prompt(
        who=nation.lower(),
        player_id=n.player_id,
        step="monotheism",
        question="Monotheism: you may convert the units of one area next to yours by land; they become your own from stock.",
        choices=tuple(f"CONVERT {a}" for a in options[:59]) + ("CONVERT NONE",),
        template=f"CONVERT {options[0]}",
        default="no conversion",
        situation=("You may convert: " + "; ".join(describe(a) for a in options) + ".", f"Stock {n.stock}, cities in stock {cities_in_stock(state, nation)}."),
        cites=CITES,
    )


def pending(state: GameState) -> dict[str, Prompt]:
    prompt = _prompt(state)
    return {prompt.who: prompt} if prompt else {}


def decide_convert(state: GameState, command: Convert, by_default: bool = False) -> list[Event]:
    prompt = _prompt(state)
    if prompt is None or prompt.player_id != command.player_id:
        raise Rejection("no conversion is yours to make now; Monotheism holders convert in A.S.T. order in phase 10", "R-3.4")
    nation = _next(state)
    assert nation is not None
    data: dict[str, Any] = {"nation": nation, "area": command.area}
    if command.area is not None:
        if command.area not in targets(state, nation):
            raise Rejection(
                f"{command.area}: not an area you may convert; choose from {', '.join(targets(state, nation))} or NONE", "§32.941"
            )
        data.update(_convertible(state, nation, command.area) or {})
    if by_default:
        data["by_default"] = True
    return [Event("AreaConverted", data, TOWN_CITES if data.get("towns") else CITES)]


def defaults(state: GameState, prompt: Prompt) -> list[Event]:
    return decide_convert(state, Convert(prompt.player_id, None), True)


def apply_converted(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    filed = state.filed.set("converted", tuple(state.filed.get("converted", ())) + (nation,))
    state = replace(state, filed=filed)
    if data["area"] is None:
        return state
    name = data["area"]
    area = state.area(name)
    moved = 0
    for owner, count in data["tokens"].items():
        area = area.add_tokens(owner, -count)
        o = state.nations[owner]
        state = state.with_nation(replace(o, stock=o.stock + count))
        moved += count
    area = area.add_tokens(nation, moved)
    towns = 0
    for owner, count in data.get("towns", {}).items():  # towns become his towns (Q-SC10)
        area = area.add_towns(owner, -count)
        o = state.nations[owner]
        state = state.with_nation(replace(o, stock=o.stock + count))
        towns += count
    area = area.add_towns(nation, towns) if towns else area
    moved += towns
    if data["city"]:
        area = replace(area, city=nation)
        if name not in state.gained_this_turn:
            state = replace(state, gained_this_turn=state.gained_this_turn + (name,))
    state = state.with_area(name, area)
    n = state.nations[nation]
    return state.with_nation(replace(n, stock=n.stock - moved))


def apply_passed(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, filed=state.filed.set("converted", tuple(state.filed.get("converted", ())) + (data["nation"],)))


def settle(state: GameState, draws: Draws) -> list[Event]:
    nation = _next(state)
    if nation is None:
        return [phase_ended(PHASE, ("seed 003: 10", "R-3.4"))]
    if _prompt(state) is None:
        return [Event("NothingToConvert", {"nation": nation}, CITES)]
    return []


def _tell(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    if d["area"] is None:
        how = f" ({defaulted(d)})" if d.get("by_default") else ""
        return f"{d['nation']} converts nothing with Monotheism{how}."
    parts = [f"{k} tokens of {o}" for o, k in d["tokens"].items()] + [f"{k} towns of {o}" for o, k in d.get("towns", {}).items()]
    parts += [f"the city of {d['city']}"] if d["city"] else []
    return f"{d['nation']} converts {d['area']} with Monotheism: {', '.join(parts)} become {d['nation']}'s."


RULES = PhaseRules(
    name=PHASE,
    apply={"AreaConverted": apply_converted, "NothingToConvert": apply_passed},
    decide={Convert: decide_convert},
    pending=pending,
    defaults=defaults,
    settle=settle,
    inputs={"AreaConverted": lambda s, d: Convert(s.nations[d["nation"]].player_id, d["area"])},
    narrate={
        "AreaConverted": _tell,
        "NothingToConvert": lambda s, e, v: f"{e.data['nation']} holds Monotheism but has no area it can convert.",
    },
)

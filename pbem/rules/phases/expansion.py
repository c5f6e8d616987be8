"""Phase 2: population expansion and census (seed 003: 2; §20, §21; R-2.1, D-12).

2a. Every nation grows in every area holding its tokens but no city: one
token where it has exactly one, two where it has two or more (the numbers
come from the ruleset data). Growth may exceed the population limit; the
surplus goes at 5b. It is automatic, except for a nation whose stock cannot
cover all of it: that player distributes what his stock holds (GROW). The
nations are taken in A.S.T.-ranking order (RULINGS 2.1); the ones that need
no decision are grown together in one event.

2b. Census (R-2.1, §21): the tokens on the board are counted (cities and
ships are not) and each nation gets its census rank, 1 for the most tokens,
ties broken by A.S.T.-ranking. Then the phase ends and movement follows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.board.ranking import ast_rank, in_ast_order
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import PhaseRules, acting_nation, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of

PHASE = "population-expansion"
GROWTH_CITES = ("seed 003: 2", "§20")
CENSUS_CITES = ("R-2.1", "§21", "D-12")
MAX_CHOICES = 60


@dataclass(frozen=True)
class DistributeGrowth:
    """A player short of stock says where his growth goes (§20): (area, tokens) pairs."""

    player_id: int
    placements: tuple[tuple[str, int], ...]


# -- the numbers ---------------------------------------------------------------------


def entitlement(state: GameState, nation: str) -> dict[str, int]:
    """Area -> tokens the nation grows there this phase (areas holding a city grow nothing)."""
    numbers = ruleset_of(state).numbers
    out = {}
    for name, area in state.areas.items():
        have = area.tokens.get(nation, 0)
        if have <= 0 or area.city is not None:
            continue
        out[name] = numbers["expansion_one_token"] if have == 1 else numbers["expansion_two_or_more"]
    return out


def default_distribution(grow: dict[str, int], stock: int) -> dict[str, int]:
    """The documented default for a short stock: one token to each area in area-name order,
    then the second token where two are due, in the same order, until the stock is used up."""
    return _fill(sorted(grow), grow, stock, spread=True)


def _done(state: GameState) -> set[str]:
    return set(state.filed.get("expanded", ()))


def _short_with_choice(state: GameState, nation: str) -> bool:
    grow = entitlement(state, nation)
    stock = state.nations[nation].stock
    return 0 < stock < sum(grow.values()) and len(grow) > 1


def _waiting_for(state: GameState) -> str | None:
    """The nation, next in A.S.T.-ranking order, that must distribute a short stock."""
    if state.step != "":
        return None
    for nation in in_ast_order(state, state.nations):
        if nation in _done(state):
            continue
        if _short_with_choice(state, nation):
            return nation
    return None


def census_ranks(state: GameState) -> dict[str, int]:
    """1 for the most tokens on the board, ties by A.S.T.-ranking (§21, R-2.1)."""
    order = sorted(state.nations, key=lambda n: (-state.tokens_on_board(n), ast_rank(state, n)))
    return {n: i + 1 for i, n in enumerate(order)}


# -- folding ----------------------------------------------------------------------------


def _grow(state: GameState, nation: str, placements: dict[str, int]) -> GameState:
    total = 0
    for name, count in placements.items():
        if count:
            state = state.with_area(name, state.area(name).add_tokens(nation, count))
            total += count
    n = state.nations[nation]
    return state.with_nation(replace(n, stock=n.stock - total))


def _mark(state: GameState, nations: list[str]) -> GameState:
    done = tuple(sorted(_done(state) | set(nations)))
    return replace(state, filed=state.filed.set("expanded", done))


def apply_expanded(state: GameState, data: dict[str, Any]) -> GameState:
    for nation, placements in data["growth"].items():
        state = _grow(state, nation, placements)
    return _mark(state, list(data["growth"]))


def apply_distributed(state: GameState, data: dict[str, Any]) -> GameState:
    state = _grow(state, data["nation"], data["placements"])
    return _mark(state, [data["nation"]])


def apply_census(state: GameState, data: dict[str, Any]) -> GameState:
    for nation, rank in data["ranks"].items():
        state = state.with_nation(replace(state.nations[nation], census=rank))
    return replace(state, step="census")


# -- who acts -------------------------------------------------------------------------------


def _describe(placements: dict[str, int]) -> str:
    return ", ".join(f"{a} {n}" for a, n in sorted(placements.items()))


def _fill(order: list[str], grow: dict[str, int], stock: int, spread: bool) -> dict[str, int]:
    """Fill the areas in ``order``: one token each first when ``spread``, else each area in full."""
    out: dict[str, int] = {}
    left = stock
    for cap in ((1, 2) if spread else (2,)):
        for name in order:
            take = min(min(cap, grow[name]) - out.get(name, 0), left)
            if take > 0:
                out[name] = out.get(name, 0) + take
                left -= take
    return out


def _choices(grow: dict[str, int], stock: int) -> tuple[str, ...]:
    """Complete GROW orders: the default first, then fillings from every starting area, both ways."""
    names = sorted(grow)
    orders = [names[i:] + names[:i] for i in range(len(names))]
    orders += [list(reversed(o)) for o in orders]
    lines = ["GROW " + _describe(default_distribution(grow, stock))]
    for order in orders:
        for spread in (True, False):
            line = "GROW " + _describe(_fill(order, grow, stock, spread))
            if line not in lines:
                lines.append(line)
    return tuple(lines[:MAX_CHOICES])


def pending(state: GameState) -> dict[str, Prompt]:
    nation = _waiting_for(state)
    if nation is None:
        return {}
    n = state.nations[nation]
    grow = entitlement(state, nation)
    due = sum(grow.values())
    default = default_distribution(grow, n.stock)
    return {
        nation.lower(): Prompt(
            who=nation.lower(),
            player_id=n.player_id,
            step="grow",
            question=(
                f"Population expansion: your areas should grow by {due} tokens but your stock holds only {n.stock}. "
                f"Say where all {n.stock} go (at most the growth due in each area)."
            ),
            choices=_choices(grow, n.stock),
            template="GROW " + _describe(default),
            default=(
                "one token to each of your areas in area-name order, then a second token where two are due, "
                f"until the stock is used up ({_describe(default)})"
            ),
            situation=(
                "Growth due: " + ", ".join(f"{a} +{k} (you have {state.area(a).tokens[nation]})" for a, k in sorted(grow.items())) + ".",
                f"Stock {n.stock}.",
            ),
            cites=GROWTH_CITES + ("RULINGS 2.1",),
        )
    }


# -- deciding --------------------------------------------------------------------------------


def decide_growth(state: GameState, command: DistributeGrowth, by_default: bool = False) -> list[Event]:
    nation = acting_nation(state, command.player_id)
    if state.phase != PHASE or _waiting_for(state) != nation:
        raise Rejection(
            "no growth is yours to distribute now: only a player whose stock is short of his growth does so, in phase 2",
            "§20",
        )
    grow = entitlement(state, nation)
    stock = state.nations[nation].stock
    placements: dict[str, int] = {}
    for name, count in command.placements:
        if name not in grow:
            where = ", ".join(sorted(grow))
            raise Rejection(f"{name}: your tokens there do not grow (no tokens of yours, or a city); choose from {where}", "§20")
        placements[name] = placements.get(name, 0) + count
    over = [f"{a} (at most {grow[a]})" for a, k in placements.items() if k > grow[a]]
    if over:
        raise Rejection("more than the growth due in " + ", ".join(over), "§20")
    if any(k <= 0 for k in placements.values()):
        raise Rejection("give each area named at least 1 token", "§20")
    total = sum(placements.values())
    if total != stock:
        raise Rejection(f"place exactly your whole stock, {stock} tokens (you placed {total})", "§20")
    data: dict[str, Any] = {"nation": nation, "placements": dict(sorted(placements.items())), "due": sum(grow.values())}
    if by_default:
        data["by_default"] = True
    return [Event("GrowthDistributed", data, GROWTH_CITES + ("RULINGS 2.1",))]


def defaults(state: GameState, prompt: Prompt) -> list[Event]:
    nation = acting_nation(state, prompt.player_id)
    grow = entitlement(state, nation)
    chosen = default_distribution(grow, state.nations[nation].stock)
    return decide_growth(state, DistributeGrowth(prompt.player_id, tuple(sorted(chosen.items()))), True)


# -- resolving ---------------------------------------------------------------------------------


def settle(state: GameState, draws: Draws) -> list[Event]:
    if state.step == "":
        growth: dict[str, dict[str, int]] = {}
        short: list[str] = []
        for nation in in_ast_order(state, state.nations):
            if nation in _done(state):
                continue
            if _short_with_choice(state, nation):
                break  # he distributes his stock before the nations after him grow (RULINGS 2.1)
            grow = entitlement(state, nation)
            stock = state.nations[nation].stock
            if sum(grow.values()) > stock:
                short.append(nation)  # one area, or an empty stock: nothing to choose
                grow = default_distribution(grow, stock)
            growth[nation] = dict(sorted(grow.items()))
        if growth:
            return [Event("PopulationExpanded", {"growth": growth, "short": short}, GROWTH_CITES)]
        if _waiting_for(state) is not None:
            return []
        tokens = {n: state.tokens_on_board(n) for n in in_ast_order(state, state.nations)}
        return [Event("CensusTaken", {"ranks": census_ranks(state), "tokens": tokens}, CENSUS_CITES)]
    if state.step == "census":
        return [phase_ended(PHASE, CENSUS_CITES)]
    return []


# -- telling ------------------------------------------------------------------------------------


def _tell_expanded(state: GameState, event: Event, viewer: str) -> str:
    parts = []
    for nation, placed in event.data["growth"].items():
        total = sum(placed.values())
        if total:
            where = f"{len(placed)} area" + ("s" if len(placed) != 1 else "")
            note = " (all its stock)" if nation in event.data.get("short", ()) else ""
            parts.append(f"{nation} +{total} in {where}{note}")
        elif nation in event.data.get("short", ()):
            parts.append(f"{nation} no growth (stock empty)")
    return "Population expansion: " + ("; ".join(parts) if parts else "nobody grows") + "."


def _tell_distributed(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    how = " by default" if d.get("by_default") else ""
    total = sum(d["placements"].values())
    return f"{d['nation']} was short of stock and placed its {total} tokens{how}: {_describe(d['placements'])} (growth due {d['due']})."


def _tell_census(state: GameState, event: Event, viewer: str) -> str:
    order = sorted(event.data["ranks"], key=lambda n: event.data["ranks"][n])
    return "Census: " + ", ".join(f"{event.data['ranks'][n]}. {n} {event.data['tokens'][n]}" for n in order) + "."


RULES = PhaseRules(
    name=PHASE,
    apply={
        "PopulationExpanded": apply_expanded,
        "GrowthDistributed": apply_distributed,
        "CensusTaken": apply_census,
    },
    decide={DistributeGrowth: decide_growth},
    pending=pending,
    defaults=defaults,
    settle=settle,
    inputs={
        "GrowthDistributed": lambda s, d: DistributeGrowth(
            s.nations[d["nation"]].player_id, tuple(sorted(d["placements"].items()))
        ),
    },
    narrate={
        "PopulationExpanded": _tell_expanded,
        "GrowthDistributed": _tell_distributed,
        "CensusTaken": _tell_census,
    },
)

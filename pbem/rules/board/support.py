"""City support and surplus population (seed 001: 5B, 5C; §26), shared by phases 5, 9 and 11.

5b's surplus, 5c's support check and the REDUCE order that answers it happen
again after the calamities (phase 11, §29.8) and inside Slave Revolt (§30.42);
the numbers and the order in which cities may go (D-6) live here, once.
A Slave Revolt in force keeps some of its victim's tokens from supporting
cities (D-10): `disabled_tokens` counts them for every support check.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pbem.rules.board.card_effects import card_effects
from pbem.rules.core.events import Event
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import ruleset_of


@dataclass(frozen=True)
class ReduceCity:
    """REDUCE: the city a player reduces when his cities are not supported (seed 001: 5C)."""

    player_id: int
    area: str


def sole_occupant(state: GameState, nation: str, area: str) -> bool:
    """Only this nation's tokens stand in the area (no other player's, no Barbarians)."""
    return all(owner == nation for owner in state.area(area).tokens)


def population_limit(state: GameState, nation: str, area: str) -> int:
    """The area's limit for this nation's tokens at 5b: +1 with Agriculture where he stands alone (§26.11)."""
    limit = ruleset_of(state).areas[area].population_limit
    if sole_occupant(state, nation, area):
        limit += sum(e.get("value", 0) for e in card_effects(state, nation, "population-limit-bonus"))
    return limit


def reduction_tokens(state: GameState, nation: str, area: str) -> int:
    """Tokens a reduced city becomes: the area's limit, +1 with Agriculture (§26.41, §32.241)."""
    bonus = sum(e.get("value", 0) for e in card_effects(state, nation, "city-reduction-bonus"))
    return ruleset_of(state).areas[area].population_limit + bonus


def cities_of(state: GameState, nation: str) -> list[str]:
    """The areas holding the nation's cities, by area name."""
    return sorted(a for a, area in state.areas.items() if area.city == nation)


def support_shortfall(state: GameState, nation: str, disabled: int = 0) -> int:
    """Tokens missing on the board to support the nation's cities (0: supported); ``disabled`` do not count (Slave Revolt)."""
    need = ruleset_of(state).numbers["city_support_tokens"] * state.cities_on_board(nation)
    return max(0, need - (state.tokens_on_board(nation) - disabled))


def reduction_candidates(state: GameState, nation: str) -> list[str]:
    """The cities the nation may reduce now, the default first (D-6, seed 001: 5C, §26.32).

    `seed`: if it built cities this turn, only those. `1991`: those and the
    cities it gained this turn in another way; never one held since an
    earlier turn while a new one stands. Otherwise any city, by area name.
    """
    mine = cities_of(state, nation)
    built = [a for a in mine if a in state.built_this_turn and a not in state.gained_this_turn]
    if not built:
        return mine
    if options_of(state).support_reduction_order == "1991":
        return built + [a for a in mine if a in state.gained_this_turn]
    return built


def surplus(state: GameState, nation: str) -> dict[str, int]:
    """Area -> the nation's tokens that go to stock at 5b (seed 001: 5B, §26.1, §26.11)."""
    out = {}
    for name, area in state.areas.items():
        have = area.tokens.get(nation, 0)
        if not have:
            continue
        keep = 0 if area.city is not None else population_limit(state, nation, name)
        if have > keep:
            out[name] = have - keep
    return dict(sorted(out.items()))


def check_reduction(state: GameState, nation: str, area: str, cite: str) -> None:
    """Refuse a REDUCE of a city that may not go now: not his, or not among the cities that go first (D-6)."""
    candidates = reduction_candidates(state, nation)
    if area in candidates:
        return
    if area in cities_of(state, nation):
        raise Rejection(f"{area}: cities built this turn must be reduced first; choose from {', '.join(candidates)}", "D-6")
    raise Rejection(f"{area} is not a city of yours; choose from {', '.join(candidates)}", cite)


def reduction_prompt(
    state: GameState, nation: str, candidates: list[str], question: str, rule: str, cites: tuple[str, ...]
) -> Prompt:
    """REDUCE <city>: one city at a time, after phase 5 (§26.3) and again after the calamities (§29.8)."""
    n = state.nations[nation]
    return Prompt(
        who=nation.lower(),
        player_id=n.player_id,
        step="reduce-city",
        question=question,
        choices=tuple(f"REDUCE {a}" for a in candidates),
        template=f"REDUCE {candidates[0]}",
        default=f"reduce {candidates[0]} ({rule}, then by area name)",
        situation=(
            "You may reduce: "
            + ", ".join(f"{a} (becomes {min(reduction_tokens(state, nation, a), n.stock)} tokens)" for a in candidates)
            + ".",
            f"Stock {n.stock}.",
        ),
        cites=cites,
    )


def tokens_to_stock(state: GameState, nation: str, count: int) -> GameState:
    """Tokens taken off the board go back to their owner's stock."""
    if nation not in state.nations or not count:
        return state  # Barbarian tokens go back to their own supply
    n = state.nations[nation]
    return state.with_nation(replace(n, stock=n.stock + count))


def apply_surplus(state: GameState, data: dict[str, Any]) -> GameState:
    """``SurplusRemoved`` (5b and, under D-9 `seed`, 11a): the tokens above the limits go to stock."""
    nation = data["nation"]
    for name, count in data["removed"].items():
        state = state.with_area(name, state.area(name).add_tokens(nation, -count))
    return tokens_to_stock(state, nation, sum(data["removed"].values()))


def apply_reduced(state: GameState, data: dict[str, Any]) -> GameState:
    """A city reduced for want of support: it becomes ``tokens`` of its owner from stock (§26.41)."""
    nation, name, tokens = data["nation"], data["area"], data["tokens"]
    area = replace(state.area(data["area"]), city=None).add_tokens(nation, tokens)
    state = state.with_area(name, area)
    n = state.nations[nation]
    return state.with_nation(replace(n, stock=n.stock - tokens))


def reduction(state: GameState, nation: str, area: str) -> dict[str, Any]:
    """The data of a city's reduction: the tokens due, and those the stock can give."""
    due = reduction_tokens(state, nation, area)
    return {"nation": nation, "area": area, "tokens": min(due, state.nations[nation].stock), "due": due}


def chosen_reduction(state: GameState, nation: str, area: str, cite: str, by_default: bool) -> dict[str, Any]:
    """A REDUCE order checked (D-6) and turned into its event's data, the same after phase 5 and phase 9."""
    check_reduction(state, nation, area, cite)
    data = reduction(state, nation, area)
    if by_default:
        data["by_default"] = True
    return data


def tell_surplus(state: GameState, event: Event, viewer: str) -> str:
    """``SurplusRemoved`` told: how many tokens went to stock, and from where."""
    removed = event.data["removed"]
    return f"{event.data['nation']} removed {sum(removed.values())} surplus tokens: " + ", ".join(
        f"{a} {n}" for a, n in removed.items()
    ) + "."


def tell_reduced(state: GameState, event: Event, viewer: str) -> str:
    """A city reduced for want of support, told (with the stock's shortfall, if any)."""
    d = event.data
    how = " (by default)" if d.get("by_default") else ""
    if d["tokens"] == 0:
        return f"{d['nation']} could not support its cities; {d['area']} was eliminated{how}: no tokens left in stock."
    short = f" (stock short: {d['due']} due)" if d["tokens"] < d["due"] else ""
    return f"{d['nation']} could not support its cities; {d['area']} was reduced to {d['tokens']} tokens{short}{how}."


def disabled_tokens(state: GameState, nation: str) -> int:
    """Tokens of the nation a Slave Revolt keeps from supporting cities (D-10 model).

    Usable = max(0, tokens on the board not placed by his own reductions since
    the revolt - D) + tokens so placed; so the disabled count is
    min(D, tokens on the board - tokens so placed).
    """
    for victim, disabled, placed in state.slave_revolts:
        if victim == nation:
            return min(disabled, max(0, state.tokens_on_board(nation) - placed))
    return 0


def revolt_tokens_placed(state: GameState, nation: str, tokens: int) -> GameState:
    """Tokens placed by reducing a Slave Revolt victim's own city count for support (§30.422)."""
    revolts = tuple((v, d, p + tokens if v == nation else p) for v, d, p in state.slave_revolts)
    return replace(state, slave_revolts=revolts)

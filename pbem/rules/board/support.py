"""City support and surplus population (seed 001: 5B, 5C; §26), shared by phases 5, 9 and 11.

5b's surplus, 5c's support check and the REDUCE order that answers it happen
again after the calamities (phase 11, §29.8) and inside Slave Revolt (§30.42);
the numbers and the order in which cities may go (D-6) live here, once.
A Slave Revolt in force keeps some of its victim's tokens from supporting
cities (D-10): `disabled_tokens` counts them for every support check.

Small Cities (RULINGS.md SC-4, SC-6, SC-7): population tokens and towns share
an area's limit, and only population tokens go as surplus; towns above the
limit need one population token for every two, rounded up; a nation short of
support turns such a town back into a token, or reduces a city.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.board.card_effects import card_effects
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of


@dataclass(frozen=True)
class ReduceCity:
    """REDUCE: the city a player reduces when his cities are not supported (seed 001: 5C)."""

    player_id: int
    area: str


def sole_occupant(state: GameState, nation: str, area: str) -> bool:
    """Only this nation's tokens (and towns) stand in the area (no other player's, no Barbarians)."""
    here = state.area(area)
    return all(owner == nation for owner in here.tokens) and all(owner == nation for owner in here.towns)


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


def excess_towns(state: GameState, nation: str) -> dict[str, int]:
    """Small Cities: area -> the nation's towns above the area's limit, which need support (SC-6)."""
    out = {}
    for name, area in state.areas.items():
        over = area.towns.get(nation, 0) - population_limit(state, nation, name) if area.towns.get(nation) else 0
        if over > 0:
            out[name] = over
    return dict(sorted(out.items()))


def support_needed(state: GameState, nation: str) -> int:
    """Population tokens the nation's cities need on the board: 2 each (§26.3), and one per two excess towns (SC-6)."""
    need = ruleset_of(state).numbers["city_support_tokens"] * state.cities_on_board(nation)
    if parts_of(state).pieces.towns:
        need += -(-sum(excess_towns(state, nation).values()) // 2)
    return need


def support_shortfall(state: GameState, nation: str, disabled: int = 0) -> int:
    """Tokens missing on the board to support the nation's cities and towns (0: supported).

    ``disabled`` tokens do not count (Slave Revolt); towns never do (Q-SC3).
    """
    return max(0, support_needed(state, nation) - (state.tokens_on_board(nation) - disabled))


def town_flips(state: GameState, nation: str) -> list[str]:
    """Small Cities: areas where a town above the limit may turn back into a token, the default first (SC-7).

    The default is the area with the largest excess, ties by area name.
    """
    excess = excess_towns(state, nation)
    return sorted(excess, key=lambda a: (-excess[a], a))


def support_candidates(state: GameState, nation: str) -> list[str]:
    """What may go when support fails, the default first: excess towns (SC-7), then cities in D-6 order."""
    towns = town_flips(state, nation) if parts_of(state).pieces.towns else []
    return towns + (reduction_candidates(state, nation) if cities_of(state, nation) else [])


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
    """Area -> the nation's tokens that go to stock at 5b (seed 001: 5B, §26.1, §26.11).

    Under Small Cities his towns in the area count toward the limit, but only
    tokens go (SC-4). A nation that has turned a town back for support this
    step is past its surplus removal: that token stays until the next one
    (SC-7: it counts at once).
    """
    if f"flipped:{nation}" in state.filed:
        return {}
    out = {}
    for name, area in state.areas.items():
        have = area.tokens.get(nation, 0)
        if not have:
            continue
        keep = 0 if area.city is not None else max(0, population_limit(state, nation, name) - area.towns.get(nation, 0))
        if have > keep:
            out[name] = have - keep
    return dict(sorted(out.items()))


def check_reduction(state: GameState, nation: str, area: str, cite: str) -> None:
    """Refuse a REDUCE of a city that may not go now: not his, or not among the cities that go first (D-6).

    Under Small Cities an area of his with towns above the limit may be named too (SC-7).
    """
    candidates = reduction_candidates(state, nation)
    if area in candidates or (parts_of(state).pieces.towns and area in excess_towns(state, nation)):
        return
    if area in cities_of(state, nation):
        raise Rejection(f"{area}: cities built this turn must be reduced first; choose from {', '.join(candidates)}", "D-6")
    raise Rejection(f"{area} is not a city of yours; choose from {', '.join(candidates)}", cite)


def reductions_needed(state: GameState, nation: str, disabled: int = 0) -> tuple[int, int]:
    """How many of his cities the nation must reduce to support the rest: (fewest, most), by which he reduces.

    Each reduction needs 2 tokens less support and adds the tokens the city
    becomes (as many as his stock holds), which count at once (§26.41, §30.422);
    the cities leaving the most tokens first need the fewest, the least first
    the most, whatever order D-6 imposes. A prompt asking one city at a time
    says so, so that one letter answers every ask (issue 29).
    """
    short = support_shortfall(state, nation, disabled)
    gains = sorted(reduction_tokens(state, nation, a) for a in cities_of(state, nation))
    counts = []
    for order in (sorted(gains, reverse=True), gains):
        left, stock, n = short, state.nations[nation].stock, 0
        for tokens in order:
            if left <= 0:
                break
            placed = min(tokens, stock)
            stock -= placed
            left -= ruleset_of(state).numbers["city_support_tokens"] + placed
            n += 1
        counts.append(n)
    return counts[0], counts[1]


def reductions_asked(state: GameState, nation: str, disabled: int = 0) -> str:
    """The sentence a one-city-at-a-time prompt ends with: how many in all, and how to name them in one letter."""
    fewest, most = reductions_needed(state, nation, disabled)
    many = f"{fewest} to {most}" if fewest < most else str(most)
    return (f"{many} of your cities must be reduced in all, one at a time (a reduced city's tokens count at once). "
            f"You may send up to {most} REDUCE lines, in order of preference: each is taken in turn while more "
            "must go, one not legal then is refused with the reason, one not needed is refused as not needed.")


def reduction_prompt(
    state: GameState, nation: str, candidates: list[str], question: str, rule: str, cites: tuple[str, ...]
) -> Prompt:
    """REDUCE <city>: one city at a time, after phase 5 (§26.3) and again after the calamities (§29.8)."""
    n = state.nations[nation]
    _, most = reductions_needed(state, nation, disabled_tokens(state, nation)) if not parts_of(state).pieces.towns else (1, 1)
    ordered = candidates + [a for a in cities_of(state, nation) if a not in candidates]
    return Prompt(
        who=nation.lower(),
        player_id=n.player_id,
        step="reduce-city",
        question=question,
        choices=tuple(f"REDUCE {a}" for a in candidates),
        template="\n".join(f"REDUCE {a}" for a in ordered[: max(1, most)]),
        default=f"reduce {candidates[0]} ({rule}, then by area name)",
        situation=(
            "You may reduce: "
            + ", ".join(
                f"{a} (a town there becomes a token)" if state.area(a).city != nation
                else f"{a} (becomes {min(reduction_tokens(state, nation, a), n.stock)} tokens)"
                for a in candidates
            )
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
    """A REDUCE order checked (D-6) and turned into its event's data, the same after phase 5 and phase 9.

    A town turned back into a token has ``town`` set (SC-7); a city reduced has the tokens it becomes.
    """
    check_reduction(state, nation, area, cite)
    data = {"nation": nation, "area": area, "town": True} if state.area(area).city != nation else reduction(state, nation, area)
    if by_default:
        data["by_default"] = True
    return data


def support_choices(state: GameState, nation: str, disabled: int = 0) -> list[str] | None:
    """What the nation may choose to lose when short of support, or None when there is nothing to choose.

    Nothing to choose: one candidate only, or an empty stock and every city
    must go (with no town to turn back instead).
    """
    candidates = support_candidates(state, nation)
    if len(candidates) < 2:
        return None
    support = ruleset_of(state).numbers["city_support_tokens"]
    short = support_shortfall(state, nation, disabled)
    if not town_flips(state, nation) and state.nations[nation].stock == 0 and -(-short // support) >= state.cities_on_board(nation):
        return None
    return candidates


def towns_question(state: GameState, nation: str, disabled: int = 0) -> str:
    """The support question under Small Cities, where towns above the limit need support too (SC-6, SC-7)."""
    excess = sum(excess_towns(state, nation).values())
    kept = f", of which {disabled} are kept from supporting by the Slave Revolt (D-10)" if disabled else ""
    return (
        f"Support: your {state.cities_on_board(nation)} cities and your {excess} towns above their areas' limits "
        f"need {support_needed(state, nation)} population tokens on the board; you have "
        f"{state.tokens_on_board(nation)}{kept}. Choose what goes: REDUCE <area> turns one of your towns there "
        "back into a token (it counts at once), or reduces your city there. You are asked again if more must go."
    )


def support_step(
    state: GameState, nation: str, area: str, city_event: str, cites: tuple[str, ...], chosen: dict[str, Any] | None = None
) -> Event:
    """The event of one support step: a city reduced (``city_event``), or under Small Cities a town turned back.

    ``chosen`` is the data of an order (`chosen_reduction`); without it the step is the default's.
    """
    data = chosen if chosen is not None else (
        reduction(state, nation, area) if state.area(area).city == nation else {"nation": nation, "area": area, "town": True})
    if data.get("town"):
        return Event("TownFlipChosen" if chosen is not None else "TownFlipped", data, cites + ("SC-6", "SC-7"))
    return Event(city_event, data, cites)


def apply_town_flipped(state: GameState, data: dict[str, Any]) -> GameState:
    """A town above the limit turned back into a population token, which supports cities at once (SC-7)."""
    nation, name = data["nation"], data["area"]
    state = state.with_area(name, state.area(name).add_towns(nation, -1).add_tokens(nation, 1))
    state = replace(state, filed=state.filed.set(f"flipped:{nation}", (1,)))
    return revolt_tokens_placed(state, nation, 1)


def tell_town_flipped(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    how = " (by default)" if d.get("by_default") else ""
    return f"{d['nation']} could not support its towns; a town in {d['area']} became a population token again{how}."


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

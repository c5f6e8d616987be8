"""Unit-point losses of calamities (§29.62; fact sheet E7) and their assignment to secondary victims.

A victim who must lose N unit points removes his own units: a token is 1
point; a city eliminated is 5 points; a city reduced counts 5 less the tokens
it leaves (§29.62). Under Epidemic every area he strips keeps one token, and
an eliminated city leaves one token, so it is worth at most 4 (§30.6). The
loss must be met exactly if possible, otherwise overshoot by the least
possible amount; a victim with too little loses everything. Under Small
Cities a town is lost like a token, 1 point, and counts as the unit Epidemic
leaves in an area (SC-9); by default tokens go before towns.

An answer is a tuple of items (area, what, n): what is "tokens" (n tokens),
"towns" (n towns), "city" (the city is eliminated) or "reduce" (the city is
reduced).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations, product
from typing import Any

from pbem.rules.board.support import cities_of, reduction_tokens
from pbem.rules.core.state import GameState

CITY_POINTS = 5
Item = tuple[str, str, int]


@dataclass(frozen=True)
class LoseUnits:
    """Units a player gives up (LOSE ...): (area, "tokens" | "towns" | "city" | "reduce", count) items.

    The answer to a calamity's unit-point loss, and under Small Cities the
    split of a conflict's removals between tokens and towns (SC-15).
    """

    player_id: int
    items: tuple[tuple[str, str, int], ...]


@dataclass(frozen=True)
class Loss:
    """``nation`` must lose ``points`` unit points of his own choice."""

    nation: str
    role: str
    points: int
    keep_one: bool
    question: str
    cites: tuple[str, ...]
    areas: tuple[str, ...] | None = None       # where his tokens may go (None: anywhere)
    city_areas: tuple[str, ...] | None = None  # which of his cities may go (None: any)


@dataclass(frozen=True)
class Assign:
    """``chooser`` gives ``total`` unit points to other players, at most ``caps[n]`` each."""

    chooser: str
    total: int
    caps: tuple[tuple[str, int], ...]
    question: str
    cites: tuple[str, ...]

    def due(self) -> int:
        return min(self.total, sum(c for _, c in self.caps))


def token_room(state: GameState, loss: Loss) -> dict[str, int]:
    """Area -> units of 1 point (tokens, and towns under Small Cities) the victim may remove there."""
    out = {}
    for name in sorted(state.areas):
        if loss.areas is not None and name not in loss.areas:
            continue
        here = state.area(name)
        have = here.tokens.get(loss.nation, 0) + here.towns.get(loss.nation, 0)
        room = have - 1 if loss.keep_one else have
        if room > 0:
            out[name] = room
    return out


def cities(state: GameState, loss: Loss) -> list[str]:
    """The victim's cities this loss may take."""
    return [a for a in cities_of(state, loss.nation) if loss.city_areas is None or a in loss.city_areas]


def _placed(state: GameState, loss: Loss, area: str, what: str, stock: int) -> int:
    """Tokens the city leaves, from what the stock still holds (§26.41: too few in stock, place what you have)."""
    if what == "city":
        return min(1, stock) if loss.keep_one else 0
    return min(reduction_tokens(state, loss.nation, area), stock)


def city_value(state: GameState, loss: Loss, area: str, what: str) -> int:
    """The points of one city alone, with the whole stock to leave tokens from."""
    return CITY_POINTS - _placed(state, loss, area, what, state.nations[loss.nation].stock)


def placements(state: GameState, loss: Loss, items: tuple[Item, ...]) -> dict[str, int]:
    """Tokens each city of an answer leaves, by area name, all from one stock.

    Several cities reduced at once share the stock: once it is empty a
    reduced city leaves nothing and counts its full five points, so the
    answer's value, the check and the event agree and the stock never goes
    below zero.
    """
    left = state.nations[loss.nation].stock
    out = {}
    for area, what, _ in sorted(i for i in items if i[1] in ("city", "reduce")):
        out[area] = _placed(state, loss, area, what, left)
        left -= out[area]
    return out


def _cities_value(state: GameState, loss: Loss, items: tuple[Item, ...]) -> int:
    return sum(CITY_POINTS - placed for placed in placements(state, loss, items).values())


def _city_options(state: GameState, loss: Loss) -> list[tuple[str, tuple[tuple[str, int], ...]]]:
    """Each city of the victim with its ways to go: (what, points), distinct values only."""
    out = []
    for area in cities(state, loss):
        ways = []
        for what in ("city", "reduce"):
            value = city_value(state, loss, area, what)
            if value > 0 and all(v != value for _, v in ways):
                ways.append((what, value))
        out.append((area, tuple(ways)))
    return out


def _city_plans(state: GameState, loss: Loss) -> Iterator[tuple[tuple[Item, ...], int]]:
    """Ways to treat the victim's cities, fewest cities touched first, then by area name."""
    options = _city_options(state, loss)
    for k in range(len(options) + 1):
        for chosen in combinations(options, k):
            for ways in product(*(w for _, w in chosen)):
                items = tuple((a, what, 1) for (a, _), (what, _) in zip(chosen, ways))
                yield items, _cities_value(state, loss, items)


def required(state: GameState, loss: Loss) -> int:
    """The total the answer must reach: N exactly if possible, else the least overshoot, else everything."""
    tokens = sum(token_room(state, loss).values())
    reachable = {(0, state.nations[loss.nation].stock)}  # (points, stock left), cities taken in area order
    for area, _ in _city_options(state, loss):
        reachable |= {
            (points + CITY_POINTS - placed, left - placed)
            for points, left in reachable
            for what in ("city", "reduce")
            for placed in (_placed(state, loss, area, what, left),)
            if CITY_POINTS - placed > 0
        }
    sums = {points for points, _ in reachable}
    totals = {value + t for value in sums for t in range(tokens + 1)}
    above = [t for t in totals if t >= loss.points]
    return min(above) if above else max(totals)


def _spread(state: GameState, loss: Loss, room: dict[str, int], count: int,
            kinds: tuple[str, str] = ("tokens", "towns")) -> tuple[Item, ...]:
    """``count`` points of single units over the areas in ``room``'s order: every token first, then towns."""
    items = []
    taken: dict[str, int] = {}
    for kind in kinds:
        for area, n in room.items():
            if count <= 0:
                break
            here = state.area(area)
            have = here.tokens.get(loss.nation, 0) if kind == "tokens" else here.towns.get(loss.nation, 0)
            take = min(have, n - taken.get(area, 0), count)
            if take > 0:
                items.append((area, kind, take))
                taken[area] = taken.get(area, 0) + take
                count -= take
    return tuple(items)


def answers(state: GameState, loss: Loss, limit: int) -> list[tuple[Item, ...]]:
    """Legal answers, the default first: tokens first (by area name), then as few cities as possible."""
    if loss.points <= 0:
        return [()]
    room = token_room(state, loss)
    tokens = sum(room.values())
    need = required(state, loss)
    out: list[tuple[Item, ...]] = []
    for items, value in _city_plans(state, loss):
        rest = need - value
        if 0 <= rest <= tokens:
            out.append(tuple(sorted(items + _spread(state, loss, room, rest))))
            reverse = dict(reversed(list(room.items())))
            others = [tuple(sorted(items + _spread(state, loss, reverse, rest))),
                      tuple(sorted(items + _spread(state, loss, room, rest, ("towns", "tokens"))))]
            for other in others:
                if other not in out:
                    out.append(other)
        if len(out) >= limit:
            break
    return out[:limit]


def check(state: GameState, loss: Loss, items: tuple[Item, ...]) -> str | None:
    """Why the answer is not legal, or None."""
    room = token_room(state, loss)
    mine = cities(state, loss)
    seen: set[tuple[str, str]] = set()
    used: dict[str, int] = {}
    total = 0
    placed = placements(state, loss, tuple(i for i in items if i[0] in mine))  # a wrong name is answered below
    for area, what, n in items:
        kind = what if what in ("tokens", "towns") else "city"
        if (area, kind) in seen:
            return f"{area} is named twice"
        seen.add((area, kind))
        if what in ("tokens", "towns"):
            here = state.area(area)
            have = here.tokens.get(loss.nation, 0) if what == "tokens" else here.towns.get(loss.nation, 0)
            used[area] = used.get(area, 0) + n
            if n <= 0:
                return f"{area}: say how many {what}"
            if n > have or used[area] > room.get(area, 0):
                keep = " (one unit must stay in each area)" if loss.keep_one else ""
                return f"{area}: you may remove at most {min(have, room.get(area, 0))} {what} there{keep}"
            total += n
        else:
            if area not in mine:
                return f"{area} is not a city of yours" + (" that this calamity can take" if loss.city_areas is not None else "")
            total += CITY_POINTS - placed[area]
    need = required(state, loss)
    if total != need:
        return f"your losses come to {total} unit points; they must come to exactly {need}"
    return None


def changes(state: GameState, loss: Loss, items: tuple[Item, ...]) -> list[dict[str, Any]]:
    out = []
    placed = placements(state, loss, items)
    for area, what, n in items:
        if what == "tokens":
            out.append({"area": area, "effect": "tokens", "tokens": n, "points": n})
        elif what == "towns":
            out.append({"area": area, "effect": "towns", "towns": n, "points": n})
        else:
            out.append({"area": area, "effect": what, "placed": placed[area], "points": CITY_POINTS - placed[area]})
    return out


def write(items: tuple[Item, ...]) -> str:
    """The LOSE line of an answer, as a player would write it."""
    parts = []
    for area, what, n in items:
        parts.append(f"{area} {n}" if what == "tokens" else f"{area} {n} TOWNS" if what == "towns" else f"{area} {what.upper()}")
    return "LOSE " + (", ".join(parts) if parts else "NOTHING")


def assign_check(stage: Assign, shares: tuple[tuple[str, int], ...]) -> str | None:
    caps = dict(stage.caps)
    seen = set()
    for nation, n in shares:
        if nation not in caps:
            return f"{nation} cannot be given any: choose from {', '.join(caps)}"
        if nation in seen:
            return f"{nation} is named twice"
        seen.add(nation)
        if n > caps[nation]:
            return f"{nation} can be given at most {caps[nation]}"
    total = sum(n for _, n in shares)
    if total != stage.due():
        return f"you give {total} unit points; you must give exactly {stage.due()}"
    return None


def assign_answers(stage: Assign, limit: int) -> list[tuple[tuple[str, int], ...]]:
    """Legal assignments, the default first: the most to each player in A.S.T. order until the total is given."""
    out = []
    order = [n for n, _ in stage.caps]
    for start in range(len(order)):
        rotated = order[start:] + order[:start]
        left = stage.due()
        shares = []
        for nation in rotated:
            give = min(dict(stage.caps)[nation], left)
            if give:
                shares.append((nation, give))
            left -= give
        answer = tuple(sorted(shares, key=lambda s: order.index(s[0])))
        if answer not in out:
            out.append(answer)
        if len(out) >= limit:
            break
    return out

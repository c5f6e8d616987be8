"""City reductions a calamity orders, under Small Cities (RULINGS.md SC-10, Q-SC12).

Without the variant a calamity that reduces a city turns it into tokens
(§26.41). With it, each reduction the calamity orders is, for the owner:

1. with 5 towns or more, 5 of his towns (his choice of areas) become
   population tokens;
2. else, if he has a city, that city becomes 5 towns from his stock (the city
   the calamity named, else his choice) and then 5 of his towns, new ones
   included, become tokens;
3. else every town he has becomes a token.

The new tokens count for support at once. Reductions of the victim's own
choice (Superstition, Civil Disorder, Iconoclasm & Heresy's first part,
Slave Revolt's support check) are queued without a pick; cities the calamity
names (the Earthquake's, the Flood's coastal city, the other players' cities
named under Iconoclasm & Heresy) are queued with that city. The queue lives
in ``state.filed["town-reductions"]`` as (owner, named area or "", cities
allowed, city already broken) entries and is worked off before the calamity
goes on. Paying unit points by reducing a city (Famine, Epidemic, Flood) is
not an ordered reduction: it stays as in 1991 (Q-SC12).

Orders: ``REDUCE Sinai 3, Gaza 2`` names the towns that become tokens;
``PICK Thebes`` the city broken into towns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.board.support import cities_of, revolt_tokens_placed
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import FrozenMap, replace
from pbem.rules.core.phase import acting_nation
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.choosing import (
    MAX_CHOICES,
    RESOLUTION,
    CalamityFamily,
    PickCities,
)

CITES = ("SC-10", "Q-SC12")
TOWNS_PER_REDUCTION = 5
QUEUE = "town-reductions"

#: One reduction still to make: (owner, the area of the city named or "", the cities he may choose, city broken).
Entry = tuple[str, str, tuple[str, ...], bool]


@dataclass(frozen=True)
class FlipTowns:
    """REDUCE <area> <n>, ...: which of the player's towns become population tokens (SC-10)."""

    player_id: int
    flips: tuple[tuple[str, int], ...]


def queued(state: GameState) -> tuple[Entry, ...]:
    return tuple(tuple(e) for e in state.filed.get(QUEUE, ()))  # type: ignore[misc]


def with_queued(state: GameState, entries: list[Entry]) -> GameState:
    """The state with reductions added to the end of the queue."""
    return replace(state, filed=state.filed.set(QUEUE, queued(state) + tuple(entries)))


def _towns(state: GameState, nation: str) -> dict[str, int]:
    """Area -> the nation's towns there, most first, ties by area name (the default order of flips)."""
    got = {a: here.towns.get(nation, 0) for a, here in state.areas.items() if here.towns.get(nation, 0)}
    return dict(sorted(got.items(), key=lambda item: (-item[1], item[0])))


def flip_options(state: GameState, nation: str, count: int, limit: int) -> list[tuple[tuple[str, int], ...]]:
    """Ways to turn ``count`` towns into tokens, the default first (areas with the most towns first)."""
    order = list(_towns(state, nation))
    out: list[tuple[tuple[str, int], ...]] = []
    for start in range(max(1, len(order))):
        left, flips = count, []
        for area in order[start:] + order[:start]:
            take = min(left, state.area(area).towns.get(nation, 0))
            if take:
                flips.append((area, take))
            left -= take
        answer = tuple(sorted(flips))
        if answer not in out:
            out.append(answer)
        if len(out) >= limit:
            break
    return out


def write_flips(flips: tuple[tuple[str, int], ...]) -> str:
    return "REDUCE " + ", ".join(f"{a} {n}" for a, n in flips)


@dataclass(frozen=True)
class TownReduction:
    """The first queued reduction: its owner turns towns into tokens, or first names the city broken into towns."""

    nation: str
    named: str
    allowed: tuple[str, ...]
    broken: bool
    left: int  # reductions queued for him, this one included

    def flips(self, state: GameState) -> int:
        return min(TOWNS_PER_REDUCTION, state.towns_on_board(self.nation))

    def city_choices(self, state: GameState) -> list[str]:
        """The cities that may be broken now: none while he flips towns; the named one if it still stands."""
        if self.broken or state.towns_on_board(self.nation) >= TOWNS_PER_REDUCTION:
            return []
        mine = cities_of(state, self.nation)
        if self.named in mine:
            return [self.named]
        return [a for a in mine if a in self.allowed] or mine

    def _break(self, state: GameState, cal: tuple, area: str, chosen: bool = False, by_default: bool = False) -> list[Event]:
        placed = min(TOWNS_PER_REDUCTION, state.nations[self.nation].stock)
        data: dict[str, Any] = {"calamity": cal[0], "nation": self.nation, "area": area, "towns": placed}
        if by_default:
            data["by_default"] = True
        return [Event("TownCityChosen" if chosen else "CityBrokenIntoTowns", data, ("seed 003: 9",) + CITES)]

    def _flip(self, state: GameState, cal: tuple, flips: tuple[tuple[str, int], ...], chosen: bool = False,
              by_default: bool = False) -> list[Event]:
        data: dict[str, Any] = {"calamity": cal[0], "nation": self.nation, "flips": [list(f) for f in flips]}
        if by_default:
            data["by_default"] = True
        return [Event("TownFlipsChosen" if chosen else "TownsReduced", data, ("seed 003: 9",) + CITES)]

    # hooks used by calamities.settle_resolution / pending_resolution / defaults_resolution / decide_pick
    def settle(self, state: GameState, cal: tuple) -> list[Event]:
        cities = self.city_choices(state)
        if len(cities) > 1:
            return []  # he names the city
        if cities:
            return self._break(state, cal, cities[0])
        options = flip_options(state, self.nation, self.flips(state), 2)
        return self._flip(state, cal, options[0]) if len(options) == 1 else []

    def prompt(self, state: GameState, cal: tuple) -> Prompt | None:
        n = state.nations[self.nation]
        more = f" ({self.left} reductions to make)" if self.left > 1 else ""
        towns = ", ".join(f"{a} {k}" for a, k in _towns(state, self.nation).items()) or "none"
        situation = (f"Your towns: {towns}.", f"Your cities: {', '.join(cities_of(state, self.nation)) or 'none'}. Stock {n.stock}.")
        cities = self.city_choices(state)
        if cities:
            lines = tuple(f"PICK {a}" for a in cities)
            return Prompt(
                who=self.nation.lower(), player_id=n.player_id, step="calamity-town-city",
                question=(f"{cal[0]}: a city of yours is reduced{more}. With fewer than 5 towns, one of your cities "
                          "becomes 5 towns from your stock, and then 5 of your towns become population tokens. "
                          "Name the city."),
                choices=lines, template=lines[0], default=f"{cities[0]} (first by area name)",
                situation=situation, cites=("seed 003: 9",) + CITES,
            )
        options = flip_options(state, self.nation, self.flips(state), MAX_CHOICES)
        if len(options) < 2:
            return None
        lines = tuple(write_flips(o) for o in options)
        return Prompt(
            who=self.nation.lower(), player_id=n.player_id, step="calamity-town-flips",
            question=(f"{cal[0]}: a city of yours is reduced{more}. Under Small Cities {self.flips(state)} of your "
                      "towns become population tokens instead (they count for support at once). Name them: "
                      "REDUCE <area> <n>, ..."),
            choices=lines, template=lines[0], default=f"{lines[0]} (the areas with the most towns first)",
            situation=situation, cites=("seed 003: 9",) + CITES,
        )

    def decide_pick(self, state: GameState, cal: tuple, command: PickCities, by_default: bool = False) -> list[Event]:
        if state.nations[self.nation].player_id != command.player_id:
            raise Rejection(f"no calamity asks you to choose now; {self.nation} is to answer", "SC-10")
        cities = self.city_choices(state)
        if not cities:
            raise Rejection(f"no city of yours is broken into towns now; name towns: REDUCE <area> <n>, ... ({self.flips(state)} in all)", "SC-10")
        if len(command.areas) != 1 or command.areas[0] not in cities:
            raise Rejection(f"name one of your cities: {', '.join(cities)}", "SC-10")
        return self._break(state, cal, command.areas[0], True, by_default)

    def decide_flips(self, state: GameState, cal: tuple, command: FlipTowns, by_default: bool = False) -> list[Event]:
        if self.city_choices(state):
            raise Rejection("first name the city that becomes towns: PICK <area>", "SC-10")
        need = self.flips(state)
        flips: dict[str, int] = {}
        for area, count in command.flips:
            flips[area] = flips.get(area, 0) + count
        for area, count in flips.items():
            have = state.area(area).towns.get(self.nation, 0) if area in state.areas else 0
            if count <= 0 or count > have:
                raise Rejection(f"{area}: you have {have} towns there", "SC-10")
        if sum(flips.values()) != need:
            raise Rejection(f"name exactly {need} towns; you named {sum(flips.values())}", "SC-10")
        return self._flip(state, cal, tuple(sorted(flips.items())), True, by_default)

    def default(self, state: GameState, cal: tuple, prompt: Prompt) -> list[Event]:
        cities = self.city_choices(state)
        if cities:
            return self._break(state, cal, cities[0], True, True)
        return self._flip(state, cal, flip_options(state, self.nation, self.flips(state), 1)[0], True, True)


def current_reduction(state: GameState) -> TownReduction | None:
    """The queued reduction to work on now, if any."""
    entries = queued(state)
    if not entries:
        return None
    nation, named, allowed, broken = entries[0]
    left = sum(1 for e in entries if e[0] == nation)
    return TownReduction(nation, named, tuple(allowed), broken, left)


def decide_flip(state: GameState, command: FlipTowns, by_default: bool = False) -> list[Event]:
    stage = current_reduction(state) if state.phase == RESOLUTION and state.calamities else None
    if stage is None or state.nations[stage.nation].player_id != command.player_id:
        acting_nation(state, command.player_id)
        raise Rejection("no calamity asks you to turn towns into tokens now", "SC-10")
    return stage.decide_flips(state, state.calamities[0], command, by_default)


def apply_broken(state: GameState, data: dict[str, Any]) -> GameState:
    nation, area = data["nation"], data["area"]
    here = replace(state.area(area), city=None, towns=FrozenMap()).add_towns(nation, data["towns"])
    state = state.with_area(area, here)
    n = state.nations[nation]
    state = state.with_nation(replace(n, stock=n.stock - data["towns"]))
    entries = queued(state)
    head = entries[0]
    return replace(state, filed=state.filed.set(QUEUE, ((head[0], head[1], head[2], True),) + entries[1:]))


def apply_reduced(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    total = 0
    for area, count in data["flips"]:
        state = state.with_area(area, state.area(area).add_towns(nation, -count).add_tokens(nation, count))
        total += count
    state = revolt_tokens_placed(state, nation, total)
    return replace(state, filed=state.filed.set(QUEUE, queued(state)[1:]))


def apply_due(state: GameState, data: dict[str, Any]) -> GameState:
    """Reductions of the victim's own choice, queued without a pick; the calamity goes on to its next stage."""
    entry: Entry = (data["nation"], "", tuple(data["cities"]), False)
    state = with_queued(state, [entry] * data["count"])
    return replace(state, step=str(data["next"]))


def _tell_due(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    return (f"{d['calamity']}: {d['count']} reduction{'s' if d['count'] != 1 else ''} for {d['nation']}, made under "
            "Small Cities: five towns become tokens each time, a city becoming five towns first when fewer are left (SC-10).")


def _tell_broken(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    how = " (by default)" if d.get("by_default") else ""
    return f"{d['calamity']}: {d['nation']}'s city in {d['area']} becomes {d['towns']} towns{how} (SC-10)."


def _tell_reduced(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    how = " (by default)" if d.get("by_default") else ""
    where = ", ".join(f"{n} in {a}" for a, n in d["flips"]) or "none"
    return f"{d['calamity']}: {d['nation']}'s towns become population tokens{how}: {where} (SC-10)."


FAMILY = CalamityFamily(
    resolvers={},
    apply={"TownReductionsDue": apply_due, "CityBrokenIntoTowns": apply_broken, "TownCityChosen": apply_broken,
           "TownsReduced": apply_reduced, "TownFlipsChosen": apply_reduced},
    decide={FlipTowns: decide_flip},
    inputs={
        "TownCityChosen": lambda s, d: PickCities(s.nations[d["nation"]].player_id, (d["area"],)),
        "TownFlipsChosen": lambda s, d: FlipTowns(s.nations[d["nation"]].player_id, tuple((a, n) for a, n in d["flips"])),
    },
    narrate={"TownReductionsDue": _tell_due, "CityBrokenIntoTowns": _tell_broken, "TownCityChosen": _tell_broken,
             "TownsReduced": _tell_reduced, "TownFlipsChosen": _tell_reduced},
    filed=(QUEUE,),
)

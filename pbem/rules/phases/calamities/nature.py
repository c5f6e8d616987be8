"""Phase 9: the calamities of nature, Volcanic Eruption / Earthquake and Flood (§30.21, §30.51).

Volcanic Eruption / Earthquake (stack 2, fact sheet §2.12): if the victim
has a city in an area a volcano touches (``areas[a].volcano``), that volcano
erupts and every unit of every nation in its areas is eliminated (Barbarian
and Pirate pieces are never hit by calamities). If his cities touch two
volcanoes, the one doing the greatest total damage (unit points: city 5,
token 1) erupts; on a tie he names it (PICK one of his cities there;
default: first by area name). Engineering does nothing against a volcano.
Otherwise the earthquake destroys one of his cities (reduces it when he
holds Engineering) and reduces one city of another player in an area
adjacent to it, across land or a water boundary (§30.212); Engineering
holders cannot be that secondary victim. He picks both; for the greatest
total damage his city must be one with such a neighbour when he has one
(default: first by area name).

Flood (stack 5): the flood plains are the connected flood-plain groups of
the data (``flood_plain_group``). If the victim has units on a flood plain,
the plain holding most of his vulnerable unit points floods: he loses up to
17 unit points there (LOSE; cities on black sites are safe), then gives 10
more to other players with vulnerable units on the same plain (GIVE; at most
what each has there, all of it if they have 10 or fewer), and each loses
his share there (LOSE). Engineering caps each of these losses at 7. Two
plains tied for his most unit points: he names one (PICK an area of it;
default: the first plain by name). With no units on any flood plain, one of
his coastal cities is eliminated (PICK; reduced with Engineering); with
none, nothing happens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.board.losses import Assign, Loss
from pbem.rules.board.ranking import in_ast_order
from pbem.rules.board.support import cities_of
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.choosing import (
    CalamityFamily,
    PickCities,
    Stage,
    Strike,
    assigned_shares,
    coastal_cities,
    immune,
    quantity,
)
from pbem.rules.ruleset.rulebook import ruleset_of

VOLCANO = "Volcanic Eruption / Earthquake"
FLOOD = "Flood"
CITY_POINTS = 5


def downgraded(state: GameState, nation: str, calamity: str, role: str, part: str) -> bool:
    """Whether one of his civilization cards turns this destruction into a reduction (Engineering)."""
    rules = ruleset_of(state)
    for card in state.nations[nation].civ_cards:
        for e in rules.civ_cards[card].effects_of("calamity-downgrade") if card in rules.civ_cards else ():
            if e.calamity == calamity and e.get("role") == role and e.get("part") == part:
                return True
    return False


def _points(state: GameState, area: str, nation: str, safe_black: bool = False) -> int:
    """Unit points of one nation in one area (a city on a black site counts 0 when ``safe_black``)."""
    here = state.area(area)
    points = here.tokens.get(nation, 0) + here.towns.get(nation, 0)  # a town is a unit point (SC-9)
    if here.city == nation and not (safe_black and ruleset_of(state).areas[area].city_site == "black"):
        points += CITY_POINTS
    return points


# -- Volcanic Eruption / Earthquake -----------------------------------------------------------------


def _volcano_areas(state: GameState, volcano: str) -> list[str]:
    return sorted(a for a, spec in ruleset_of(state).areas.items() if spec.volcano == volcano)


def _damage(state: GameState, volcano: str) -> int:
    return sum(_points(state, a, n) for a in _volcano_areas(state, volcano) for n in state.nations)


def _near_volcano(state: GameState, nation: str) -> dict[str, list[str]]:
    """Volcano -> the nation's cities in areas it touches."""
    areas = ruleset_of(state).areas
    out: dict[str, list[str]] = {}
    for a in cities_of(state, nation):
        if areas[a].volcano:
            out.setdefault(areas[a].volcano, []).append(a)
    return out


def _neighbours(state: GameState, area: str) -> set[str]:
    rules = ruleset_of(state)
    return set(rules.land_adjacency.get(area, ())) | set(rules.coast_links.get(area, ()))


def _quake_targets(state: GameState, victim: str, area: str) -> tuple[str, ...]:
    """Other players' cities next to ``area`` that the earthquake may reduce (§30.212)."""
    out = []
    for a in sorted(_neighbours(state, area)):
        owner = state.area(a).city if a in state.areas else None
        if owner in state.nations and owner != victim and not immune(state, owner, VOLCANO, "secondary", "earthquake"):
            out.append(a)
    return tuple(out)


def _struck(state: GameState) -> tuple[str, ...]:
    return tuple(state.filed.get("struck", ()))  # type: ignore[arg-type]


def volcano(state: GameState, cal: Strike, index: int) -> Stage | None:
    name, victim, _ = cal
    near = _near_volcano(state, victim)
    if index == 0 and near:
        best = max(_damage(state, v) for v in near)
        tied = [v for v in sorted(near) if _damage(state, v) == best]
        return Stage(
            nation=victim,
            role="primary",
            chooser=victim,
            count=1,
            candidates=tuple(near[v][0] for v in tied),
            effect="erupt",
            question=(
                "Volcanic Eruption: your cities touch "
                + " and ".join(f"{v} ({', '.join(near[v])})" for v in tied)
                + f", each eruption destroying {best} unit points; name a city of yours by the volcano that erupts."
            ),
            cites=("§30.21", "fact sheet §2.12"),
        )
    if index == 0:
        mine = cities_of(state, victim)
        if not mine:
            return None
        hurting = [a for a in mine if _quake_targets(state, victim, a)]
        reduce = downgraded(state, victim, name, "primary", "earthquake")
        # what each answer puts at risk: the cities of others next to it, one of which is reduced after it
        at_risk = "; ".join(
            f"{a}: " + ", ".join(f"{state.area(t).city}'s {t}" for t in _quake_targets(state, victim, a))
            for a in hurting)
        return Stage(
            nation=victim,
            role="primary",
            chooser=victim,
            count=1,
            candidates=tuple(hurting or mine),
            effect="reduce" if reduce else "seize",
            question=(
                "Earthquake: no city of yours touches a volcano; one of your cities is "
                + ("reduced (Engineering)" if reduce else "destroyed")
                + (", one next to another player's city, which is then reduced" if hurting else "")
                + ". Choose which."
                + (f" The cities of others next to each, of which you then choose one to reduce: {at_risk}."
                   if len(hurting) > 1 else "")
            ),
            cites=("§30.21", "§30.212", "fact sheet §2.12") + (("§32 Engineering",) if reduce else ()),
        )
    struck = _struck(state)
    if index == 1 and struck and not ruleset_of(state).areas[struck[0]].volcano:
        targets = _quake_targets(state, victim, struck[0])
        if not targets:
            return None
        return Stage(
            nation=victim,
            role="secondary",
            chooser=victim,
            count=1,
            candidates=targets,
            effect="reduce",
            question=(
                f"Earthquake: choose one city of another player next to {struck[0]} (across land or water) to be reduced"
                " (Engineering holders cannot be chosen)."
            ),
            cites=("§30.212", "fact sheet §2.12"),
        )
    return None


def eruption_changes(state: GameState, picked: tuple[str, ...]) -> list[dict[str, Any]]:
    """Every unit of every nation in the areas of the volcano by the picked city (not Barbarians nor Pirates)."""
    if not picked:
        return []
    name = ruleset_of(state).areas[picked[0]].volcano
    assert name is not None
    out = []
    for a in _volcano_areas(state, name):
        here = state.area(a)
        owner = here.city if here.city in state.nations else None
        tokens = {n: k for n, k in sorted(here.tokens.items()) if n in state.nations and k}
        towns = {n: k for n, k in sorted(here.towns.items()) if k}
        if owner or tokens or towns:
            out.append({"area": a, "owner": owner, "effect": "erupt", "volcano": name, "tokens": tokens}
                       | ({"towns": towns} if towns else {}))  # towns are destroyed too (SC-9)
    return out


def apply_eruption(state: GameState, change: dict[str, Any]) -> GameState:
    area = state.area(change["area"])
    if change["owner"]:
        area = replace(area, city=None)
    for nation, k in change["tokens"].items():
        area = area.add_tokens(nation, -k)
        n = state.nations[nation]
        state = state.with_nation(replace(n, stock=n.stock + k))
    for nation, k in change.get("towns", {}).items():
        area = area.add_towns(nation, -k)
        n = state.nations[nation]
        state = state.with_nation(replace(n, stock=n.stock + k))
    return state.with_area(change["area"], area)


def tell_eruption(change: dict[str, Any]) -> str:
    lost = ([f"{change['owner']}'s city"] if change["owner"] else []) + [
        f"{k} {n} token{'s' if k != 1 else ''}" for n, k in change["tokens"].items()
    ] + [f"{k} {n} town{'s' if k != 1 else ''}" for n, k in change.get("towns", {}).items()]
    return f"{change['volcano']} erupts over {change['area']}: {', '.join(lost)} destroyed"


# -- Flood --------------------------------------------------------------------------------------------


def _plain_areas(state: GameState, plain: str) -> tuple[str, ...]:
    return tuple(sorted(a for a, spec in ruleset_of(state).areas.items() if spec.flood_plain_group == plain))


def _vulnerable_cities(state: GameState, plain: str) -> tuple[str, ...]:
    areas = ruleset_of(state).areas
    return tuple(a for a in _plain_areas(state, plain) if areas[a].city_site != "black")


def plain_points(state: GameState, nation: str, plain: str) -> int:
    """The nation's unit points a flood on this plain can take (cities on black sites are safe)."""
    return sum(_points(state, a, nation, safe_black=True) for a in _plain_areas(state, plain))


def _plains(state: GameState, nation: str) -> dict[str, int]:
    """Plain -> his vulnerable unit points there, for every plain where he has any unit."""
    areas = ruleset_of(state).areas
    out: dict[str, int] = {}
    for a, here in state.areas.items():
        plain = areas[a].flood_plain_group if a in areas else None
        if plain and (here.tokens.get(nation, 0) or here.towns.get(nation, 0) or here.city == nation):
            out[plain] = plain_points(state, nation, plain)
    return out


def _plain(state: GameState) -> str | None:
    got = state.filed.get("plain", ())
    return str(got[0]) if got else None


def _loss(state: GameState, nation: str, role: str, points: int, plain: str, question: str) -> Loss:
    return Loss(
        nation,
        role,
        points,
        False,
        question,
        ("§30.51", "§29.62", "fact sheet §2.12"),
        areas=_plain_areas(state, plain),
        city_areas=_vulnerable_cities(state, plain),
    )


def flood(state: GameState, cal: Strike, index: int) -> Any:
    name, victim, _ = cal
    spec = ruleset_of(state).calamities[name]
    plain = _plain(state)
    if index == 0:
        plains = _plains(state, victim)
        if plains:
            best = max(plains.values())
            tied = sorted(p for p, v in plains.items() if v == best)
            if len(tied) > 1:
                return PlainChoice(victim, tuple(tied), best)
            return Event("FloodStruck", _flood_data(state, victim, tied[0]), ("seed 003: 9", "§30.51", "fact sheet §2.12"))
        coastal = coastal_cities(state, victim)
        if not coastal:
            return None
        reduce = downgraded(state, victim, name, "primary", "coastal-city")
        return Stage(
            nation=victim,
            role="primary",
            chooser=victim,
            count=spec.primary["coastal_cities_destroyed"],
            candidates=coastal,
            effect="reduce" if reduce else "seize",
            question=(
                "Flood: you have no units on a flood plain; one of your coastal cities is "
                + ("reduced (Engineering)" if reduce else "eliminated")
                + ". Choose which."
            ),
            cites=("§30.51", "fact sheet §2.12") + (("§32 Engineering",) if reduce else ()),
        )
    if plain is None:
        return None
    if index == 1:
        points = quantity(state, victim, name, "primary", "unit_points", spec.primary["unit_points"])
        return _loss(state, victim, "primary", points, plain, f"Flood on the {plain} plain: you lose {points} unit points there (cities on black sites are safe).")
    if index == 2:
        total = spec.secondary["unit_points_total"]
        others = [n for n in in_ast_order(state, state.nations) if n != victim]
        caps = tuple((n, plain_points(state, n, plain)) for n in others if plain_points(state, n, plain))
        if not caps:
            return None  # nobody else has units there to lose
        question = (
            f"Flood: give {total} more unit points to other players on the {plain} plain, "
            "at most what each has there; each then chooses which of his units there go."
        )
        return Assign(victim, total, caps, question, ("§30.51", "§29.61", "fact sheet §2.12"))
    shares = assigned_shares(state)
    if index - 3 >= len(shares):
        return None
    nation, given = shares[index - 3]
    points = quantity(state, nation, name, "secondary", "assigned_unit_points", given)
    return _loss(state, nation, "secondary", points, plain, f"Flood: {victim} gave you {given} unit points to lose on the {plain} plain; you lose {points} there.")


def _flood_data(state: GameState, victim: str, plain: str) -> dict[str, Any]:
    base = ruleset_of(state).calamities[FLOOD].primary["unit_points"]
    points = quantity(state, victim, FLOOD, "primary", "unit_points", base)
    return {"calamity": FLOOD, "victim": victim, "plain": plain, "areas": list(_plain_areas(state, plain)), "points": points}


@dataclass(frozen=True)
class PlainChoice:
    """The victim names the flooding plain among those tied for his most unit points (PICK an area of it)."""

    victim: str
    plains: tuple[str, ...]
    points: int

    def _where(self, state: GameState, plain: str) -> str:
        """The area named for a plain in the choices: the first of it holding units of his."""
        areas = _plain_areas(state, plain)
        mine = [a for a in areas if state.area(a).tokens.get(self.victim, 0) or state.area(a).city == self.victim]
        return (mine or list(areas))[0]

    # hooks used by calamities.settle_resolution / pending_resolution / defaults_resolution / decide_pick
    def settle(self, state: GameState, cal: tuple) -> list[Event]:
        return []  # two plains at least: he is asked

    def prompt(self, state: GameState, cal: tuple) -> Prompt:
        n = state.nations[self.victim]
        lines = tuple(f"PICK {self._where(state, p)}" for p in self.plains)
        return Prompt(
            who=self.victim.lower(),
            player_id=n.player_id,
            step="flood-plain",
            question=(
                f"Flood: you have {self.points} unit points on each of the "
                + " and ".join(f"{p} plain" for p in self.plains)
                + "; name the plain that floods (PICK any area of it)."
            ),
            choices=lines,
            template=lines[0],
            default=f"the {self.plains[0]} plain ({lines[0]})",
            situation=tuple(f"The {p} plain: {', '.join(_plain_areas(state, p))}." for p in self.plains),
            cites=("seed 003: 9", "§30.51", "fact sheet §2.12"),
        )

    def decide_pick(self, state: GameState, cal: tuple, command: Any, by_default: bool = False) -> list[Event]:
        if state.nations[self.victim].player_id != command.player_id:
            raise Rejection(f"no calamity asks you to choose now; {self.victim} names the flooding plain", "§30.51")
        areas = ruleset_of(state).areas
        plains = {areas[a].flood_plain_group for a in command.areas if a in areas}
        if len(command.areas) != 1 or not plains <= set(self.plains) or not plains:
            raise Rejection(f"name one area of the {' or the '.join(self.plains)} plain", "§30.51")
        data = _flood_data(state, self.victim, plains.pop()) | {"picked": command.areas[0]}
        if by_default:
            data["by_default"] = True
        return [Event("FloodPlainChosen", data, ("seed 003: 9", "§30.51", "fact sheet §2.12"))]

    def default(self, state: GameState, cal: tuple, prompt: Prompt) -> list[Event]:
        return self.decide_pick(state, cal, PickCities(prompt.player_id, (self._where(state, self.plains[0]),)), True)


def apply_flood(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, step="1", filed=state.filed.set("plain", (data["plain"],)))


def tell_flood(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    how = f" ({d['victim']}'s choice{', by default' if d.get('by_default') else ''})" if event.type == "FloodPlainChosen" else ""
    return f"Flood ({d['victim']}): the {d['plain']} plain{how} ({', '.join(d['areas'])}) floods; {d['victim']} loses up to {d['points']} unit points there."


FAMILY = CalamityFamily(
    resolvers={"Volcanic Eruption / Earthquake": volcano, "Flood": flood},
    apply={"FloodStruck": apply_flood, "FloodPlainChosen": apply_flood},
    inputs={"FloodPlainChosen": lambda s, d: PickCities(s.nations[d["victim"]].player_id, (d["picked"],))},
    narrate={"FloodStruck": tell_flood, "FloodPlainChosen": tell_flood},
    #: What these calamities keep in ``state.filed`` until the calamity is resolved.
    filed=("struck", "plain"),
)

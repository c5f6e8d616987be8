"""Barbarian Hordes, a calamity of phase 9 (stack 5, tradable; §30.52, fact sheet §2.12, D-1, Q-S6).

The fact sheet's row is the specification; the clause numbers cited are those
of the rulebook text it digests (its source S1, §30.521-§30.527; RULINGS
already cites §30.5235 and §30.5251 from it). Procedure as this engine plays
it, one event per step (``state.step`` counts them):

0. Crete is never the primary victim (§30.527): nothing happens, the card is
   still resolved and returned. Nothing happens either when none of the
   victim's start areas is on the board in use (only in positions set up by
   hand) or when the Barbarian supply is empty.
1. Placement (§30.5211): 15 Barbarian tokens (fewer if the supply is short:
   as many as are left, as D-5 / Q-S11 rule for pirate cities) appear in one
   of the victim's start areas on the board. If he has units in any start
   area, the one where they do him the greatest damage; otherwise an empty
   start area (or one holding Barbarians only); an area with other players'
   units only when no other is left. An area holding a pirate city is never
   used: it counts as full (§24.1) and is the Barbarians' own.
2. Conflict at once (§30.5212), as in phase 4 with the Barbarians as one
   party holding no cards (seed 002: [The barbarians], R-3.1, D-16, D-17):
   a token conflict among every party there (their own earlier tokens join
   them); then, if only Barbarians are left beside a player's city, they
   attack it with the phase-4 threshold (7; 8 against an Engineering holder,
   D-19, §24.35). A failed attack removes them all. A successful one turns
   the city into 6 (Engineering: 7) of its owner's tokens from his stock
   (fewer if short), and the token conflict is fought again. No trade card is
   drawn and nothing is pillaged (§30.526, §24.53). Removed tokens go back to
   their owners' stock, Barbarians back to the supply.
3. Movement (§30.5231-§30.5234): while the Barbarians in their area exceed
   its population limit, the surplus moves as one body to an adjacent area,
   across a land border or a water boundary (land adjacency and coast-to-
   coast links of the data, never open sea), leaving the limit behind, and
   fights there as in 2. The area is chosen in this order (§30.5241):
   a. an adjacent area where the body does the victim immediate damage, the
      greatest damage first;
   b. otherwise an adjacent area without units of the victim (empty, their
      own, or other players', §30.5242) that is nearest, counted in steps
      through such areas, to an area where a body of this size could damage
      him.
   If neither exists, the surplus has nowhere to go: it is removed, as no
   Barbarians may stand above a limit at the end of the calamity (§30.5232).
   The steps are bounded by the number of areas on the board; in practice the
   body stops long before, since every step either costs the victim units or
   brings the body strictly nearer to them, and it never grows.
4. The Barbarians then stay on the board until eliminated; they never grow
   and are never victims of calamities (§30.5235, §29.65). Later conflicts
   treat them as any Barbarian tokens (phase 4).

"Damage" is what the victim loses in that area's conflict, in unit points: his
city 5, each token 1, the tokens a taken city becomes counting only as they
are lost (§29.62). Third parties lose units too but do not count.

Ties in placement or routing (§30.5251): the player who traded the card
chooses (PICK <area>); an untraded card is decided by the top of the
`beneficiary-rule` ranking without the victim (D-1, Q-S6). With a single
best area nobody is asked. The default is the first tied area by name.

Readings where the fact sheet leaves room, and why:
* A taken city becomes tokens and is fought over, rather than simply
  vanishing: §30.5212 says "conflict is resolved", and conflict (§24, seed
  002: 4B) replaces a taken city by its owner's tokens.
* Third parties in a start area where the victim has units do not make it
  less likely: the greatest damage to him decides (§30.5234); "third
  parties only if unavoidable" is about the fall-back placement.
* An area where the victim shares room with other players counts as his
  for routing if the body can hurt him there: the damage principle again.
* The supply is not recorded anywhere else: it is counted as the tokens of
  the unused sets less the Barbarian tokens on the board (`supply`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from pbem.rules.board.battle import area_limit
from pbem.rules.board.ranking import BARBARIANS, beneficiary_ranking
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import FrozenMap, replace
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.barbarians.clash import (
    ATTACK_CITES,
    CITES,
    FIGHT_CITES,
    NAME,
    TIE_CITES,
    board,
    clash,
    damage,
    has_units,
    neighbours,
    open_to_barbarians,
    players_units,
    supply,
)
from pbem.rules.phases.calamities.barbarians.narration import (
    AVERTED,
    plural,
    tell_appear,
    tell_chosen,
    tell_halt,
    tell_move,
)
from pbem.rules.phases.calamities.choosing import (
    CalamityFamily,
    PickCities,
    Strike,
    quantity,
)
from pbem.rules.ruleset.rulebook import ruleset_of

# -- who decides ties ---------------------------------------------------------------------------


def chooser(state: GameState, cal: Strike) -> str:
    """The trader; untraded, the top of the beneficiary ranking without the victim (§30.5251, D-1, Q-S6)."""
    _, victim, giver = cal
    if giver and giver in state.nations:
        return giver
    ranking = beneficiary_ranking(state, excluding=(victim,))
    return ranking[0] if ranking else victim


# -- the stages ---------------------------------------------------------------------------------


def _start_areas(state: GameState, victim: str) -> list[str]:
    on = board(state)
    return sorted(a for a in ruleset_of(state).nations[victim].start_areas if a in on and open_to_barbarians(state, a))


def _placement(state: GameState, cal: Strike) -> Any:
    """Stage 0: where the hordes appear (§30.5211), or why they do not."""
    name, victim, _ = cal
    base = {"calamity": name, "victim": victim}
    rules = ruleset_of(state)
    if victim in rules.calamities[name].immune_nations:
        return Event("BarbariansAverted", base | {"reason": "immune"}, CITES + ("§30.527",))
    starts = _start_areas(state, victim)
    if not starts:
        return Event("BarbariansAverted", base | {"reason": "no-start-area"}, CITES + ("§30.5211",))
    wanted = quantity(state, victim, name, "primary", "barbarian_tokens", rules.calamities[name].primary["barbarian_tokens"])
    count = min(wanted, supply(state))
    if count <= 0:
        return Event("BarbariansAverted", base | {"reason": "no-supply"}, CITES + ("§30.5211",))
    his = [a for a in starts if has_units(state, a, victim)]
    if his:
        scores = {a: damage(state, a, count, victim) for a in his}
        best = max(scores.values())
        tied, reason = [a for a in his if scores[a] == best], "damage"
    else:
        free = [a for a in starts if not players_units(state, a)]
        tied, reason = (free, "empty") if free else (starts, "third-parties")
    plan = {"kind": "place", "count": count, "wanted": wanted, "reason": reason, "options": tied}
    return _decided(state, cal, plan)


def _nearest(state: GameState, victim: str, origin: str, count: int) -> tuple[list[str], int] | None:
    """§30.5241 b: the neighbours of ``origin`` without victim units nearest to damageable victim units.

    Steps are counted through areas without units of the victim (empty,
    Barbarian or other players' areas); the targets are the areas where a
    body of ``count`` would damage him. None when no such area can be reached.
    """
    on = board(state)
    targets = [a for a in sorted(on) if open_to_barbarians(state, a) and damage(state, a, count, victim) > 0]
    if not targets:
        return None
    distance = {a: 0 for a in targets}
    queue = deque(targets)
    while queue:
        here = queue.popleft()
        for a in neighbours(state, here):
            if a not in distance and not has_units(state, a, victim):
                distance[a] = distance[here] + 1
                queue.append(a)
    reachable = [a for a in neighbours(state, origin) if a in distance and not has_units(state, a, victim)]
    if not reachable:
        return None
    best = min(distance[a] for a in reachable)
    return [a for a in reachable if distance[a] == best], best


def _route(state: GameState, cal: Strike, origin: str, surplus: int) -> Any:
    """A movement stage (§30.5231-§30.5241): the surplus moves, or halts with nowhere to go."""
    victim = cal[1]
    scores = {a: damage(state, a, surplus, victim) for a in neighbours(state, origin)}
    hurting = [a for a, d in scores.items() if d > 0]
    if hurting:
        best = max(scores[a] for a in hurting)
        plan = {"kind": "move", "from": origin, "count": surplus, "reason": "damage",
                "options": [a for a in hurting if scores[a] == best]}
        return _decided(state, cal, plan)
    near = _nearest(state, victim, origin, surplus)
    if near is None:
        return _halt(state, cal, origin, "no-way")
    options, distance = near
    plan = {"kind": "move", "from": origin, "count": surplus, "reason": "nearest", "distance": distance, "options": options}
    return _decided(state, cal, plan)


def _decided(state: GameState, cal: Strike, plan: dict[str, Any]) -> Any:
    """The event for a plan with one area (or the area already chosen), else the tie question."""
    options = plan["options"]
    chosen = state.filed.get("barbarian-route", ())
    if len(options) == 1 or (chosen and chosen[0] in options):
        area = options[0] if len(options) == 1 else chosen[0]
        return _arrive(state, cal, plan, area, chosen_by=None if len(options) == 1 else chooser(state, cal))
    return RouteChoice(chooser(state, cal), cal[1], plan)


def _arrive(state: GameState, cal: Strike, plan: dict[str, Any], area: str, chosen_by: str | None) -> Event:
    name, victim, _ = cal
    count = plan["count"]
    if plan["kind"] == "move":  # the body leaves its area first
        origin = state.area(plan["from"])
        state = state.with_area(plan["from"], origin.add_tokens(BARBARIANS, -count))
    data = {
        "calamity": name,
        "victim": victim,
        "area": area,
        "count": count,
        "reason": plan["reason"],
        "options": list(plan["options"]),
        "chooser": chosen_by,
        "clash": clash(state, area, count, victim),
    }
    extra: tuple[str, ...] = ()
    if plan["kind"] == "place":
        data |= {"wanted": plan["wanted"], "short": count < plan["wanted"]}
        cites = CITES + ("§30.5211",)
        event = "BarbariansAppear"
    else:
        water = area not in ruleset_of(state).land_adjacency.get(plan["from"], ())
        data |= {"from": plan["from"], "distance": plan.get("distance", 0), "water": water}
        cites = CITES + ("§30.5231", "§30.5233", "§30.5234", "§30.5241" if plan["reason"] == "damage" else "§30.5242")
        event = "BarbariansMove"
    fight = data["clash"]
    if fight["fight"] or fight["attack"]:
        extra += FIGHT_CITES
    if fight["attack"]:
        extra += ATTACK_CITES
        if "Engineering" in state.nations[fight["attack"]["owner"]].civ_cards:
            extra += ("§24.35",)
        if fight["attack"]["succeeded"]:
            extra += ("seed 001: [city-attack step 1]", "§30.526", "§24.53")
    if chosen_by:
        extra += TIE_CITES
    return Event(event, data, cites + extra)


def _halt(state: GameState, cal: Strike, area: str, reason: str) -> Event:
    """The Barbarians stop; a surplus with nowhere to go is removed (§30.5232, §30.5235)."""
    here = state.area(area).tokens.get(BARBARIANS, 0)
    removed = max(0, here - area_limit(state, area)) if reason != "no-surplus" else 0
    data = {
        "calamity": cal[0],
        "victim": cal[1],
        "area": area,
        "limit": area_limit(state, area),
        "left": here - removed,
        "removed": removed,
        "reason": reason,
        "damage": int(state.filed.get("barbarians", (area, 0))[1]),
    }
    return Event("BarbariansHalt", data, CITES + ("§30.5232", "§30.5235"))


def barbarian_hordes(state: GameState, cal: Strike, index: int) -> Any:
    """The resolver of Barbarian Hordes (see the module docstring for the steps)."""
    if index == 0:
        return _placement(state, cal)
    horde = state.filed.get("barbarians")
    if not horde:
        return None
    area = str(horde[0])
    surplus = state.area(area).tokens.get(BARBARIANS, 0) - area_limit(state, area)
    if surplus <= 0:
        return _halt(state, cal, area, "no-surplus")
    if index > len(board(state)):  # a safety bound; see the module docstring
        return _halt(state, cal, area, "bound")
    return _route(state, cal, area, surplus)


# -- the tie question ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RouteChoice:
    """Several areas tie for the Barbarians: ``chooser`` names one (PICK <area>; §30.5251)."""

    chooser: str
    victim: str
    plan: dict[str, Any]

    @property
    def options(self) -> tuple[str, ...]:
        return tuple(self.plan["options"])

    def _why(self, state: GameState) -> str:
        plan = self.plan
        if plan["kind"] == "place":
            head = f"{plan['count']} Barbarian tokens appear in one of {self.victim}'s start areas"
            if plan["reason"] == "damage":
                hurt = damage(state, self.options[0], plan["count"], self.victim)
                return f"{head}; {' and '.join(self.options)} would each cost {self.victim} {plural(hurt, 'unit point')}"
            if plan["reason"] == "empty":
                return f"{head}; {self.victim} has no units in any of them, and {' and '.join(self.options)} hold no player's units"
            return f"{head}; {self.victim} has no units in any of them and none is free of other players' units"
        head = f"{plan['count']} Barbarians leave {plan['from']}"
        if plan["reason"] == "damage":
            hurt = damage(state, self.options[0], plan["count"], self.victim)
            return f"{head}; {' and '.join(self.options)} would each cost {self.victim} {plural(hurt, 'unit point')}"
        return (f"{head}; no neighbouring area lets them hurt {self.victim}, and {' and '.join(self.options)} are each "
                f"{plan['distance']} step{'s' if plan['distance'] != 1 else ''} from the nearest of its units they can hurt")

    def _role(self, cal: tuple) -> str:
        if cal[2] and cal[2] == self.chooser:
            return "you traded the card"
        return "the card was not traded and you rank first for beneficiary (D-1)"

    def _line(self, state: GameState, area: str) -> str:
        here = state.area(area)
        parts = ([f"{here.city}'s city" if here.city else ""] + [f"{p} {n}" for p, n in sorted(here.tokens.items())])
        units = ", ".join(p for p in parts if p) or "empty"
        arriving = self.plan["count"]
        if self.plan["kind"] == "move":
            origin = state.area(self.plan["from"])
            state = state.with_area(self.plan["from"], origin.add_tokens(BARBARIANS, -arriving))
        lost = clash(state, area, arriving, self.victim)["lost"]
        hurt = "; ".join(f"{n} would lose {plural(v['points'], 'unit point')}" for n, v in lost.items() if v["points"]) or "nobody would lose units"
        return f"{area} (limit {area_limit(state, area)}): {units}; {hurt}."

    # hooks used by calamities.settle_resolution / pending_resolution / defaults_resolution / decide_pick
    def settle(self, state: GameState, cal: tuple) -> list[Event]:
        return []  # a tie: the chooser is asked

    def prompt(self, state: GameState, cal: tuple) -> Prompt:
        lines = tuple(f"PICK {a}" for a in self.options)
        where = "where they appear" if self.plan["kind"] == "place" else "where they go"
        return Prompt(
            who=self.chooser.lower(),
            player_id=state.nations[self.chooser].player_id,
            step="barbarian-route",
            question=f"Barbarian Hordes strike {self.victim}: {self._why(state)}. As {self._role(cal)}, choose {where} (PICK <area>).",
            choices=lines,
            template=lines[0],
            default=f"the first by area name ({lines[0]})",
            situation=tuple(self._line(state, a) for a in self.options),
            cites=CITES + TIE_CITES,
        )

    def decide_pick(self, state: GameState, cal: tuple, command: Any, by_default: bool = False) -> list[Event]:
        if state.nations[self.chooser].player_id != command.player_id:
            raise Rejection(f"no calamity asks you to choose now; {self.chooser} chooses where the Barbarians go", "§30.5251")
        named = tuple(dict.fromkeys(command.areas))
        if len(named) != 1:
            raise Rejection(f"name one area for the Barbarians: {' or '.join(self.options)}", "§30.5251")
        if named[0] not in self.options:
            raise Rejection(f"{named[0]}: the Barbarians cannot go there now; choose {' or '.join(self.options)}", "§30.5251")
        data = {"calamity": cal[0], "victim": self.victim, "chooser": self.chooser, "kind": self.plan["kind"],
                "area": named[0], "options": list(self.options)}
        if by_default:
            data["by_default"] = True
        return [Event("BarbarianRouteChosen", data, CITES + TIE_CITES)]

    def default(self, state: GameState, cal: tuple, prompt: Prompt) -> list[Event]:
        return self.decide_pick(state, cal, PickCities(prompt.player_id, (self.options[0],)), True)


# -- apply ---------------------------------------------------------------------------------------


def _next(state: GameState) -> str:
    return str(int(state.step) + 1 if state.step.isdigit() else 1)


def _apply_clash(state: GameState, fight: dict[str, Any]) -> GameState:
    """Set the area to the outcome; every nation's tokens that left the board go back to its stock."""
    area = fight["area"]
    here = state.area(area)
    before = {p: n for p, n in here.tokens.items()}
    after = dict(fight["after"])
    for owner, count in fight.get("towns", {}).items():  # Small Cities: units counted towns and tokens together
        before[owner] = before.get(owner, 0) + count
    kept_towns = fight.get("towns_after", {})
    tokens = here.tokens
    for party in set(before) | set(after):
        left = after.get(party, 0) - kept_towns.get(party, 0)
        tokens = tokens.set(party, left) if left else tokens.without(party)
    here = replace(here, tokens=tokens, city=fight["city_after"])
    if "towns" in fight:
        here = replace(here, towns=FrozenMap(kept_towns))
    state = state.with_area(area, here)
    for nation in sorted(set(before) | set(after)):
        if nation in state.nations:
            n = state.nations[nation]
            state = state.with_nation(replace(n, stock=n.stock + before.get(nation, 0) - after.get(nation, 0)))
    return state


def _filed(state: GameState, area: str, hurt: int) -> GameState:
    total = int(state.filed.get("barbarians", (area, 0))[1]) + hurt
    filed = state.filed.set("barbarians", (area, total)).without("barbarian-route")
    return replace(state, filed=filed, step=_next(state))


def apply_averted(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, step=_next(state))


def apply_appear(state: GameState, data: dict[str, Any]) -> GameState:
    return _filed(_apply_clash(state, data["clash"]), data["area"], data["clash"]["damage"])


def apply_move(state: GameState, data: dict[str, Any]) -> GameState:
    origin = state.area(data["from"])
    state = state.with_area(data["from"], origin.add_tokens(BARBARIANS, -data["count"]))
    return _filed(_apply_clash(state, data["clash"]), data["area"], data["clash"]["damage"])


def apply_halt(state: GameState, data: dict[str, Any]) -> GameState:
    if data["removed"]:
        state = state.with_area(data["area"], state.area(data["area"]).add_tokens(BARBARIANS, -data["removed"]))
    filed = state.filed.without("barbarians").without("barbarian-route")
    return replace(state, filed=filed, step=_next(state))


def apply_chosen(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, filed=state.filed.set("barbarian-route", (data["area"],)))


FAMILY = CalamityFamily(
    resolvers={NAME: barbarian_hordes},
    narrate={
        "BarbariansAverted": lambda s, e, v: f"Barbarian Hordes ({e.data['victim']}): " + AVERTED[e.data["reason"]].format(victim=e.data["victim"]) + ".",
        "BarbariansAppear": tell_appear,
        "BarbariansMove": tell_move,
        "BarbariansHalt": tell_halt,
        "BarbarianRouteChosen": tell_chosen,
    },
    apply={
        "BarbariansAverted": apply_averted,
        "BarbariansAppear": apply_appear,
        "BarbariansMove": apply_move,
        "BarbariansHalt": apply_halt,
        "BarbarianRouteChosen": apply_chosen,
    },
    inputs={
        "BarbarianRouteChosen": lambda s, d: PickCities(s.nations[d["chooser"]].player_id, (d["area"],)),
    },
    #: What this calamity keeps in ``state.filed`` while it is resolved: the area and damage so far, and a tie's answer.
    filed=("barbarians", "barbarian-route"),
)

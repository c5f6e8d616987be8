"""Movement for a planner bot: gather cities it can keep, spread the rest to grow, start no wars.

A prompt's movement choices (one move each) are too few to grow a
civilization, so the planner writes its own orders:

1. Cities. For every free area it could fill this turn (six tokens on a
   city site, twelve elsewhere, §25.1), sites and the fullest first (and
   where the dice deal the calamities, inland before coastal: Piracy takes
   the coastal cities of whoever rolls), it gathers the tokens from the
   neighbours that can spare them best: never from a site already being
   gathered, plain areas before other sites. It keeps a site only if the
   cities it would then have stay supported after surplus removal (two
   tokens on the board each, §26.3, and under Small Cities one for every two
   towns above their areas' limits, SC-6), so a new city never costs an old
   one, and no city is gathered that construction would refuse to build.
2. Hemmed in with no open city site by land, it sails a shipload to one
   (``seafaring``).
3. A pirate city next door is attacked when enough tokens can reach it
   (``city_attack_needed``, §24.34) and the nation's cities stay supported:
   pirate cities need no support and stay until attacked, so under
   No-Trading, where Piracy strikes the few nations that roll again and
   again, they wall a nation in for good.
4. The rest spread into empty neighbouring areas, so that they grow rather
   than be removed as surplus.
5. Tokens still above an area's limit, which surplus removal would take
   anyway, attack a neighbouring area held by another nation's tokens.

It starts no other fight: a war costs both sides the tokens that would
have grown into cities. Every line is first tried on
a copy of the game, so the server never refuses one.
"""

from __future__ import annotations

from itertools import combinations

from pbem.rules.board.battle import PIRATES, city_attack_needed
from pbem.rules.board.support import support_needed, surplus
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.state import GameState
from pbem.rules.phases.movement.routes import land_neighbours
from pbem.rules.phases.movement.turns import movable
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

from .lookahead import nation_of, try_orders
from .seafaring import voyage

CITY_TOKENS = 6  # on a city site (§25.1)
OFF_SITE_TOKENS = 12  # anywhere else (§25.1)
SUPPORT_PER_CITY = 2  # §26.3
MAX_BUILD_TRIES = 8  # sets of sites the engine is asked to try, the largest first


def _free(state: GameState, nation: str, area: str) -> bool:
    """An area a token may enter without a fight and stay in: no other units, no city (its tokens would be surplus)."""
    here = state.area(area)
    others = any(n != nation and k > 0 for n, k in (*here.tokens.items(), *here.towns.items()))
    return not others and here.city is None and ruleset_of(state).areas[area].population_limit > 0


def supported_after_building(state: GameState, nation: str, sites: set[str]) -> bool:
    """Would the nation's cities, with new ones on ``sites``, keep two tokens each once surplus is removed?

    Under Small Cities its towns above their areas' limits need support too (SC-6): the construction plan
    (``towns``) checks them, so a city gathered without them would be refused and its tokens lost as surplus."""
    on_board = state.tokens_on_board(nation)
    built = sum(state.area(s).tokens.get(nation, 0) for s in sites)
    lost = sum(k for area, k in surplus(state, nation).items() if area not in sites)
    cities = state.cities_on_board(nation) + len(sites)
    towns = support_needed(state, nation) - SUPPORT_PER_CITY * state.cities_on_board(nation)  # excess towns (SC-6)
    return on_board - built - lost >= SUPPORT_PER_CITY * cities + towns


class _Plan:
    """Orders written so far, and the game as they leave it."""

    def __init__(self, state: GameState, player_id: int, nation: str) -> None:
        self.state = state
        self.player_id = player_id
        self.nation = nation
        self.lines: list[str] = []

    def mine(self, area: str) -> int:
        return self.state.area(area).tokens.get(self.nation, 0)

    def movable(self, area: str) -> int:
        return movable(self.state, self.nation, area)

    def move(self, count: int, origin: str, to: str) -> bool:
        if count <= 0:
            return False
        line = f"MOVE {count} {origin} {to}"
        tried = try_orders(self.state, self.player_id, line)
        if tried is None:
            return False
        self.state = tried
        self.lines.append(line)
        return True


def _needed(state: GameState, nation: str, area: str) -> int:
    """Tokens that make a city here this turn: six on a site, less the nation's towns there (SC-2), or twelve."""
    if ruleset_of(state).areas[area].has_city_site:
        return CITY_TOKENS - state.area(area).towns.get(nation, 0)
    return OFF_SITE_TOKENS


def _gather_cities(plan: _Plan) -> set[str]:
    state, nation = plan.state, plan.nation
    areas = ruleset_of(state).areas
    gathered: set[str] = set()

    def reach(site: str) -> int:
        return plan.mine(site) + sum(plan.movable(n) for n in land_neighbours(plan.state, site) if n not in gathered)

    near = {a for a, here in state.areas.items() if here.tokens.get(nation)}
    near |= {n for a in list(near) for n in land_neighbours(state, a)}
    candidates = [a for a in near if a in areas and areas[a].population_limit > 0 and state.area(a).city is None
                  and _free(state, nation, a) and reach(a) >= _needed(state, nation, a)]
    inland = parts_of(state).calamities.by_dice  # Piracy takes coastal cities of whoever rolls (NT-7 to NT-9)

    def order(s: str) -> tuple:
        return (_needed(state, nation, s), inland and areas[s].coastal, -plan.mine(s), -reach(s), s)

    for site in sorted(candidates, key=order):
        need_here = _needed(plan.state, nation, site)
        if site in gathered or reach(site) < need_here:
            continue
        before_state, before_lines = plan.state, list(plan.lines)
        sources = sorted(
            (n for n in land_neighbours(plan.state, site) if n not in gathered and plan.movable(n) > 0),
            key=lambda n: (areas[n].has_city_site and plan.state.area(n).city is None, -plan.movable(n), n),
        )
        for source in sources:
            need = need_here - plan.mine(site)
            if need <= 0:
                break
            plan.move(min(need, plan.movable(source)), source, site)
        if plan.mine(site) >= need_here and supported_after_building(plan.state, nation, gathered | {site}):
            gathered.add(site)
        else:
            plan.state, plan.lines = before_state, before_lines
    return gathered


def _spread(plan: _Plan, gathered: set[str]) -> None:
    """Tokens above an area's limit would be removed as surplus; lone tokens elsewhere grow.

    Empty city sites and their neighbours come first: tokens there now are a
    city gathered next turn."""
    areas = ruleset_of(plan.state).areas

    def open_site(area: str) -> bool:
        return areas[area].has_city_site and plan.state.area(area).city is None

    def staging(area: str) -> int:
        return 0 if open_site(area) else 1 if any(open_site(n) for n in land_neighbours(plan.state, area)) else 2

    for origin in sorted(a for a in plan.state.areas if plan.mine(a) > 1 and a not in gathered):
        for to in sorted(land_neighbours(plan.state, origin), key=lambda a: (staging(a), a)):
            spare = min(plan.movable(origin), plan.mine(origin) - max(1, min(2, areas[origin].population_limit)))
            if spare <= 0:
                break
            if _free(plan.state, plan.nation, to) and plan.mine(to) == 0:
                plan.move(min(spare, areas[to].population_limit), origin, to)


def _retake(plan: _Plan, gathered: set[str]) -> None:
    """Attack each neighbouring pirate city that enough tokens can reach, surplus tokens first.

    The attackers are as good as lost (the city fights as six tokens), so the
    nation's cities, and those gathered this turn, must stay supported by
    what is left."""
    nation = plan.nation
    pirates = sorted(a for a, here in plan.state.areas.items() if here.city == PIRATES)
    for target in pirates:
        need = city_attack_needed(plan.state, nation, PIRATES)
        over = surplus(plan.state, nation)
        sources = sorted(
            (n for n in land_neighbours(plan.state, target) if n not in gathered and plan.movable(n) > 0),
            key=lambda n: (-over.get(n, 0), -plan.movable(n), n),
        )
        if sum(plan.movable(n) for n in sources) < need:
            continue
        before_state, before_lines = plan.state, list(plan.lines)
        for source in sources:
            short = need - plan.mine(target)
            if short <= 0:
                break
            plan.move(min(short, plan.movable(source)), source, target)
        # The attackers stand in a city's area, so surplus removal counts them lost like any other surplus.
        if plan.mine(target) < need or not supported_after_building(plan.state, nation, gathered):
            plan.state, plan.lines = before_state, before_lines


def _raid(plan: _Plan, gathered: set[str]) -> None:
    """Tokens that surplus removal would take anyway attack a neighbour's tokens: a fight that costs nothing."""
    areas = ruleset_of(plan.state).areas
    over = surplus(plan.state, plan.nation)
    for origin in sorted(a for a in over if a not in gathered and plan.state.area(a).city is None):
        spare = min(over[origin], plan.movable(origin))
        for to in land_neighbours(plan.state, origin):
            there = plan.state.area(to)
            foes = [n for n, k in there.tokens.items() if n != plan.nation and k > 0]
            if spare > 0 and len(foes) == 1 and there.city is None and areas[to].population_limit > 0:
                if plan.move(spare, origin, to):
                    break


def plan_moves(prompt: Prompt, state: GameState) -> str:
    """Movement orders that gather cities and spread the rest (see the module docstring)."""
    nation = nation_of(state, prompt)
    if nation is None:
        return "HALT"
    plan = _Plan(state, prompt.player_id, nation)
    gathered = _gather_cities(plan)
    sail = voyage(plan.state, nation)
    if sail is not None:
        tried = try_orders(plan.state, plan.player_id, sail)
        if tried is not None:
            plan.state = tried
            plan.lines.append(sail)
    _retake(plan, gathered)
    _spread(plan, gathered)
    _raid(plan, gathered)
    return "\n".join(plan.lines + ["HALT"])


def build_order(prompt: Prompt, state: GameState) -> str:
    """BUILD the most cities the nation can keep supported (orders are secret until all are in, so no lookahead).

    The prompt lists every city at once and each alone, not the sets in
    between, so the planner takes the sites from them and tries its own
    sets, the largest first (and those paid from treasury last). With 39
    tokens on four sites, all four would leave too few tokens to support
    them, and one alone wastes the other three sites' tokens as surplus;
    three of them is the answer. Under Small Cities ``towns`` writes the
    order instead."""
    nation = nation_of(state, prompt)
    if nation is None:
        return None
    items = list(dict.fromkeys(
        item.strip() for choice in (prompt.template, *prompt.choices) if choice.startswith("BUILD ")
        for item in choice[6:].split(",")
    ))
    sets = sorted(
        (combo for k in range(len(items), 0, -1) for combo in combinations(items, k)),
        key=lambda combo: (-len(combo), sum("TREASURY" in item for item in combo)),
    )
    tried = 0
    for combo in sets:
        sites = {item.split(" TREASURY")[0].strip() for item in combo}
        if len(sites) < len(combo) or not all(a in state.areas for a in sites):
            continue
        if not supported_after_building(state, nation, sites):
            continue
        text = "BUILD " + ", ".join(combo)
        if try_orders(state, prompt.player_id, text) is not None:
            return text
        tried += 1
        if tried >= MAX_BUILD_TRIES:
            break
    return "DONE"

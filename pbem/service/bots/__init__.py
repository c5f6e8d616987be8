"""Bot players: legal orders, sent through the same order language as people.

A bot reads a prompt's choices (complete order texts) and picks one with its
own seeded random generator, so a bot game is reproducible from its seed.
A `random` bot picks uniformly. A `greedy` bot looks one decision ahead: it
tries each choice on a copy of the game with the pure engine, scores its own
position when the engine next waits, and takes the best (ties at random).
A `planner` bot plays like a greedy one except in movement, where a prompt's
choices (one move each) are too few to grow a civilization: it writes its
own orders, gathering six tokens on a free city site next to enough of its
tokens, pushing once a turn into a neighbouring area that fewer tokens of
one other nation hold, and spreading the rest into empty neighbouring areas
so that they grow and are not lost as surplus. Every line it writes is first tried on a
copy of the game, so it never sends an order the server refuses.

In trade both `greedy` and `planner` bots behave as a patient person would:
accept an offer they can meet, otherwise make one offer and wait for an
answer (``bot_orders`` returns ``WAIT``; the driver lets someone else act,
or the deadline close the phase), and finish once the turn has seen enough
offers.
"""

from __future__ import annotations

import random

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as rules
from pbem.rules.core.draws import Draws
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.movement.routes import land_neighbours
from pbem.rules.phases.movement.turns import MOVE_STEP, movable
from pbem.rules.ruleset.rulebook import ruleset_of

STRATEGIES = ("random", "greedy", "planner")
CITY_TOKENS = 6  # on a city site (§25.1)
WAIT = ""  # no reply for now: the bot waits for an answer to its open offer
OFFERS_PER_PLAYER = 2  # offers a turn, per player, before bots stop offering


def bot_orders(prompt: Prompt, rng: random.Random, state: GameState | None = None, strategy: str = "random") -> str:
    """One order text for ``prompt``, or WAIT."""
    if strategy == "planner" and state is not None and prompt.step == MOVE_STEP:
        return _plan_moves(prompt, state)
    if not prompt.choices:
        return prompt.template
    if strategy in ("greedy", "planner") and state is not None and prompt.step.startswith("trade"):
        return _trade(prompt, rng, state)
    if strategy in ("greedy", "planner") and state is not None and len(prompt.choices) > 1:
        return _best(prompt, rng, state)
    return rng.choice(prompt.choices)


def standing(state: GameState, nation: str) -> float:
    """A rough worth of one nation's position: what wins the game, and what grows it."""
    n = state.nations[nation]
    return (
        60 * state.cities_on_board(nation)
        + 100 * n.ast_position
        + sum(1 for _ in n.civ_cards) * 40
        + 2 * state.tokens_on_board(nation)
        + 3 * state.towns_on_board(nation)  # Small Cities: a town pays tax and draws cards, but never grows
        + n.treasury
        + 3 * len(n.hand)
    )


def _best(prompt: Prompt, rng: random.Random, state: GameState) -> str:
    nation = next((name for name, n in state.nations.items() if n.player_id == prompt.player_id), None)
    if nation is None:
        return rng.choice(prompt.choices)
    draws = Draws("bot lookahead")  # the bot cannot know the real seed; its guesses use its own
    scored = []
    for choice in prompt.choices:
        after = state
        try:
            for line in parse_orders(choice, after, Actor(player_id=prompt.player_id)).lines:
                if line.command is None:
                    continue
                after = rules.fold(after, rules.decide(after, line.command, draws))
        except Rejection:
            continue
        scored.append((standing(after, nation) + rng.random(), choice))
    return max(scored)[1] if scored else rng.choice(prompt.choices)


def _trade(prompt: Prompt, rng: random.Random, state: GameState) -> str:
    accepts = [c for c in prompt.choices if c.startswith("ACCEPT")]
    if accepts:
        return rng.choice(accepts)
    if any(c.startswith("WITHDRAW") for c in prompt.choices):
        return WAIT
    offers = [c for c in prompt.choices if c.startswith("OFFER")]
    made = int(state.filed.get("count", (0,))[0])
    if offers and made < OFFERS_PER_PLAYER * len(state.nations):
        return rng.choice(offers)
    return "FINISH"


def _free(state: GameState, nation: str, area: str) -> bool:
    """An area a token may enter without a fight: no other units, no city of anyone else, room for people."""
    here = state.area(area)
    others = any(n != nation and k > 0 for n, k in here.tokens.items())
    return not others and here.city in (None, nation) and ruleset_of(state).areas[area].population_limit > 0


def _try(state: GameState, player_id: int, line: str) -> GameState | None:
    """The game after ``line``, or None when the server would refuse it."""
    try:
        parsed = parse_orders(line, state, Actor(player_id=player_id)).lines
        after = state
        for order in parsed:
            if order.command is None:
                return None
            after = rules.fold(after, rules.decide(after, order.command, Draws("bot lookahead")))
        return after
    except Rejection:
        return None


def _plan_moves(prompt: Prompt, state: GameState) -> str:
    """Movement orders that gather a city and spread the rest (see the module docstring)."""
    nation = next(name for name, n in state.nations.items() if n.player_id == prompt.player_id)
    areas = ruleset_of(state).areas
    lines: list[str] = []
    after = state

    def move(count: int, origin: str, to: str) -> None:
        nonlocal after
        if count <= 0:
            return
        line = f"MOVE {count} {origin} {to}"
        tried = _try(after, prompt.player_id, line)
        if tried is not None:
            after = tried
            lines.append(line)

    def mine(area: str) -> int:
        return after.area(area).tokens.get(nation, 0)

    # A city site with no city that six of our tokens can reach this turn.
    for site in sorted(a for a in after.areas if areas[a].has_city_site and after.area(a).city is None):
        if not _free(after, nation, site) or not mine(site) and not any(mine(n) for n in land_neighbours(after, site)):
            continue
        sources = sorted(land_neighbours(after, site), key=lambda n: -movable(after, nation, n))
        reach = mine(site) + sum(movable(after, nation, n) for n in sources)
        if reach < CITY_TOKENS:
            continue
        for source in sources:
            need = CITY_TOKENS - mine(site)
            if need <= 0:
                break
            move(min(need, movable(after, nation, source)), source, site)
    # One push a turn into a neighbouring area held by fewer tokens of one other nation (no city): a fight we win.
    for origin in sorted(a for a in after.areas if movable(after, nation, a) > 1):
        targets = []
        for to in land_neighbours(after, origin):
            there = after.area(to)
            foes = {n: k for n, k in there.tokens.items() if n != nation and k > 0}
            if there.city is None and len(foes) == 1 and areas[to].population_limit > 0:
                targets.append((sum(foes.values()), to))
        strength = min(movable(after, nation, origin), mine(origin) - 1)
        winnable = [(k, to) for k, to in sorted(targets) if strength > k]
        if winnable:
            k, to = winnable[0]
            move(min(strength, k + 2), origin, to)
            break
    # Tokens above an area's limit would be removed as surplus; lone tokens elsewhere grow.
    gathered = {a for a in after.areas if areas[a].has_city_site and mine(a) >= CITY_TOKENS}
    for origin in sorted(a for a in after.areas if mine(a) > 1 and a not in gathered):
        for to in land_neighbours(after, origin):
            spare = min(movable(after, nation, origin), mine(origin) - max(1, min(2, areas[origin].population_limit)))
            if spare <= 0:
                break
            if _free(after, nation, to) and mine(to) == 0:
                move(min(spare, areas[to].population_limit), origin, to)
    return "\n".join(lines + ["HALT"])

"""Set-up for a planner bot: the nation and start area with the most room for cities (§15.4).

Cities win the game, and a nation grows cities where free city sites lie
within reach of its tokens. So a planner counts the city sites in play
within a few land steps of each start area, and takes the nation (and then
the start area) with the most; an island start scores only its island.
"""

from __future__ import annotations

from pbem.rules.core.prompt import Prompt
from pbem.rules.core.state import GameState
from pbem.rules.phases.movement.routes import areas_in_play, land_neighbours
from pbem.rules.ruleset.rulebook import ruleset_of

REACH = 3  # land steps counted from a start area


def room(state: GameState, start: str) -> int:
    """City sites within REACH land steps of ``start``."""
    areas = ruleset_of(state).areas
    seen = {start}
    edge = {start}
    for _ in range(REACH):
        edge = {n for a in edge for n in land_neighbours(state, a)} - seen
        seen |= edge
    return sum(1 for a in seen if a in areas and areas[a].has_city_site)


def _starts(state: GameState, nation: str) -> list[str]:
    in_play = areas_in_play(state)
    return [a for a in ruleset_of(state).nations[nation].start_areas if a in in_play]


def choose_nation(prompt: Prompt, state: GameState) -> str:
    """NATION: the free nation whose start areas have the most room (the prompt's order breaks ties)."""
    offered = [c for c in prompt.choices if c.startswith("NATION ")]
    return max(offered, key=lambda c: (max((room(state, s) for s in _starts(state, c[7:])), default=0),
                                       -offered.index(c)))


def place_start(prompt: Prompt, state: GameState) -> str:
    """PLACE: the start area with the most room."""
    offered = [c for c in prompt.choices if c.startswith("PLACE ")]
    return max(offered, key=lambda c: (room(state, c[6:]), -offered.index(c)))

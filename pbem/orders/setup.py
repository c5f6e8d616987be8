"""Orders of setup (§15.4): NATION and PLACE."""

from __future__ import annotations

from pbem.rules.core.state import GameState
from pbem.rules.phases.setup import ChooseNation, PlaceStartToken
from pbem.rules.ruleset.rulebook import ruleset_of

from .grammar import Actor, Parser, area, name, player_of


def _nation(state: GameState, actor: Actor, rest: str, notes: list[str]) -> ChooseNation:
    return ChooseNation(player_of(actor), name(rest, ruleset_of(state).nations, "nation", notes))


def _place(state: GameState, actor: Actor, rest: str, notes: list[str]) -> PlaceStartToken:
    return PlaceStartToken(player_of(actor), area(state, rest, notes))


VERBS: dict[str, tuple[Parser, str]] = {
    "NATION": (_nation, "NATION <nation>"),
    "PLAY": (_nation, "NATION <nation>"),
    "PLACE": (_place, "PLACE <area>"),
    "START": (_place, "PLACE <area>"),
}
CANONICAL = {
    ChooseNation: lambda c: f"NATION {c.nation}",
    PlaceStartToken: lambda c: f"PLACE {c.area}",
}

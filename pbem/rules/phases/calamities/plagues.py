"""Calamities counted in unit points: Famine (§30.31) and Epidemic (§30.6).

The victim loses unit points of his choice, then gives more to other players
(at most so many each, never to who traded him the card, §29.61); each of
them then chooses his own losses. The choosing of units is `board.losses`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pbem.rules.board.losses import Assign, Loss
from pbem.rules.board.ranking import in_ast_order
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.choosing import (
    CalamityFamily,
    Strike,
    assigned_shares,
    quantity,
)
from pbem.rules.ruleset.rulebook import ruleset_of


def _unit_points(name: str, keep_one: bool, cites: tuple[str, ...]) -> Callable[[GameState, Strike, int], Any]:
    """Famine and Epidemic: the victim loses unit points, gives more to others, each of them loses his share."""

    def resolve(state: GameState, cal: Strike, index: int) -> Loss | Assign | None:
        _, victim, giver = cal
        spec = ruleset_of(state).calamities[name]
        if index == 0:
            points = quantity(state, victim, name, "primary", "unit_points", spec.primary["unit_points"])
            return Loss(victim, "primary", points, keep_one, f"{name}: you lose {points} unit points.", cites)
        if index == 1:
            # The player who traded the card is spared (§29.61); a non-tradable Famine has no trader, and
            # under No-Trading its High may be a secondary victim like anyone (Q-NT7).
            spared = giver if spec.tradable else None
            others = [n for n in in_ast_order(state, state.nations) if n not in (victim, spared)]
            total, cap = spec.secondary["unit_points_total"], spec.secondary["max_per_player"]
            question = (
                f"{name}: give {total} more unit points to other players, at most {cap} each"
                + (f" (not {spared}, who traded you the card)" if spared else "")
                + "; each then chooses which of his units go."
            )
            return Assign(victim, total, tuple((n, cap) for n in others), question, cites + ("§29.61",))
        shares = assigned_shares(state)
        if index - 2 >= len(shares):
            return None
        nation, given = shares[index - 2]
        points = quantity(state, nation, name, "secondary", "assigned_unit_points", given)
        points = quantity(state, nation, name, "secondary", "unit_points", points)
        return Loss(nation, "secondary", points, keep_one, f"{name}: {victim} gave you {given} unit points to lose; you lose {points}.", cites)

    return resolve


FAMILY = CalamityFamily(
    resolvers={
        "Famine": _unit_points("Famine", False, ("§30.31", "§29.62")),
        "Epidemic": _unit_points("Epidemic", True, ("§30.6", "§29.62")),
    },
)

"""Calamities that give the victim's cities to another: Treachery (§30.2) and Piracy (§30.9).

The player who traded the card chooses (Q-S6); an untraded Treachery reduces
one of the victim's cities instead. Piracy's cities become Pirate cities,
defended by the Barbarians in later conflicts.
"""

from __future__ import annotations

from pbem.rules.board.battle import PIRATES
from pbem.rules.board.ranking import cities_in_stock, in_ast_order
from pbem.rules.board.support import cities_of
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.choosing import (
    CalamityFamily,
    Stage,
    Strike,
    coastal_cities,
    reduce_stage,
)
from pbem.rules.ruleset.rulebook import ruleset_of


def _treachery(state: GameState, cal: Strike, index: int) -> Stage | None:
    name, victim, giver = cal
    if index > 0:
        return None
    count = ruleset_of(state).calamities[name].primary["cities_taken"]
    if giver is None:
        return reduce_stage(state, victim, "primary", count, name, ("§30.2", "Q-S6"), " (untraded: nobody gains it)")
    return Stage(
        nation=victim,
        role="primary",
        chooser=giver,
        count=count,
        candidates=tuple(cities_of(state, victim)),
        effect="seize",
        question=(
            f"Treachery: you traded the card to {victim}; choose one of its cities to become yours"
            + ("" if cities_in_stock(state, giver) else " (you have no city left in stock: it is eliminated)")
            + "."
        ),
        cites=("§30.2", "Q-S6"),
        to=giver,
    )


def _piracy(state: GameState, cal: Strike, index: int) -> Stage | None:
    name, victim, giver = cal
    spec = ruleset_of(state).calamities[name]
    if index == 0:
        chooser = giver or victim
        count = spec.primary["coastal_cities"]
        who = f"{count} of {victim}'s coastal cities" if giver else f"{count} of your coastal cities"
        return Stage(
            nation=victim,
            role="primary",
            chooser=chooser,
            count=count,
            candidates=coastal_cities(state, victim),
            effect="seize",
            question=f"Piracy: choose {who}; they become Pirate cities.",
            cites=("§30.9", "Q-S6") if giver is None else ("§30.9",),
            to=PIRATES,
        )
    if index == 1:
        per = spec.secondary["coastal_cities_per_player"]
        players = spec.secondary["players"]
        others = [n for n in in_ast_order(state, state.nations) if n not in (victim, giver)]
        candidates = tuple(a for n in others for a in coastal_cities(state, n))
        return Stage(
            nation=victim,
            role="secondary",
            chooser=victim,
            count=per * players,
            candidates=candidates,
            effect="seize",
            question=(
                f"Piracy: name one coastal city each of {players} other players"
                + (f" (not {giver}, who traded you the card)" if giver else "")
                + "; they become Pirate cities."
            ),
            cites=("§30.9", "§29.61"),
            to=PIRATES,
            caps=tuple((n, per) for n in others),
        )
    return None


FAMILY = CalamityFamily(resolvers={"Treachery": _treachery, "Piracy": _piracy})

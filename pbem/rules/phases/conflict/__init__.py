"""Phase 4: conflict (seed 002: 4, 4a, 4b, 4A, 4B, [The barbarians]; seed 001: [city-attack steps 1-4],
[Attacking a pirate city]; R-3.1, R-3.2; D-3, D-4, D-5, D-16 to D-19).

4a. Every token conflict on the board is resolved first, area by area (the
areas do not interact, so the order is only that of the log: by area name).
A conflict exists where two or more parties have tokens in a land area and
their total exceeds its population limit; an area holding a city counts as
full. Rounds of removal: in each round the parties remove one token each in
ascending order of their count at the start of the round, equal counts
together, Metalworking holders after all non-holders (§24.24). The conflict
stops at once when the total is within the limit or only one party is left;
while a city stands there only the second condition counts. The Barbarian
tokens (and pirate cities) form one party, "Barbarians", holding no cards.

4b. What a non-owner has left in a city area is a city attack. Attacks are
resolved one at a time: pirate cities first (attacker's A.S.T.-ranking, then
area name), then by defender in A.S.T.-ranking order, each defender choosing
the order of his own cities (ORDER; default by area name). An attack below
the threshold (7; 6 / 8 with Engineering, D-19) removes the attacker's tokens
there. A successful one: (1) the city becomes *due* tokens of the defender
from stock, fewer if short (deferral per option `city-defender-deferral`,
D-3), (2) token conflict as in 4a, (3) the card and (4) the pillage per
option `city-capture-spoils` (D-4); a pirate city becomes Barbarian tokens
whose survivors stay or go per option `pirate-city-attack` (D-5).

Progress lives in ``state.filed``:
  "queue"    attacks not begun, in resolution order: (area, attacker, defender)
  "stack"    attacks being resolved, innermost last: (area, attacker, defender, stage)
  "ordered"  defenders who have fixed the order of their cities
  "deferred" defenders who used their one deferral this turn (D-3 seed, Q-S9)
  "declined" city areas whose replacement needs no further deferral question
  "spoils"   (draw, pillage) answered so far by the attacker of the current city

The Barbarian supply (tokens of unused nations) is not tracked here: the
engine always has enough Barbarian tokens for a pirate city (RULINGS D-5
allows "as many as there are"). Barbarian Hordes (phase 9) counts it from
the sets nobody plays (`calamities.barbarians.supply`) and fights by the same
arithmetic as this phase (`board.battle`). The phase's orders and the folds of
its events are in `attacks`, its prompts and answers in `choices`, its
sentences in `narration`; resolving is here.
"""

from __future__ import annotations

from pbem.rules.board.battle import (
    PIRATES,
    city_defenders_due,
    engineering_involved,
    holds,
    in_conflict,
    party_of_city,
    threshold,
)
from pbem.rules.board.losses import LoseUnits
from pbem.rules.board.ranking import BARBARIANS
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.phase import PhaseRules, phase_ended
from pbem.rules.core.state import GameState
from pbem.rules.phases.conflict.attacks import (
    ATTACK_CITES,
    PHASE,
    PIRATE_CITES,
    PLUNDER_CITES,
    SPOILS_CITES,
    STEP1,
    TOWN_CITY_CITES,
    ChooseCityOrder,
    ChooseDeferral,
    ChooseSpoils,
    apply_deferral,
    apply_failed,
    apply_fight,
    apply_found,
    apply_order,
    apply_replaced,
    apply_resolved_first,
    apply_restored,
    apply_split,
    apply_spoils,
    apply_spoils_chosen,
    apply_succeeded,
    apply_swept,
    current_attack,
    current_spoils,
    deferral_question,
    fight_event,
    find_attacks,
    is_land,
    needs_order,
    plunder_towns,
    spoils_parts,
    town_split_questions,
    towns_for_city,
)
from pbem.rules.phases.conflict.choices import (
    decide_deferral,
    decide_order,
    decide_split,
    decide_spoils,
    defaults,
    pending,
)
from pbem.rules.phases.conflict.narration import (
    tell_deferral,
    tell_failed,
    tell_fight,
    tell_found,
    tell_replaced,
    tell_resolved_first,
    tell_restored,
    tell_split,
    tell_spoils,
    tell_spoils_chosen,
    tell_succeeded,
)
from pbem.rules.ruleset.options import options_of

# -- resolving ---------------------------------------------------------------------------------------


def _judge(state: GameState, area: str, attacker: str, defender: str) -> Event:
    tokens = state.area(area).tokens.get(attacker, 0)
    if towns_for_city(state, defender):  # no threshold against a player's city under Small Cities (SC-16)
        data = {"area": area, "attacker": attacker, "defender": defender, "tokens": tokens, "needed": 1}
        return Event("CityAttackSucceeded", data, ATTACK_CITES[:2] + ("SC-16",))
    needed = threshold(state, attacker, party_of_city(defender), "city_attack_tokens")
    cites = ATTACK_CITES + (("§24.35",) if engineering_involved(state, attacker, defender) else ())
    if defender == PIRATES:
        cites += PIRATE_CITES + (("Q-S11",) if holds(state, attacker, "Engineering") else ())
    data = {"area": area, "attacker": attacker, "defender": defender, "tokens": tokens, "needed": needed}
    return Event("CityAttackSucceeded" if tokens >= needed else "CityAttackFailed", data, cites)


def _replace_event(state: GameState, area: str, attacker: str, defender: str) -> Event:
    due = city_defenders_due(state, attacker, defender)
    party = party_of_city(defender)
    placed = due if party == BARBARIANS else min(due, state.nations[defender].stock) if defender in state.nations else 0
    cites = (STEP1, "R-3.2", "D-19") + (("§24.35",) if engineering_involved(state, attacker, defender) else ())
    if defender == PIRATES:
        cites += PIRATE_CITES + (("Q-S11",) if holds(state, attacker, "Engineering") else ())
    if placed < due:
        cites += ("D-3",)
    data = {"area": area, "attacker": attacker, "defender": defender, "party": party, "due": due, "placed": placed}
    if towns_for_city(state, defender):  # the city becomes towns: 6, or 7 / 5 with Engineering (SC-16)
        data["towns"] = True
        cites = (STEP1, "SC-16") + (("§24.35",) if engineering_involved(state, attacker, defender) else ())
        cites += ("D-3", "SC-17") if placed < due else ()
    return Event("CityReplaced", data, cites)


def _spoils_event(state: GameState, draws: Draws, area: str, attacker: str, defender: str) -> list[Event]:
    card_possible, ask_draw, most = spoils_parts(state, area, attacker, defender)
    draw, pillage = state.filed.get("spoils", (None, None))
    if (ask_draw and draw is None) or (most > 0 and pillage is None):
        return []  # waiting for the attacker
    take_card = card_possible and (draw if ask_draw else True)
    card = None
    if take_card:
        card = draws.choice(sorted(state.nations[defender].hand), f"{state.version}:spoils:{area}")
    data = {"area": area, "attacker": attacker, "defender": defender, "card": card, "pillage": pillage or 0}
    cites = SPOILS_CITES + (PIRATE_CITES if defender == PIRATES else ())
    towns = plunder_towns(state, area, defender)
    if towns is not None:
        data["towns"] = towns
        data["city"] = state.step == "attacks"
        cites = PLUNDER_CITES
    return [Event("SpoilsTaken", data, cites)]


def _fight(state: GameState, area: str, in_attack: bool) -> list[Event]:
    """The token conflict in ``area``, once every owner with a real choice has said which of his units go (SC-15)."""
    if town_split_questions(state, area):
        return []
    return [fight_event(state, area, in_attack)]


def settle(state: GameState, draws: Draws) -> list[Event]:
    if state.step == "":
        spoils = current_spoils(state)
        if spoils is not None:  # towns destroyed in the last fight are plundered first (SC-17)
            return _spoils_event(state, draws, *spoils)
        for area in state.areas:
            if is_land(state, area) and in_conflict(state, area):
                return _fight(state, area, in_attack=False)
        attacks = find_attacks(state)
        if not attacks:
            idle = state.version == state.phase_began  # nothing happened: the phase is skipped
            return [phase_ended(PHASE, ("seed 002: 4", "§18.2") if idle else ("seed 002: 4",))]
        cites = ("seed 002: 4a", "seed 002: 4b", "R-3.2", "D-18")
        if any(a[2] == PIRATES for a in attacks):
            cites += ("Q-S12",)
        return [Event("CityAttacksFound", {"attacks": [list(a) for a in attacks]}, cites)]
    if state.step != "attacks":
        return [phase_ended(PHASE, ("seed 002: 4",))]
    current = current_attack(state)
    if current is None:
        return [phase_ended(PHASE, ("seed 002: 4",))]
    area, attacker, defender, stage = current
    if stage == "start":
        if needs_order(state):
            return []
        return [_judge(state, area, attacker, defender)]
    if stage == "replace":
        question = deferral_question(state)
        if question is not None:
            if options_of(state).city_defender_deferral == "seed":
                return []  # the defender decides (DEFER)
            data = {"defender": defender, "city": area, "areas": [q[0] for q in question[2]]}
            return [Event("AttacksResolvedFirst", data, ("D-3", "§24.32"))]
        return [_replace_event(state, area, attacker, defender)]
    if stage == "fight":
        return _fight(state, area, in_attack=True)
    if stage == "restore":
        data = {"area": area, "defender": defender, "towns": state.area(area).towns.get(defender, 0)}
        return [Event("CityRestored", data, TOWN_CITY_CITES)]
    if stage == "sweep":
        count = state.area(area).tokens.get(BARBARIANS, 0)
        return [Event("BarbariansRemoved", {"area": area, "count": count}, PIRATE_CITES + ("Q-S16", "§24.34"))]
    return _spoils_event(state, draws, area, attacker, defender)


RULES = PhaseRules(
    name=PHASE,
    apply={
        "TokenConflictResolved": apply_fight,
        "CityAttacksFound": apply_found,
        "CityOrderChosen": apply_order,
        "CityAttackFailed": apply_failed,
        "CityAttackSucceeded": apply_succeeded,
        "DeferralChosen": apply_deferral,
        "AttacksResolvedFirst": apply_resolved_first,
        "CityReplaced": apply_replaced,
        "CityRestored": apply_restored,
        "TownLossesChosen": apply_split,
        "BarbariansRemoved": apply_swept,
        "SpoilsChosen": apply_spoils_chosen,
        "SpoilsTaken": apply_spoils,
    },
    decide={ChooseCityOrder: decide_order, ChooseDeferral: decide_deferral, ChooseSpoils: decide_spoils,
            LoseUnits: decide_split},
    pending=pending,
    defaults=defaults,
    settle=settle,
    inputs={
        "CityOrderChosen": lambda s, d: ChooseCityOrder(s.nations[d["defender"]].player_id, tuple(d["areas"])),
        "DeferralChosen": lambda s, d: ChooseDeferral(s.nations[d["defender"]].player_id, d["area"]),
        "SpoilsChosen": lambda s, d: ChooseSpoils(s.nations[d["attacker"]].player_id, d.get("draw"), d.get("pillage")),
        "TownLossesChosen": lambda s, d: LoseUnits(s.nations[d["nation"]].player_id, ((d["area"], "towns", d["towns"]),)),
    },
    narrate={
        "TokenConflictResolved": tell_fight,
        "CityAttacksFound": tell_found,
        "CityOrderChosen": lambda s, e, v: f"{e.data['defender']} set the order of its attacked cities: {', '.join(e.data['areas'])}.",
        "CityAttackFailed": tell_failed,
        "CityAttackSucceeded": tell_succeeded,
        "DeferralChosen": tell_deferral,
        "AttacksResolvedFirst": tell_resolved_first,
        "CityReplaced": tell_replaced,
        "CityRestored": tell_restored,
        "TownLossesChosen": tell_split,
        "BarbariansRemoved": lambda s, e, v: f"The {e.data['count']} surviving Barbarian tokens in {e.data['area']} are removed.",
        "SpoilsChosen": tell_spoils_chosen,
        "SpoilsTaken": tell_spoils,
    },
)

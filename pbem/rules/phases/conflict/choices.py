"""Phase 4: what defenders and attackers are asked, and their answers (ORDER, DEFER, SPOILS; D-3, D-4)."""

from __future__ import annotations

from itertools import permutations
from typing import Any

from pbem.rules.board.battle import (
    PIRATES,
    area_limit,
    city_defenders_due,
    threshold,
    town_loss_range,
)
from pbem.rules.board.losses import LoseUnits
from pbem.rules.core.events import Event
from pbem.rules.core.phase import acting_nation
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.conflict.attacks import (
    PHASE,
    PIRATE_CITES,
    SPOILS_CITES,
    STEP1,
    ChooseCityOrder,
    ChooseDeferral,
    ChooseSpoils,
    attack_queue,
    current_attack,
    current_fight,
    current_spoils,
    deferral_question,
    fight_removed,
    needs_order,
    plunder_towns,
    rule_numbers,
    spoils_parts,
    town_split_questions,
    towns_for_city,
)
from pbem.rules.ruleset.options import options_of


def _player(state: GameState, nation: str) -> int:
    return state.nations[nation].player_id


def _board_line(state: GameState, area: str) -> str:
    a = state.area(area)
    parts = [f"{p} {n}" for p, n in a.tokens.items()] + [f"{p} {n} towns" for p, n in a.towns.items() if n]
    city = f"{a.city} city, " if a.city else ""
    return f"{area} (limit {area_limit(state, area)}): {city}{', '.join(parts) or 'no tokens'}"


def _order_prompt(state: GameState, defender: str) -> Prompt:
    mine = [q for q in attack_queue(state) if q[2] == defender]
    areas = [q[0] for q in mine]
    need = ("any attack breaks it into towns (SC-16)" if towns_for_city(state, defender) else None)
    situation = tuple(
        f"{_board_line(state, q[0])}; attacked by {q[1]}, "
        + (need or f"{threshold(state, q[1], defender, 'city_attack_tokens')} needed") + "."
        for q in mine
    ) + (f"Your stock: {state.nations[defender].stock}.",)
    choices: tuple[str, ...] = ()
    if len(areas) <= 4:
        choices = tuple("ORDER " + ", ".join(p) for p in permutations(areas))
    else:  # too many orders to list: each city first, the rest by area name
        choices = tuple("ORDER " + ", ".join([a, *[b for b in areas if b != a]]) for a in areas)
    return Prompt(
        who=defender.lower(),
        player_id=_player(state, defender),
        step="city-order",
        question=(f"{len(areas)} of your cities are attacked: {', '.join(areas)}. "
                  "Choose the order in which their attacks are resolved (cities you leave out follow by area name)."),
        choices=choices[:60],
        template="ORDER " + ", ".join(areas),
        default=f"by area name ({', '.join(areas)})",
        situation=situation,
        cites=("seed 002: 4b", "R-3.2", "Q-S13"),
    )


def _defer_prompt(state: GameState) -> Prompt:
    area, defender, candidates = deferral_question(state)  # type: ignore[misc]
    attacker = current_attack(state)[1]  # type: ignore[index]
    due = city_defenders_due(state, attacker, defender)
    stock = state.nations[defender].stock
    first = candidates[0]
    return Prompt(
        who=defender.lower(),
        player_id=_player(state, defender),
        step="city-defer",
        question=(
            f"{attacker} has taken your city in {area}: it becomes {due} of your "
            f"{'towns' if towns_for_city(state, defender) else 'tokens'}, but you have only {stock} "
            f"in stock. Once this turn you may first have one of your own city attacks resolved (tokens it frees "
            f"return to your stock). Which one, or none?"
        ),
        choices=(*(f"DEFER {q[0]}" for q in candidates), "DEFER no"),
        template=f"DEFER {first[0]}",
        default=f"defer to your first pending attack, in {first[0]}",
        situation=tuple(f"Your attack on {q[2]}'s city: {_board_line(state, q[0])}." for q in candidates),
        cites=(STEP1, "D-3", "Q-S9"),
    )


def _split_prompt(state: GameState, area: str, nation: str, choices: range) -> Prompt:
    """SC-15: which of the owner's units go in a conflict, when he has tokens and towns there and the choice is real."""
    lost = fight_removed(state, area)[nation]
    here = state.area(area)
    return Prompt(
        who=nation.lower(),
        player_id=_player(state, nation),
        step="town-losses",
        question=(
            f"Conflict in {area}: {lost} of your units there are removed, and you have {here.tokens.get(nation, 0)} "
            f"tokens and {here.towns.get(nation, 0)} towns. Choose how many of the {lost} are towns "
            f"({choices[0]} to {choices[-1]}); the rest are tokens."
        ),
        choices=tuple(f"LOSE {area} {k} TOWNS" for k in choices),
        template=f"LOSE {area} {choices[0]} TOWNS",
        default=f"tokens go first: {choices[0]} towns",
        situation=(_board_line(state, area),),
        cites=("SC-15", "R-3.1"),
    )


def _spoils_prompt(state: GameState) -> Prompt | None:
    current = current_spoils(state)
    if current is None:
        return None
    area, attacker, defender = current
    _, ask_draw, most = spoils_parts(state, area, attacker, defender)
    draw, pillage = state.filed.get("spoils", (None, None))
    want_draw = ask_draw and draw is None
    want_pillage = most > 0 and pillage is None
    if not (want_draw or want_pillage):
        return None
    amounts = range(most, -1, -1)
    if want_draw and want_pillage:
        choices = tuple(f"SPOILS {yn} {k}" for yn in ("yes", "no") for k in amounts)
        template, default = f"SPOILS yes {most}", f"draw a card and pillage {most}"
    elif want_draw:
        choices, template, default = ("DRAW yes", "DRAW no"), "DRAW yes", "draw a card"
    else:
        choices, template, default = tuple(f"PILLAGE {k}" for k in amounts), f"PILLAGE {most}", f"pillage {most}"
    whose = "the pirate city" if defender == PIRATES else f"{defender}'s city"
    took = f"You took {whose} in {area}"
    towns = plunder_towns(state, area, defender)
    if towns is not None:
        took = (f"You broke {whose} in {area} into towns; {towns} of its towns were lost" if state.step == "attacks"
                else f"{towns} of {defender}'s towns in {area} were destroyed in the conflict")
    asks = []
    if want_draw:
        # D-8: how many cards the defender holds is everyone's under `seed`; under `1991` only after 12b.
        held = f" ({len(state.nations[defender].hand)} cards)" if options_of(state).public_hand_size == "seed" else ""
        asks.append(f"whether to draw one trade card at random from {defender}'s hand{held}")
    if want_pillage:
        asks.append(f"how many tokens (0 to {most}) to move from your stock to your treasury")
    n = state.nations[attacker]
    return Prompt(
        who=attacker.lower(),
        player_id=n.player_id,
        step="city-spoils",
        question=f"{took}. Choose " + " and ".join(asks) + ".",
        choices=choices,
        template=template,
        default=default,
        situation=(_board_line(state, area), f"Your stock {n.stock}, treasury {n.treasury}."),
        cites=("SC-17", "Q-SC8") if towns is not None else SPOILS_CITES + (PIRATE_CITES if defender == PIRATES else ()),
    )


def pending(state: GameState) -> dict[str, Prompt]:
    fight = current_fight(state)
    if fight is not None and town_split_questions(state, fight):
        return {n.lower(): _split_prompt(state, fight, n, c) for n, c in town_split_questions(state, fight).items()}
    if state.step == "":
        prompt = _spoils_prompt(state)
        return {prompt.who: prompt} if prompt else {}
    if state.step != "attacks":
        return {}
    defender = needs_order(state)
    if defender is not None:
        return {defender.lower(): _order_prompt(state, defender)}
    if deferral_question(state) is not None and options_of(state).city_defender_deferral == "seed":
        prompt = _defer_prompt(state)
        return {prompt.who: prompt}
    prompt = _spoils_prompt(state)
    return {prompt.who: prompt} if prompt else {}


def _asked(state: GameState, player_id: int, step: str, what: str, cite: str) -> Prompt:
    prompt = pending(state).get(acting_nation(state, player_id).lower()) if state.phase == PHASE else None
    if prompt is None or prompt.step != step:
        raise Rejection(f"no {what} is asked of you now", cite)
    return prompt


def decide_order(state: GameState, command: ChooseCityOrder, by_default: bool = False) -> list[Event]:
    _asked(state, command.player_id, "city-order", "order of attacked cities", "seed 002: 4b")
    defender = acting_nation(state, command.player_id)
    mine = [q[0] for q in attack_queue(state) if q[2] == defender]
    named = list(dict.fromkeys(command.areas))
    wrong = [a for a in named if a not in mine]
    if wrong:
        raise Rejection(f"{', '.join(wrong)}: not one of your attacked cities; they are {', '.join(mine)}", "seed 002: 4b")
    full = named + [a for a in mine if a not in named]
    data: dict[str, Any] = {"defender": defender, "areas": full}
    if by_default:
        data["by_default"] = True
    return [Event("CityOrderChosen", data, ("seed 002: 4b", "R-3.2") + (("Q-S13",) if by_default else ()))]


def decide_deferral(state: GameState, command: ChooseDeferral, by_default: bool = False) -> list[Event]:
    _asked(state, command.player_id, "city-defer", "deferral", STEP1)
    city, defender, candidates = deferral_question(state)  # type: ignore[misc]
    areas = [q[0] for q in candidates]
    if command.area is not None and command.area not in areas:
        raise Rejection(
            f"{command.area}: you have no pending city attack there; choose {', '.join(areas)}, or DEFER no", STEP1
        )
    data: dict[str, Any] = {"defender": defender, "city": city, "area": command.area}
    if by_default:
        data["by_default"] = True
    return [Event("DeferralChosen", data, (STEP1, "D-3", "Q-S9"))]


def decide_split(state: GameState, command: LoseUnits, by_default: bool = False) -> list[Event]:
    """LOSE <area> <n> TOWNS in a conflict: n of the owner's removals there are towns, the rest tokens (SC-15)."""
    _asked(state, command.player_id, "town-losses", "choice between tokens and towns", "SC-15")
    nation = acting_nation(state, command.player_id)
    area = current_fight(state)
    assert area is not None
    lost = fight_removed(state, area)[nation]
    choices = town_loss_range(state, area, nation, lost)
    wrong = [a for a, what, _ in command.items if a != area or what not in ("towns", "tokens")]
    if wrong or not command.items:
        raise Rejection(f"say how many of your {lost} units lost in {area} are towns: LOSE {area} <n> TOWNS", "SC-15")
    towns = sum(n for _, what, n in command.items if what == "towns")
    tokens = sum(n for _, what, n in command.items if what == "tokens")
    if any(what == "tokens" for _, what, _ in command.items) and towns + tokens != lost:
        raise Rejection(f"you lose exactly {lost} units in {area}; you named {towns + tokens}", "SC-15")
    if towns not in choices:
        raise Rejection(f"of your {lost} units lost in {area}, {choices[0]} to {choices[-1]} may be towns", "SC-15")
    data: dict[str, Any] = {"nation": nation, "area": area, "towns": towns}
    if by_default:
        data["by_default"] = True
    return [Event("TownLossesChosen", data, ("SC-15",))]


def decide_spoils(state: GameState, command: ChooseSpoils, by_default: bool = False) -> list[Event]:
    _asked(state, command.player_id, "city-spoils", "choice of spoils", "D-4")
    area, attacker, defender = current_spoils(state)  # type: ignore[misc]
    card, ask_draw, most = spoils_parts(state, area, attacker, defender)
    draw, pillage = command.draw, command.pillage
    if draw is not None and not ask_draw:
        if plunder_towns(state, area, defender) is not None:
            raise Rejection("with towns the card is drawn without asking when more than 3 were lost; send PILLAGE <n> only", "SC-17")
        if defender == PIRATES:
            raise Rejection("a pirate city yields no trade card; send PILLAGE <0-3> only", "D-5")
        if not card:
            raise Rejection(f"{defender} holds no trade cards, so there is nothing to draw; send PILLAGE <n> only", "seed 001: [city-attack step 3]")
        raise Rejection("in this game the card is drawn without asking (city-capture-spoils=1991); send PILLAGE <n> only", "D-4")
    if pillage is not None and not 0 <= pillage <= most:
        raise Rejection(
            f"you may pillage 0 to {most} (at most {rule_numbers(state)['pillage_max']}, and no more than your stock)",
            "seed 001: [city-attack step 4]",
        )
    if draw is None and pillage is None:
        raise Rejection("say whether to draw a card (DRAW yes / DRAW no) or how much to pillage (PILLAGE <n>)", "D-4")
    data: dict[str, Any] = {"attacker": attacker, "area": area, "draw": draw, "pillage": pillage}
    if by_default:
        data["by_default"] = True
    return [Event("SpoilsChosen", data, SPOILS_CITES)]


def defaults(state: GameState, prompt: Prompt) -> list[Event]:
    if prompt.step == "city-order":
        defender = acting_nation(state, prompt.player_id)
        mine = tuple(q[0] for q in attack_queue(state) if q[2] == defender)
        return decide_order(state, ChooseCityOrder(prompt.player_id, mine), True)
    if prompt.step == "city-defer":
        _, _, candidates = deferral_question(state)  # type: ignore[misc]
        return decide_deferral(state, ChooseDeferral(prompt.player_id, candidates[0][0]), True)
    if prompt.step == "town-losses":
        area = current_fight(state)
        nation = acting_nation(state, prompt.player_id)
        least = town_loss_range(state, area, nation, fight_removed(state, area)[nation])[0]  # type: ignore[arg-type]
        return decide_split(state, LoseUnits(prompt.player_id, ((area, "towns", least),)), True)  # type: ignore[arg-type]
    area, attacker, defender = current_spoils(state)  # type: ignore[misc]
    _, ask_draw, most = spoils_parts(state, area, attacker, defender)
    draw, pillage = state.filed.get("spoils", (None, None))
    command = ChooseSpoils(
        prompt.player_id,
        True if ask_draw and draw is None else None,
        most if most > 0 and pillage is None else None,
    )
    return decide_spoils(state, command, True)

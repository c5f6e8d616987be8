"""Phase 9: calamity resolution (seed 003: 9; §29.6, §30).

The calamities revealed in phase 8 are resolved one at a time in the
ruleset's order (ascending stack, non-tradable first). Each is a list of
stages; a stage either strikes at once (no choice to make) or asks one
player: PICK cities, LOSE unit points or GIVE them to secondary victims, or
a question of the calamity's own. This module plays the stages; the
calamities themselves are in their families, gathered in `FAMILIES`:
`unrest` (Superstition, Civil Disorder, Iconoclasm & Heresy, Slave Revolt),
`seizure` (Treachery, Piracy), `plagues` (Famine, Epidemic), `nature`
(Volcanic Eruption / Earthquake, Flood), `war` (Civil War) and `barbarians`
(Barbarian Hordes). Civilization cards change the numbers through the
ruleset's calamity effects (`choosing.quantity`). A calamity with no resolver
(one a house ruleset, option `ruleset-data`, names and this engine does not
know) is never skipped silently: the game waits at it, or, with the game
option `unplayable-phases=skip`, records ``CalamityNotPlayable`` and returns it.
"""

from __future__ import annotations

from typing import Any

from pbem.rules.board import losses as L
from pbem.rules.board.battle import PIRATES
from pbem.rules.board.losses import Assign, LoseUnits, Loss
from pbem.rules.board.ranking import cities_in_stock
from pbem.rules.board.stacks import return_cards
from pbem.rules.board.support import (
    cities_of,
    reduction_tokens,
    revolt_tokens_placed,
)
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import PhaseRules, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities import (
    barbarians,
    nature,
    plagues,
    preferences,
    reductions,
    seizure,
    telling,
    unrest,
    war,
)
from pbem.rules.phases.calamities.choosing import (
    MAX_CHOICES,
    RESOLUTION,
    GiveLosses,
    PickCities,
    Resolver,
    Stage,
    Strike,
    automatic,
    city_owner,
    feasible,
    pick_options,
    stage_index,
    within_caps,
)
from pbem.rules.phases.calamities.dice import (
    Volunteer,
    apply_back_in_pile,
    apply_drawn,
    apply_pile_empty,
    apply_volunteering,
    back_in_pile,
    decide_volunteer,
    draw_next,
    tell_drawn,
    tell_volunteering,
)
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import parts_of

#: Every family of calamities; a calamity is resolved by its family's resolver.
FAMILIES = (unrest.FAMILY, seizure.FAMILY, plagues.FAMILY, nature.FAMILY, war.FAMILY, barbarians.FAMILY, reductions.FAMILY)
#: Calamities this engine resolves, by name.
RESOLVERS: dict[str, Resolver] = {name: r for family in FAMILIES for name, r in family.resolvers.items()}


def _current(state: GameState) -> tuple[Strike, Any] | None:
    """The calamity being resolved and its current stage (None: it is done); None if nothing is left."""
    if not state.calamities:
        return None
    cal = state.calamities[0]
    reduction = reductions.current_reduction(state)
    if reduction is not None:  # Small Cities: ordered reductions are made before the calamity goes on (SC-10)
        return cal, reduction
    resolver = RESOLVERS.get(cal[0])
    if resolver is None:
        return cal, None
    return cal, resolver(state, cal, stage_index(state))


def _by_towns(state: GameState, stage: Any) -> bool:
    """Under Small Cities the victim's own reductions follow SC-10: no city is picked up front."""
    return isinstance(stage, Stage) and stage.effect == "reduce" and stage.free_choice and parts_of(state).pieces.towns


def _changes(state: GameState, stage: Stage, picked: tuple[str, ...]) -> list[dict[str, Any]]:
    if stage.effect == "erupt":
        return nature.eruption_changes(state, picked)
    out = []
    seized = 0
    spent: dict[str, int] = {}  # tokens already promised from each owner's stock by this stage
    for area in picked:
        owner = city_owner(state, area)
        if stage.effect == "seize" and stage.to == PIRATES:
            out.append({"area": area, "owner": owner, "effect": "seize", "to": PIRATES})
        elif stage.effect == "seize":
            to = stage.to if stage.to and cities_in_stock(state, stage.to) > seized else None
            seized += 1 if to else 0
            out.append({"area": area, "owner": owner, "effect": "seize" if to else "eliminate", "to": to})
        elif parts_of(state).pieces.towns:  # the named city's owner reduces under SC-10
            out.append({"area": area, "owner": owner, "effect": "towns-reduction"})
        else:
            due = reduction_tokens(state, owner, area)
            tokens = min(due, state.nations[owner].stock - spent.get(owner, 0))
            spent[owner] = spent.get(owner, 0) + tokens
            out.append({"area": area, "owner": owner, "effect": "reduce", "tokens": tokens, "due": due})
    return out


def _stage_data(state: GameState, cal: Strike, stage: Stage, picked: tuple[str, ...]) -> dict[str, Any]:
    return {
        "calamity": cal[0],
        "victim": cal[1],
        "role": stage.role,
        "chooser": stage.chooser,
        "count": stage.count,
        "cities": _changes(state, stage, picked),
        "note": stage.note,
        "next": stage_index(state) + (0 if stage.repeat else 1),
    } | ({"picked": list(picked)} if stage.effect == "erupt" else {})


def apply_struck(state: GameState, data: dict[str, Any]) -> GameState:
    gained = list(state.gained_this_turn)
    for c in data["cities"]:
        area = state.area(c["area"])
        if c["effect"] == "reduce":
            state = revolt_tokens_placed(state, c["owner"], c["tokens"])
            state = state.with_area(c["area"], replace(area, city=None).add_tokens(c["owner"], c["tokens"]))
            n = state.nations[c["owner"]]
            state = state.with_nation(replace(n, stock=n.stock - c["tokens"]))
        elif c["effect"] == "seize":
            state = state.with_area(c["area"], replace(area, city=c["to"]))
            if c["to"] != PIRATES and c["area"] not in gained:
                gained.append(c["area"])
        elif c["effect"] == "erupt":
            state = nature.apply_eruption(state, c)
        elif c["effect"] == "towns-reduction":
            state = reductions.with_queued(state, [(c["owner"], c["area"], (), False)])
        else:
            state = state.with_area(c["area"], replace(area, city=None))
    struck = state.filed.set("struck", tuple(c["area"] for c in data["cities"]))
    return replace(state, step=str(data.get("next", stage_index(state) + 1)), gained_this_turn=tuple(gained), filed=struck)


def apply_chosen(state: GameState, data: dict[str, Any]) -> GameState:
    """A pick by the chooser; one naming cities in order of preference keeps those not yet needed (`preferences`)."""
    state = apply_struck(state, data)
    if "named" in data or data.get("preferred"):
        state = preferences.with_queue(state, data["chooser"], data.get("queued", ()))
    return state


def apply_unused(state: GameState, data: dict[str, Any]) -> GameState:
    return preferences.with_queue(state, data["nation"], ())


def apply_resolved(state: GameState, data: dict[str, Any]) -> GameState:
    filed = state.filed.without("assigned").without(preferences.QUEUE)
    for key in (key for family in FAMILIES for key in family.filed):
        filed = filed.without(key)
    state = replace(state, calamities=state.calamities[1:], step="", filed=filed)
    if parts_of(state).calamities.face_up_after:
        return state  # the card stays face up until the next turn's phase 9 has ended (NT-14)
    return return_cards(state, [data["calamity"]])


def _struck_cites(cal: Strike, stage: Stage) -> tuple[str, ...]:
    return ("seed 003: 9", "§29.6") + stage.cites


def settle_resolution(state: GameState, draws: Draws) -> list[Event]:
    current = _current(state)
    if current is None and parts_of(state).calamities.by_dice:
        if state.calamity_draws_left > 0:
            return [draw_next(state, draws)]  # one calamity at a time, each resolved before the next is rolled (NT-10)
        back = back_in_pile(state)
        return [back] if back else [phase_ended(RESOLUTION, ("seed 004: 5", "NT-10", "NT-14"))]
    if current is None:
        return [phase_ended(RESOLUTION, ("seed 003: 9", "§29.6"))]
    cal, stage = current
    if cal[0] not in RESOLVERS:
        if options_of(state).unplayable_phases != "skip":
            return []  # the engine cannot resolve this calamity yet: the game waits here
        data = {"calamity": cal[0], "victim": cal[1]}
        return [Event("CalamityNotPlayable", data, ("unplayable-phases",))]
    waiting = preferences.queued(state)
    if waiting is not None:
        step = _settle_preferences(state, cal, stage, *waiting)
        if step:
            return step
    if stage is None:
        return [Event("CalamityResolved", {"calamity": cal[0], "victim": cal[1]}, ("§29.7",))]
    if hasattr(stage, "settle"):  # a stage with its own prompt (war.Split)
        return stage.settle(state, cal)
    if isinstance(stage, Event):
        return [stage]
    if isinstance(stage, Loss):
        options = L.answers(state, stage, 2)
        if len(options) > 1:
            return []
        return [Event("CalamityLossTaken", _loss_data(state, cal, stage, options[0]), ("seed 003: 9",) + stage.cites)]
    if isinstance(stage, Assign):
        shares = L.assign_answers(stage, 2)
        if len(shares) > 1:
            return []
        return [Event("CalamityLossesShared", _assign_data(state, cal, stage, shares[0]), ("seed 003: 9",) + stage.cites)]
    if _by_towns(state, stage) and stage.count > 0 and (cities_of(state, stage.nation) or state.towns_on_board(stage.nation)):
        data = {"calamity": cal[0], "nation": stage.nation, "count": stage.count, "cities": list(stage.candidates),
                "next": stage_index(state) + (0 if stage.repeat else 1)}
        return [Event("TownReductionsDue", data, _struck_cites(cal, stage) + reductions.CITES)]
    if not automatic(state, stage):
        return []
    options = pick_options(state, stage)
    picked = options[0] if options else ()
    return [Event("CalamityStruck", _stage_data(state, cal, stage, picked), _struck_cites(cal, stage))]


def _settle_preferences(state: GameState, cal: Strike, stage: Any, nation: str, areas: tuple[str, ...]) -> list[Event]:
    """The chooser's kept preferences answer his next choice of cities in this calamity (none: they wait)."""
    if stage is None:
        data = {"calamity": cal[0], "nation": nation, "areas": list(areas), "why": "not needed"}
        return [Event("CalamityPreferencesUnused", data, ("§29.6",))]
    if not isinstance(stage, Stage) or stage.chooser != nation or _by_towns(state, stage) or feasible(state, stage) == 0:
        return []
    taken = preferences.take(state, stage, areas)
    if len(taken.picked) < feasible(state, stage):
        data = {"calamity": cal[0], "nation": nation, "areas": list(areas), "why": "too few can be chosen",
                "need": feasible(state, stage), **preferences.skipped_data(taken)}
        return [Event("CalamityPreferencesUnused", data, _struck_cites(cal, stage))]
    data = _stage_data(state, cal, stage, tuple(sorted(taken.picked))) | {"preferred": True, **preferences.skipped_data(taken)}
    return [Event("CalamityCitiesPreferred", data, _struck_cites(cal, stage))]


def _prompt(state: GameState) -> Prompt | None:
    current = _current(state) if state.phase == RESOLUTION else None
    if current is None or not isinstance(current[1], Stage) or automatic(state, current[1]) or _by_towns(state, current[1]):
        return None
    cal, stage = current
    options = pick_options(state, stage)
    need = feasible(state, stage)
    n = state.nations[stage.chooser]
    lines = tuple("PICK " + ", ".join(o) for o in options[:MAX_CHOICES])
    owners = sorted({city_owner(state, a) for a in stage.candidates})
    return Prompt(
        who=stage.chooser.lower(),
        player_id=n.player_id,
        step=f"calamity-{stage.role}",
        question=stage.question + stage.note + (f" (only {need} can be)" if need < stage.count else ""),
        choices=lines,
        template="PICK " + ", ".join(stage.candidates[: stage.up_to]) if stage.up_to > 1 else lines[0],
        default=f"the first {need} by area name ({', '.join(options[0])})",
        situation=tuple(
            f"{o}'s cities: " + ", ".join(a for a in stage.candidates if city_owner(state, a) == o) + "." for o in owners
        )
        + (f"Your stock: {n.stock}.",),
        cites=_struck_cites(cal, stage),
    )


def _loss_data(state: GameState, cal: Strike, loss: Loss, items: tuple[L.Item, ...]) -> dict[str, Any]:
    return {
        "calamity": cal[0],
        "victim": cal[1],
        "nation": loss.nation,
        "role": loss.role,
        "points": loss.points,
        "losses": L.changes(state, loss, items),
        "next": stage_index(state) + 1,
    }


def _assign_data(state: GameState, cal: Strike, stage: Assign, shares: tuple[tuple[str, int], ...]) -> dict[str, Any]:
    return {"calamity": cal[0], "victim": cal[1], "total": stage.total, "shares": [list(s) for s in shares], "next": stage_index(state) + 1}


def _loss_prompt(state: GameState) -> Prompt | None:
    current = _current(state) if state.phase == RESOLUTION else None
    if current is None:
        return None
    stage = current[1]
    if isinstance(stage, Loss):
        options = L.answers(state, stage, MAX_CHOICES)
        if len(options) < 2:
            return None
        n = state.nations[stage.nation]
        need = L.required(state, stage)
        room = L.token_room(state, stage)
        cities = L.cities(state, stage)
        lines = tuple(L.write(o) for o in options)
        return Prompt(
            who=stage.nation.lower(),
            player_id=n.player_id,
            step=f"calamity-loss-{stage.role}",
            question=(
                stage.question
                + (f" You cannot lose exactly {stage.points}: lose {need}." if need != stage.points else "")
                + " Name your losses: '<area> <tokens>' removes tokens, "
                + ("'<area> <n> TOWNS' removes towns (1 point each), " if parts_of(state).pieces.towns else "")
                + "'<area> CITY' eliminates a city (5 points"
                + (", leaving 1 token: 4" if stage.keep_one else "")
                + "), '<area> REDUCE' reduces it (5 less the tokens it leaves)."
            ),
            choices=lines,
            template=lines[0],
            default=f"{lines[0]} (tokens first, by area name, then as few cities as possible)",
            situation=(
                ("Tokens and towns" if parts_of(state).pieces.towns else "Tokens")
                + " you may remove: " + (", ".join(f"{a} {k}" for a, k in room.items()) or "none") + ".",
                "Your cities: " + (", ".join(cities) or "none") + f". Stock {n.stock}.",
            ),
            cites=("seed 003: 9",) + stage.cites,
        )
    if isinstance(stage, Assign):
        options = L.assign_answers(stage, MAX_CHOICES)
        if len(options) < 2:
            return None
        n = state.nations[stage.chooser]
        lines = tuple("GIVE " + ", ".join(f"{who} {k}" for who, k in o) for o in options)
        return Prompt(
            who=stage.chooser.lower(),
            player_id=n.player_id,
            step="calamity-assign",
            question=stage.question + (f" (only {stage.due()} can be given)" if stage.due() < stage.total else ""),
            choices=lines,
            template=lines[0],
            default=f"{lines[0]} (the most to each player in A.S.T. order)",
            situation=tuple(
                f"{who}: {state.tokens_on_board(who)} tokens, {state.cities_on_board(who)} cities on the board." for who, _ in stage.caps
            ),
            cites=("seed 003: 9",) + stage.cites,
        )
    return None


def pending_resolution(state: GameState) -> dict[str, Prompt]:
    current = _current(state) if state.phase == RESOLUTION else None
    if current is not None and hasattr(current[1], "prompt"):
        own = current[1].prompt(state, current[0])
        return {own.who: own} if own else {}
    prompt = _prompt(state) or _loss_prompt(state)
    return {prompt.who: prompt} if prompt else {}


def _nation_of(state: GameState, player_id: int) -> str:
    for name, n in state.nations.items():
        if n.player_id == player_id:
            return name
    raise Rejection("you have no nation in this game")


def decide_pick(state: GameState, command: PickCities, by_default: bool = False) -> list[Event]:
    current = _current(state) if state.phase == RESOLUTION else None
    if current is not None and hasattr(current[1], "decide_pick"):  # a stage of its own (nature.PlainChoice)
        return current[1].decide_pick(state, current[0], command, by_default)
    prompt = _prompt(state)
    if prompt is None or prompt.player_id != command.player_id:
        other = f"; {prompt.who.title()} is to choose" if prompt is not None else ", so this pick is not needed"
        raise Rejection(f"no calamity asks you to choose cities now{other}", "§29.6")
    current = _current(state)
    assert current is not None and isinstance(current[1], Stage)
    cal, stage = current
    picked = tuple(dict.fromkeys(command.areas))
    need = feasible(state, stage)
    extra: dict[str, Any] = {}
    if len(picked) > need:  # cities in order of preference: the first legal ones now, the rest kept (`preferences`)
        taken = preferences.take(state, stage, picked)
        if len(taken.picked) < need:
            why = "; ".join(f"{a}: {w}" for a, w in taken.skipped)
            raise Rejection(
                f"only {len(taken.picked)} of the cities you named can be chosen and {need} {'is' if need == 1 else 'are'} needed ({why}); "
                f"choose from {', '.join(stage.candidates)}", stage.cites[0])
        picked = taken.picked
        extra = {"named": list(dict.fromkeys(command.areas)), **preferences.skipped_data(taken)}
    wrong = [a for a in picked if a not in stage.candidates]
    if wrong:
        raise Rejection(
            f"{', '.join(wrong)}: not a city you may choose; choose from {', '.join(stage.candidates)}", stage.cites[0]
        )
    if len(picked) != need:
        raise Rejection(f"choose exactly {need} cities", stage.cites[0])
    if not within_caps(state, stage, picked):
        caps = ", ".join(f"{n} at most {c}" for n, c in stage.caps)
        raise Rejection(f"too many cities of one player: {caps}", stage.cites[0])
    data = _stage_data(state, cal, stage, tuple(sorted(picked))) | extra
    if by_default:
        data["by_default"] = True
    return [Event("CalamityCitiesChosen", data, _struck_cites(cal, stage))]


def _asks(stage: Loss | Assign, state: GameState) -> bool:
    """Whether ``_loss_prompt`` asks about ``stage``: when it has two answers or more. The answers are listed in
    the same order whatever the limit, so the first two tell, without pricing up to ``MAX_CHOICES`` of them
    (a bot weighing each answer of a prompt asks this once for each)."""
    if isinstance(stage, Loss):
        return len(L.answers(state, stage, 2)) >= 2
    return len(L.assign_answers(stage, 2)) >= 2


def _stage_for(state: GameState, player_id: int, kind: type) -> tuple[Strike, Any]:
    current = _current(state) if state.phase == RESOLUTION else None
    if current is None or not isinstance(current[1], kind) or not _asks(current[1], state):
        raise Rejection("no calamity asks this of you now", "§29.6")
    who = current[1].nation if kind is Loss else current[1].chooser
    if state.nations[who].player_id != player_id:
        raise Rejection(f"no calamity asks this of you now; {who} is to answer", "§29.6")
    return current


def decide_lose(state: GameState, command: LoseUnits, by_default: bool = False) -> list[Event]:
    cal, loss = _stage_for(state, command.player_id, Loss)
    items = tuple(tuple(i) for i in command.items)
    why = L.check(state, loss, items)  # type: ignore[arg-type]
    if why:
        raise Rejection(why, loss.cites[-1])
    data = _loss_data(state, cal, loss, tuple(sorted(items)))  # type: ignore[arg-type]
    if by_default:
        data["by_default"] = True
    return [Event("CalamityLossChosen", data, ("seed 003: 9",) + loss.cites)]


def decide_give(state: GameState, command: GiveLosses, by_default: bool = False) -> list[Event]:
    cal, stage = _stage_for(state, command.player_id, Assign)
    shares = tuple((n, k) for n, k in command.shares if k > 0)
    why = L.assign_check(stage, shares)
    if why:
        raise Rejection(why, stage.cites[0])
    order = [n for n, _ in stage.caps]
    data = _assign_data(state, cal, stage, tuple(sorted(shares, key=lambda x: order.index(x[0]))))
    if by_default:
        data["by_default"] = True
    return [Event("CalamityLossesGiven", data, ("seed 003: 9",) + stage.cites)]


def apply_loss(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    returned = 0
    for c in data["losses"]:
        area = state.area(c["area"])
        if c["effect"] == "tokens":
            state = state.with_area(c["area"], area.add_tokens(nation, -c["tokens"]))
            returned += c["tokens"]
        elif c["effect"] == "towns":  # Small Cities: a town is lost like a token (SC-9)
            state = state.with_area(c["area"], area.add_towns(nation, -c["towns"]))
            returned += c["towns"]
        else:
            state = state.with_area(c["area"], replace(area, city=None).add_tokens(nation, c["placed"]))
            returned -= c["placed"]
            if c["effect"] == "reduce":
                state = revolt_tokens_placed(state, nation, c["placed"])
    n = state.nations[nation]
    state = state.with_nation(replace(n, stock=n.stock + returned))
    return replace(state, step=str(data["next"]))


def apply_given(state: GameState, data: dict[str, Any]) -> GameState:
    shares = tuple((n, k) for n, k in data["shares"])
    return replace(state, step=str(data["next"]), filed=state.filed.set("assigned", shares))


def defaults_resolution(state: GameState, prompt: Prompt) -> list[Event]:
    current = _current(state)
    if current is not None and hasattr(current[1], "default"):
        return current[1].default(state, current[0], prompt)
    if prompt.step.startswith("calamity-loss"):
        _, loss = _stage_for(state, prompt.player_id, Loss)
        return decide_lose(state, LoseUnits(prompt.player_id, L.answers(state, loss, 1)[0]), True)
    if prompt.step == "calamity-assign":
        _, stage = _stage_for(state, prompt.player_id, Assign)
        return decide_give(state, GiveLosses(prompt.player_id, L.assign_answers(stage, 1)[0]), True)
    current = _current(state)
    assert current is not None and isinstance(current[1], Stage)
    return decide_pick(state, PickCities(prompt.player_id, pick_options(state, current[1])[0]), True)


RULES = PhaseRules(
    name=RESOLUTION,
    apply={
        "CalamityStruck": apply_struck,
        "CalamityCitiesChosen": apply_chosen,
        "CalamityCitiesPreferred": apply_chosen,
        "CalamityPreferencesUnused": apply_unused,
        "CalamityResolved": apply_resolved,
        "CalamityNotPlayable": apply_resolved,
        "CalamityLossChosen": apply_loss,
        "CalamityLossTaken": apply_loss,
        "CalamityLossesGiven": apply_given,
        "CalamityLossesShared": apply_given,
        **{event: fold for family in FAMILIES for event, fold in family.apply.items()},
        "CalamityDrawn": apply_drawn,
        "CalamityPileEmpty": apply_pile_empty,
        "CalamitiesBackInPile": apply_back_in_pile,
        "VolunteeringSet": apply_volunteering,
    },
    decide={
        PickCities: decide_pick,
        LoseUnits: decide_lose,
        GiveLosses: decide_give,
        **{command: decide for family in FAMILIES for command, decide in family.decide.items()},
        Volunteer: decide_volunteer,
    },
    pending=pending_resolution,
    defaults=defaults_resolution,
    settle=settle_resolution,
    inputs={
        "CalamityCitiesChosen": lambda s, d: PickCities(
            s.nations[d["chooser"]].player_id, tuple(d.get("named") or d.get("picked") or [c["area"] for c in d["cities"]])
        ),
        "CalamityLossChosen": lambda s, d: LoseUnits(
            s.nations[d["nation"]].player_id,
            tuple((c["area"], c["effect"], c.get("tokens", c.get("towns", 1))) for c in d["losses"]),
        ),
        "CalamityLossesGiven": lambda s, d: GiveLosses(s.nations[d["victim"]].player_id, tuple((n, k) for n, k in d["shares"])),
        **{event: command for family in FAMILIES for event, command in family.inputs.items()},
        "VolunteeringSet": lambda s, d: Volunteer(s.nations[d["nation"]].player_id, d["volunteers"]),
    },
    narrate={
        "CalamityStruck": telling.tell_struck,
        "CalamityCitiesChosen": telling.tell_struck,
        "CalamityCitiesPreferred": telling.tell_struck,
        "CalamityPreferencesUnused": telling.tell_unused,
        "CalamityLossChosen": telling.tell_loss,
        "CalamityLossTaken": telling.tell_loss,
        "CalamityLossesGiven": telling.tell_given,
        "CalamityLossesShared": telling.tell_given,
        **{event: tell for family in FAMILIES for event, tell in family.narrate.items()},
        "CalamityDrawn": tell_drawn,
        "CalamityPileEmpty": lambda s, e, v: (
            f"The calamity pile is empty: the {e.data['left']} calamities still to come this turn do not happen (Q-NT5)."
        ),
        "CalamitiesBackInPile": lambda s, e, v: (
            f"Back into the calamity pile, face down: {', '.join(e.data['calamities'])} (drawn last turn, NT-14)."
        ),
        "VolunteeringSet": tell_volunteering,
        "CalamityResolved": lambda s, e, v: f"{e.data['calamity']} ({e.data['victim']}) is resolved.",
        "CalamityNotPlayable": lambda s, e, v: (
            f"{e.data['calamity']} ({e.data['victim']}) cannot be resolved by this engine yet; "
            "the card is returned without effect (option unplayable-phases=skip)."
        ),
    },
)

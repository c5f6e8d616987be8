"""Phases 8 and 9: calamity selection and calamity resolution (seed 003: 8, 9).

Phase 8 (R-3.3, D-14, §29.2-29.5): every calamity card held is revealed and
leaves its holder's hand. The holder is the primary victim; a tradable
calamity that changed hands in phase 7 names its giver (Treachery's trader;
never a secondary victim). A player who is primary victim of more than
`primary-calamity-limit` calamities keeps that many, drawn at random; the
others go to the returned cards with no effect.

Phase 9 (§29.6, §30): the calamities are resolved one at a time in the
ruleset's order (ascending stack, non-tradable first). Each is a list of
stages; a stage either strikes at once (no choice to make) or asks one
player: PICK cities (Treachery, Superstition, Slave Revolt's support check,
Civil Disorder, Iconoclasm & Heresy, Piracy), LOSE unit points or GIVE them
to secondary victims (Famine, Epidemic; `calamity_losses`).
Volcanic Eruption / Earthquake and Flood are in `calamity_nature`, Civil
War in `calamity_war`, Barbarian Hordes in `calamity_barbarians`: every
calamity of the packaged ruleset is resolved. Civilization cards change the
numbers through the ruleset's calamity effects. A calamity with no resolver
(one a house ruleset, option `ruleset-data`, names and this engine does not
know) is never skipped silently: the game waits at it, or, with the game
option `unplayable-phases=skip`, records ``CalamityNotPlayable`` and returns it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

from pbem.rules.board import losses as L
from pbem.rules.board.battle import PIRATES
from pbem.rules.board.losses import Assign, Loss
from pbem.rules.board.ranking import cities_in_stock, in_ast_order
from pbem.rules.board.stacks import return_cards
from pbem.rules.board.support import (
    disabled_tokens,
    reduction_tokens,
    revolt_tokens_placed,
)
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.phase import PhaseRules, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities import barbarians as barbarians
from pbem.rules.phases.calamities import nature as nature
from pbem.rules.phases.calamities import war as W
from pbem.rules.phases.cities import cities_of, reduction_candidates, support_shortfall
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import ruleset_of

SELECTION = "calamity-selection"
RESOLUTION = "calamity-resolution"
MAX_CHOICES = 60
Calamity = tuple[str, str, "str | None"]


@dataclass(frozen=True)
class LoseUnits:
    """A victim's unit-point losses: (area, "tokens" | "city" | "reduce", count) items (LOSE ...)."""

    player_id: int
    items: tuple[tuple[str, str, int], ...]


@dataclass(frozen=True)
class GiveLosses:
    """The primary victim's assignment of secondary unit points: (nation, points) shares (GIVE ...)."""

    player_id: int
    shares: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class PickCities:
    """A player's choice of cities for the calamity being resolved (PICK <area>, <area> ...)."""

    player_id: int
    areas: tuple[str, ...]


# -- phase 8: selection -------------------------------------------------------------------------


def _giver(state: GameState, holder: str, calamity: str) -> str | None:
    """Who last traded this calamity to its holder this turn (None: never traded to him)."""
    giver = None
    for receiver, card, given_by in state.calamity_givers:
        if receiver == holder and card == calamity:
            giver = given_by
    return giver


def _revealed(state: GameState) -> list[dict[str, Any]]:
    rules = ruleset_of(state)
    order = rules.calamity_order()
    out = []
    for name in order:
        for nation in in_ast_order(state, state.nations):
            if name in state.nations[nation].hand:
                cal = rules.calamities[name]
                giver = _giver(state, nation, name) if cal.tradable else None
                out.append({"calamity": name, "victim": nation, "giver": giver, "stack": cal.stack})
    return out


def _limit(state: GameState) -> int | None:
    return options_of(state).primary_calamity_limit


def _over_limit(state: GameState) -> str | None:
    limit = _limit(state)
    if limit is None:
        return None
    for nation in in_ast_order(state, state.nations):
        if sum(1 for _, victim, _ in state.calamities if victim == nation) > limit:
            return nation
    return None


def apply_revealed(state: GameState, data: dict[str, Any]) -> GameState:
    for c in data["calamities"]:
        n = state.nations[c["victim"]]
        hand = list(n.hand)
        hand.remove(c["calamity"])
        state = state.with_nation(replace(n, hand=tuple(hand)))
    held = tuple((c["calamity"], c["victim"], c["giver"]) for c in data["calamities"])
    return replace(state, calamities=held, step="revealed")


def apply_limited(state: GameState, data: dict[str, Any]) -> GameState:
    gone = set(data["returned"])
    left = tuple(c for c in state.calamities if not (c[1] == data["victim"] and c[0] in gone))
    return return_cards(replace(state, calamities=left), data["returned"])


def settle_selection(state: GameState, draws: Draws) -> list[Event]:
    if state.step == "":
        revealed = _revealed(state)
        if not revealed:
            return [phase_ended(SELECTION, ("R-3.3", "§29.2", "R-2.5"))]
        return [Event("CalamitiesRevealed", {"calamities": revealed}, ("seed 003: 8", "R-3.3", "D-14", "§29.2", "§29.3"))]
    if state.step == "revealed":
        victim = _over_limit(state)
        if victim is None:
            return [phase_ended(SELECTION, ("seed 003: 8", "D-14"))]
        limit = _limit(state)
        assert limit is not None
        mine = [c[0] for c in state.calamities if c[1] == victim]
        drawn = draws.shuffle(mine, f"{state.version}:calamity-limit:{victim}")
        kept = [c for c in mine if c in drawn[:limit]]
        returned = [c for c in mine if c not in kept]
        data = {"victim": victim, "limit": limit, "kept": kept, "returned": returned}
        return [Event("CalamitiesLimited", data, ("R-3.3", "D-14", "§29.5"))]
    return []


def _tell_revealed(state: GameState, event: Event, viewer: str) -> str:
    parts = []
    for c in event.data["calamities"]:
        how = f" (traded by {c['giver']})" if c["giver"] else ""
        parts.append(f"{c['calamity']} strikes {c['victim']}{how}")
    return "Calamities revealed: " + "; ".join(parts) + "."


def _tell_limited(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    return (
        f"{d['victim']} is primary victim of more than {d['limit']} calamities: kept at random "
        f"{', '.join(d['kept'])}; returned without effect: {', '.join(d['returned'])}."
    )


SELECTION_RULES = PhaseRules(
    name=SELECTION,
    apply={"CalamitiesRevealed": apply_revealed, "CalamitiesLimited": apply_limited},
    settle=settle_selection,
    narrate={"CalamitiesRevealed": _tell_revealed, "CalamitiesLimited": _tell_limited},
)


# -- phase 9: numbers from the rules and the cards ------------------------------------------------


def quantity(state: GameState, nation: str, calamity: str, role: str, name: str, base: int) -> int:
    """A calamity number for one victim after his civilization cards (§32; ruleset calamity effects).

    Overrides take the one most favourable to him (only the best Religion card
    counts for Superstition), then modifiers add up (``per``: per card of that
    commodity in his hand), then caps apply; never below 0.
    """
    rules = ruleset_of(state)
    effects = [
        e
        for card in state.nations[nation].civ_cards
        if card in rules.civ_cards
        for e in rules.civ_cards[card].effects
        if e.calamity == calamity and e.get("role") in (role, "any") and e.get("quantity") == name
    ]
    favourable = name in rules.calamities[calamity].favourable
    value = base
    overrides = [e.get("value") for e in effects if e.kind == "calamity-override"]
    if overrides:
        value = max(overrides) if favourable else min(overrides)
    for e in effects:
        if e.kind == "calamity-modifier":
            per = e.get("per")
            times = state.nations[nation].hand.count(per) if per else 1
            value += e.get("delta") * times
    for e in effects:
        if e.kind == "calamity-cap":
            value = min(value, e.get("value"))
    return max(0, value)


def immune(state: GameState, nation: str, calamity: str, role: str, part: str | None = None) -> bool:
    rules = ruleset_of(state)
    for card in state.nations[nation].civ_cards:
        for e in rules.civ_cards[card].effects_of("calamity-immunity") if card in rules.civ_cards else ():
            if e.calamity == calamity and e.get("role") == role and e.get("part") == part:
                return True
    return False


def _held(state: GameState, nation: str, calamity: str, quantity_name: str) -> list[str]:
    """The victim's civilization cards that change this quantity (for the record)."""
    rules = ruleset_of(state)
    return [
        card
        for card in state.nations[nation].civ_cards
        if card in rules.civ_cards
        and any(e.calamity == calamity and e.get("quantity") == quantity_name for e in rules.civ_cards[card].effects)
    ]


# -- phase 9: stages --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stage:
    """One step of a calamity: ``chooser`` picks ``count`` of ``candidates`` (areas holding cities).

    ``effect`` is what happens to each city picked: "reduce" (it becomes
    tokens of its owner, §26.41) or "seize" (it becomes a city of ``to``, or is
    eliminated when ``to`` has none left in stock). ``caps`` limits how many
    cities one owner may lose in this stage.
    """

    nation: str          # whose loss it is (the victim, or the victims named)
    role: str            # primary / secondary
    chooser: str
    count: int
    candidates: tuple[str, ...]
    effect: str
    question: str
    cites: tuple[str, ...]
    to: str | None = None
    caps: tuple[tuple[str, int], ...] = ()
    note: str = ""
    repeat: bool = False  # asked again (the same stage) after this pick


def _owner(state: GameState, area: str) -> str:
    city = state.area(area).city
    assert city is not None
    return city


def _within_caps(state: GameState, stage: Stage, picked: tuple[str, ...]) -> bool:
    caps = dict(stage.caps)
    for nation, cap in caps.items():
        if sum(1 for a in picked if _owner(state, a) == nation) > cap:
            return False
    return True


def _feasible(state: GameState, stage: Stage) -> int:
    """How many cities can actually be picked: the count, or fewer when there are not enough."""
    caps = dict(stage.caps)
    by_owner: dict[str, int] = {}
    for a in stage.candidates:
        by_owner[_owner(state, a)] = by_owner.get(_owner(state, a), 0) + 1
    available = sum(min(n, caps.get(o, n)) for o, n in by_owner.items())
    return min(stage.count, available)


def _options(state: GameState, stage: Stage) -> list[tuple[str, ...]]:
    """Legal picks, first by area name, at most MAX_CHOICES + 1 of them."""
    need = _feasible(state, stage)
    out = []
    for combo in combinations(sorted(stage.candidates), need):
        if _within_caps(state, stage, combo):
            out.append(combo)
            if len(out) > MAX_CHOICES:
                break
    return out


def _reduce_stage(state: GameState, nation: str, role: str, count: int, calamity: str, cites: tuple[str, ...], note: str = "") -> Stage:
    return Stage(
        nation=nation,
        role=role,
        chooser=nation,
        count=count,
        candidates=tuple(cities_of(state, nation)),
        effect="reduce",
        question=f"{calamity}: {count} of your cities are reduced. Choose which.",
        cites=cites,
        note=note,
    )


def _superstition(state: GameState, cal: Calamity, index: int) -> Stage | None:
    name, victim, _ = cal
    if index > 0:
        return None
    base = ruleset_of(state).calamities[name].primary["cities_reduced"]
    count = quantity(state, victim, name, "primary", "cities_reduced", base)
    cards = _held(state, victim, name, "cities_reduced")
    note = f" (holds {', '.join(cards)}; only the best Religion card counts)" if cards else ""
    return _reduce_stage(state, victim, "primary", count, name, ("§30.32", "§30.322"), note)


def _civil_disorder(state: GameState, cal: Calamity, index: int) -> Stage | None:
    name, victim, _ = cal
    if index > 0:
        return None
    spared = ruleset_of(state).calamities[name].primary["cities_spared"]
    cities = state.cities_on_board(victim)
    count = min(cities, quantity(state, victim, name, "primary", "cities_reduced", max(0, cities - spared)))
    cards = _held(state, victim, name, "cities_reduced")
    note = f" (holds {', '.join(cards)})" if cards else ""
    return _reduce_stage(state, victim, "primary", count, name, ("§30.7",), note)


def _iconoclasm(state: GameState, cal: Calamity, index: int) -> Stage | None:
    name, victim, giver = cal
    spec = ruleset_of(state).calamities[name]
    if index == 0:
        count = quantity(state, victim, name, "primary", "cities_reduced", spec.primary["cities_reduced"])
        cards = _held(state, victim, name, "cities_reduced")
        note = f" (holds {', '.join(cards)})" if cards else ""
        return _reduce_stage(state, victim, "primary", count, name, ("§30.8",), note)
    if index == 1:
        others = [
            n
            for n in in_ast_order(state, state.nations)
            if n not in (victim, giver) and not immune(state, n, name, "secondary")
        ]
        caps = tuple(
            (n, quantity(state, n, name, "secondary", "assigned_cities", spec.secondary["cities_reduced_total"]))
            for n in others
        )
        candidates = tuple(a for n in others for a in cities_of(state, n))
        total = spec.secondary["cities_reduced_total"]
        return Stage(
            nation=victim,
            role="secondary",
            chooser=victim,
            count=total,
            candidates=candidates,
            effect="reduce",
            question=(
                f"{name}: name {total} cities of other players to be reduced"
                + (f" (not {giver}, who traded you the card)" if giver else "")
                + "; Theology holders cannot be named, a Philosophy holder loses at most 1."
            ),
            cites=("§30.8", "§29.61"),
            caps=tuple((n, c) for n, c in caps if c < total),
        )
    return None


def _treachery(state: GameState, cal: Calamity, index: int) -> Stage | None:
    name, victim, giver = cal
    if index > 0:
        return None
    count = ruleset_of(state).calamities[name].primary["cities_taken"]
    if giver is None:
        return _reduce_stage(state, victim, "primary", count, name, ("§30.2", "Q-S6"), " (untraded: nobody gains it)")
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




def _coastal_cities(state: GameState, nation: str) -> tuple[str, ...]:
    areas = ruleset_of(state).areas
    return tuple(a for a in cities_of(state, nation) if areas[a].coastal)


def _piracy(state: GameState, cal: Calamity, index: int) -> Stage | None:
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
            candidates=_coastal_cities(state, victim),
            effect="seize",
            question=f"Piracy: choose {who}; they become Pirate cities.",
            cites=("§30.9", "Q-S6") if giver is None else ("§30.9",),
            to=PIRATES,
        )
    if index == 1:
        per = spec.secondary["coastal_cities_per_player"]
        players = spec.secondary["players"]
        others = [n for n in in_ast_order(state, state.nations) if n not in (victim, giver)]
        candidates = tuple(a for n in others for a in _coastal_cities(state, n))
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


def _slave_revolt(state: GameState, cal: Calamity, index: int) -> Stage | Event | None:
    name, victim, _ = cal
    if index == 0:
        base = ruleset_of(state).calamities[name].primary["tokens_disabled"]
        disabled = quantity(state, victim, name, "primary", "tokens_disabled", base)
        cards = _held(state, victim, name, "tokens_disabled")
        data = {"calamity": name, "victim": victim, "disabled": disabled, "on_board": state.tokens_on_board(victim), "cards": cards}
        return Event("SlavesRevolted", data, ("seed 003: 9", "§30.42", "§30.421", "D-10"))
    if support_shortfall(state, victim, disabled_tokens(state, victim)) and cities_of(state, victim):
        candidates = tuple(reduction_candidates(state, victim))
        return Stage(
            nation=victim,
            role="primary",
            chooser=victim,
            count=1,
            candidates=candidates,
            effect="reduce",
            question=(
                f"Slave Revolt: {disabled_tokens(state, victim)} of your tokens do not support cities now; your cities are "
                "not supported. Choose a city to reduce (its tokens count at once); you are asked again if more must go."
            ),
            cites=("§30.42", "§30.422", "§26.41", "D-6"),
            repeat=True,
        )
    return None


def _assigned(state: GameState) -> tuple[tuple[str, int], ...]:
    return tuple(tuple(x) for x in state.filed.get("assigned", ()))  # type: ignore[misc]


def _unit_points(name: str, keep_one: bool, cites: tuple[str, ...]) -> Callable[[GameState, Calamity, int], Any]:
    """Famine and Epidemic: the victim loses unit points, gives more to others, each of them loses his share."""

    def resolve(state: GameState, cal: Calamity, index: int) -> Loss | Assign | None:
        _, victim, giver = cal
        spec = ruleset_of(state).calamities[name]
        if index == 0:
            points = quantity(state, victim, name, "primary", "unit_points", spec.primary["unit_points"])
            return Loss(victim, "primary", points, keep_one, f"{name}: you lose {points} unit points.", cites)
        if index == 1:
            others = [n for n in in_ast_order(state, state.nations) if n not in (victim, giver)]
            total, cap = spec.secondary["unit_points_total"], spec.secondary["max_per_player"]
            question = (
                f"{name}: give {total} more unit points to other players, at most {cap} each"
                + (f" (not {giver}, who traded you the card)" if giver else "")
                + "; each then chooses which of his units go."
            )
            return Assign(victim, total, tuple((n, cap) for n in others), question, cites + ("§29.61",))
        shares = _assigned(state)
        if index - 2 >= len(shares):
            return None
        nation, given = shares[index - 2]
        points = quantity(state, nation, name, "secondary", "assigned_unit_points", given)
        points = quantity(state, nation, name, "secondary", "unit_points", points)
        return Loss(nation, "secondary", points, keep_one, f"{name}: {victim} gave you {given} unit points to lose; you lose {points}.", cites)

    return resolve


#: Calamities this engine resolves, by name: (state, calamity, stage index) -> the stage, an automatic
#: event that moves to the next stage, or None when done.
RESOLVERS: dict[str, Callable[[GameState, Calamity, int], Any]] = {
    "Treachery": _treachery,
    "Superstition": _superstition,
    "Civil Disorder": _civil_disorder,
    "Iconoclasm & Heresy": _iconoclasm,
    "Piracy": _piracy,
    "Slave Revolt": _slave_revolt,
    "Famine": _unit_points("Famine", False, ("§30.31", "§29.62")),
    "Epidemic": _unit_points("Epidemic", True, ("§30.6", "§29.62")),
    "Civil War": W.civil_war,
    "Volcanic Eruption / Earthquake": lambda s, c, i: nature.volcano(s, c, i),
    "Flood": lambda s, c, i: nature.flood(s, c, i),
    "Barbarian Hordes": lambda s, c, i: barbarians.barbarian_hordes(s, c, i),
}


def _index(state: GameState) -> int:
    return int(state.step) if state.step.isdigit() else 0


def _current(state: GameState) -> tuple[Calamity, Any] | None:
    """The calamity being resolved and its current stage (None: it is done); None if nothing is left."""
    if not state.calamities:
        return None
    cal = state.calamities[0]
    resolver = RESOLVERS.get(cal[0])
    if resolver is None:
        return cal, None
    return cal, resolver(state, cal, _index(state))


def _automatic(state: GameState, stage: Stage) -> bool:
    return _feasible(state, stage) == 0 or len(_options(state, stage)) == 1


def _changes(state: GameState, stage: Stage, picked: tuple[str, ...]) -> list[dict[str, Any]]:
    if stage.effect == "erupt":
        return nature.eruption_changes(state, picked)
    out = []
    seized = 0
    spent: dict[str, int] = {}  # tokens already promised from each owner's stock by this stage
    for area in picked:
        owner = _owner(state, area)
        if stage.effect == "seize" and stage.to == PIRATES:
            out.append({"area": area, "owner": owner, "effect": "seize", "to": PIRATES})
        elif stage.effect == "seize":
            to = stage.to if stage.to and cities_in_stock(state, stage.to) > seized else None
            seized += 1 if to else 0
            out.append({"area": area, "owner": owner, "effect": "seize" if to else "eliminate", "to": to})
        else:
            due = reduction_tokens(state, owner, area)
            tokens = min(due, state.nations[owner].stock - spent.get(owner, 0))
            spent[owner] = spent.get(owner, 0) + tokens
            out.append({"area": area, "owner": owner, "effect": "reduce", "tokens": tokens, "due": due})
    return out


def _stage_data(state: GameState, cal: Calamity, stage: Stage, picked: tuple[str, ...]) -> dict[str, Any]:
    return {
        "calamity": cal[0],
        "victim": cal[1],
        "role": stage.role,
        "chooser": stage.chooser,
        "count": stage.count,
        "cities": _changes(state, stage, picked),
        "note": stage.note,
        "next": _index(state) + (0 if stage.repeat else 1),
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
        else:
            state = state.with_area(c["area"], replace(area, city=None))
    struck = state.filed.set("struck", tuple(c["area"] for c in data["cities"]))
    return replace(state, step=str(data.get("next", _index(state) + 1)), gained_this_turn=tuple(gained), filed=struck)


def apply_revolted(state: GameState, data: dict[str, Any]) -> GameState:
    revolts = tuple(r for r in state.slave_revolts if r[0] != data["victim"]) + ((data["victim"], data["disabled"], 0),)
    return replace(state, slave_revolts=revolts, step=str(_index(state) + 1))


def apply_resolved(state: GameState, data: dict[str, Any]) -> GameState:
    filed = state.filed.without("assigned")
    for key in nature.FILED + barbarians.FILED:
        filed = filed.without(key)
    state = replace(state, calamities=state.calamities[1:], step="", filed=filed)
    return return_cards(state, [data["calamity"]])


def _struck_cites(cal: Calamity, stage: Stage) -> tuple[str, ...]:
    return ("seed 003: 9", "§29.6") + stage.cites


def settle_resolution(state: GameState, draws: Draws) -> list[Event]:
    current = _current(state)
    if current is None:
        return [phase_ended(RESOLUTION, ("seed 003: 9", "§29.6"))]
    cal, stage = current
    if cal[0] not in RESOLVERS:
        if options_of(state).unplayable_phases != "skip":
            return []  # the engine cannot resolve this calamity yet: the game waits here
        data = {"calamity": cal[0], "victim": cal[1]}
        return [Event("CalamityNotPlayable", data, ("unplayable-phases",))]
    if stage is None:
        return [Event("CalamityResolved", {"calamity": cal[0], "victim": cal[1]}, ("§29.7",))]
    if hasattr(stage, "settle"):  # a stage with its own prompt (calamity_war.Split)
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
    if not _automatic(state, stage):
        return []
    options = _options(state, stage)
    picked = options[0] if options else ()
    return [Event("CalamityStruck", _stage_data(state, cal, stage, picked), _struck_cites(cal, stage))]


def _prompt(state: GameState) -> Prompt | None:
    current = _current(state) if state.phase == RESOLUTION else None
    if current is None or not isinstance(current[1], Stage) or _automatic(state, current[1]):
        return None
    cal, stage = current
    options = _options(state, stage)
    need = _feasible(state, stage)
    n = state.nations[stage.chooser]
    lines = tuple("PICK " + ", ".join(o) for o in options[:MAX_CHOICES])
    owners = sorted({_owner(state, a) for a in stage.candidates})
    return Prompt(
        who=stage.chooser.lower(),
        player_id=n.player_id,
        step=f"calamity-{stage.role}",
        question=stage.question + stage.note + (f" (only {need} can be)" if need < stage.count else ""),
        choices=lines,
        template=lines[0],
        default=f"the first {need} by area name ({', '.join(options[0])})",
        situation=tuple(
            f"{o}'s cities: " + ", ".join(a for a in stage.candidates if _owner(state, a) == o) + "." for o in owners
        )
        + (f"Your stock: {n.stock}.",),
        cites=_struck_cites(cal, stage),
    )


def _loss_data(state: GameState, cal: Calamity, loss: Loss, items: tuple[L.Item, ...]) -> dict[str, Any]:
    return {
        "calamity": cal[0],
        "victim": cal[1],
        "nation": loss.nation,
        "role": loss.role,
        "points": loss.points,
        "losses": L.changes(state, loss, items),
        "next": _index(state) + 1,
    }


def _assign_data(state: GameState, cal: Calamity, stage: Assign, shares: tuple[tuple[str, int], ...]) -> dict[str, Any]:
    return {"calamity": cal[0], "victim": cal[1], "total": stage.total, "shares": [list(s) for s in shares], "next": _index(state) + 1}


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
                + " Name your losses: '<area> <tokens>' removes tokens, '<area> CITY' eliminates a city (5 points"
                + (", leaving 1 token: 4" if stage.keep_one else "")
                + "), '<area> REDUCE' reduces it (5 less the tokens it leaves)."
            ),
            choices=lines,
            template=lines[0],
            default=f"{lines[0]} (tokens first, by area name, then as few cities as possible)",
            situation=(
                "Tokens you may remove: " + (", ".join(f"{a} {k}" for a, k in room.items()) or "none") + ".",
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
    if current is not None and hasattr(current[1], "decide_pick"):  # a stage of its own (calamity_nature.PlainChoice)
        return current[1].decide_pick(state, current[0], command, by_default)
    prompt = _prompt(state)
    if prompt is None or prompt.player_id != command.player_id:
        raise Rejection("no calamity asks you to choose cities now", "§29.6")
    current = _current(state)
    assert current is not None and isinstance(current[1], Stage)
    cal, stage = current
    picked = tuple(dict.fromkeys(command.areas))
    wrong = [a for a in picked if a not in stage.candidates]
    if wrong:
        raise Rejection(
            f"{', '.join(wrong)}: not a city you may choose; choose from {', '.join(stage.candidates)}", stage.cites[0]
        )
    need = _feasible(state, stage)
    if len(picked) != need:
        raise Rejection(f"choose exactly {need} cities", stage.cites[0])
    if not _within_caps(state, stage, picked):
        caps = ", ".join(f"{n} at most {c}" for n, c in stage.caps)
        raise Rejection(f"too many cities of one player: {caps}", stage.cites[0])
    data = _stage_data(state, cal, stage, tuple(sorted(picked)))
    if by_default:
        data["by_default"] = True
    return [Event("CalamityCitiesChosen", data, _struck_cites(cal, stage))]


def _stage_for(state: GameState, player_id: int, kind: type) -> tuple[Calamity, Any]:
    current = _current(state) if state.phase == RESOLUTION else None
    if current is None or not isinstance(current[1], kind) or _loss_prompt(state) is None:
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
    return decide_pick(state, PickCities(prompt.player_id, _options(state, current[1])[0]), True)


def _tell_struck(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    head = f"{d['calamity']} ({d['victim']}"
    head += ", secondary victims)" if d["role"] == "secondary" else ")"
    parts = []
    for c in d["cities"]:
        if c["effect"] == "reduce":
            short = f", stock short: {c['due']} due" if c["tokens"] < c["due"] else ""
            what = "eliminated (no tokens in stock)" if c["tokens"] == 0 else f"reduced to {c['tokens']} tokens{short}"
            parts.append(f"{c['owner']}'s {c['area']} {what}")
        elif c["effect"] == "erupt":
            parts.append(nature.tell_eruption(c))
        elif c["effect"] == "seize":
            to = "a Pirate city" if c["to"] == PIRATES else f"a city of {c['to']}"
            parts.append(f"{c['owner']}'s {c['area']} becomes {to}")
        else:
            parts.append(f"{c['owner']}'s {c['area']} is eliminated")
    how = f" (chosen by {d['chooser']}{', by default' if d.get('by_default') else ''})" if event.type == "CalamityCitiesChosen" else ""
    body = "; ".join(parts) if parts else "no city is affected"
    return f"{head}{d.get('note', '')}: {body}{how}."


def _tell_loss(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    parts = []
    for c in d["losses"]:
        if c["effect"] == "tokens":
            parts.append(f"{c['tokens']} token{'s' if c['tokens'] != 1 else ''} in {c['area']}")
        else:
            what = "eliminated" if c["effect"] == "city" else "reduced"
            left = f", {c['placed']} token{'s' if c['placed'] != 1 else ''} left" if c["placed"] else ""
            parts.append(f"the city of {c['area']} {what}{left}")
    how = " (by default)" if d.get("by_default") else ""
    total = sum(c["points"] for c in d["losses"])
    return f"{d['calamity']} ({d['victim']}): {d['nation']} loses {total} unit points{how}: " + ("; ".join(parts) or "nothing") + "."


def _tell_given(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    how = " (by default)" if d.get("by_default") else ""
    shares = ", ".join(f"{n} {k}" for n, k in d["shares"]) or "nobody"
    return f"{d['calamity']}: {d['victim']} gives unit points to lose{how}: {shares}."


def _tell_revolted(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    cards = f" ({', '.join(d['cards'])})" if d["cards"] else ""
    return (
        f"Slave Revolt ({d['victim']}): {min(d['disabled'], d['on_board'])} of its {d['on_board']} tokens on the board "
        f"cannot support cities{cards}; its cities are checked at once."
    )


RESOLUTION_RULES = PhaseRules(
    name=RESOLUTION,
    apply={
        "CalamityStruck": apply_struck,
        "CalamityCitiesChosen": apply_struck,
        "CalamityResolved": apply_resolved,
        "CalamityNotPlayable": apply_resolved,
        "SlavesRevolted": apply_revolted,
        "CalamityLossChosen": apply_loss,
        "CalamityLossTaken": apply_loss,
        "CalamityLossesGiven": apply_given,
        "CalamityLossesShared": apply_given,
        **W.APPLY,
        "FloodStruck": lambda s, d: nature.apply_flood(s, d),
        "FloodPlainChosen": lambda s, d: nature.apply_flood(s, d),
        **barbarians.APPLY,
    },
    decide={PickCities: decide_pick, LoseUnits: decide_lose, GiveLosses: decide_give, **W.DECIDE},
    pending=pending_resolution,
    defaults=defaults_resolution,
    settle=settle_resolution,
    inputs={
        "CalamityCitiesChosen": lambda s, d: PickCities(
            s.nations[d["chooser"]].player_id, tuple(d.get("picked") or [c["area"] for c in d["cities"]])
        ),
        "CalamityLossChosen": lambda s, d: LoseUnits(
            s.nations[d["nation"]].player_id,
            tuple((c["area"], c["effect"], c.get("tokens", 1)) for c in d["losses"]),
        ),
        "FloodPlainChosen": lambda s, d: PickCities(s.nations[d["victim"]].player_id, (d["picked"],)),
        "CalamityLossesGiven": lambda s, d: GiveLosses(s.nations[d["victim"]].player_id, tuple((n, k) for n, k in d["shares"])),
        **W.INPUTS,
        **barbarians.INPUTS,
    },
    narrate={
        "CalamityStruck": _tell_struck,
        "CalamityCitiesChosen": _tell_struck,
        "SlavesRevolted": _tell_revolted,
        "CalamityLossChosen": _tell_loss,
        "CalamityLossTaken": _tell_loss,
        "CalamityLossesGiven": _tell_given,
        "CalamityLossesShared": _tell_given,
        **W.NARRATE,
        "FloodStruck": lambda s, e, v: nature.tell_flood(s, e, v),
        "FloodPlainChosen": lambda s, e, v: nature.tell_flood(s, e, v),
        **barbarians.NARRATE,
        "CalamityResolved": lambda s, e, v: f"{e.data['calamity']} ({e.data['victim']}) is resolved.",
        "CalamityNotPlayable": lambda s, e, v: (
            f"{e.data['calamity']} ({e.data['victim']}) cannot be resolved by this engine yet; "
            "the card is returned without effect (option unplayable-phases=skip)."
        ),
    },
)

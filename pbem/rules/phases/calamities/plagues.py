"""Calamities counted in unit points: Famine (§30.31) and Epidemic (§30.6).

The victim loses unit points of his choice, then gives more to other players
(at most so many each, never to who traded him the card, §29.61); each of
them then chooses his own losses. The choosing of units is `board.losses`.

Under No-Trading there is no Grain: a Pottery holder may set aside Water
cards instead, each cutting his Famine loss by 4 (NT-12). Before his loss he
is asked how many (WATER n); the lowest-valued go, and they stay his cards
but cannot pay for civilization cards this turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pbem.rules.board.losses import Assign, Loss
from pbem.rules.board.ranking import in_ast_order
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.choosing import (
    CalamityFamily,
    Strike,
    assigned_shares,
    own_stage,
    quantity,
)
from pbem.rules.ruleset.model import money_type, money_value
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

WATER = "Water"
WATER_CITES = ("seed 004: 5d", "NT-12", "§32.231")


@dataclass(frozen=True)
class SetAsideWater:
    """WATER n: Water cards set aside against a Famine, each cutting the loss by 4 (No-Trading, NT-12)."""

    player_id: int
    count: int


def _water_cut(state: GameState, nation: str) -> int:
    """Unit points one Water card saves this nation in a Famine: Pottery's cut per Grain card (0 without it)."""
    rules = ruleset_of(state)
    return -sum(
        e.get("delta")
        for card in state.nations[nation].civ_cards
        if card in rules.civ_cards
        for e in rules.civ_cards[card].effects_of("calamity-modifier")
        if e.calamity == "Famine" and e.get("per") == "Grain"
    )


def usable_water(state: GameState, nation: str) -> list[str]:
    """His Water cards not yet set aside this turn, the lowest values first."""
    held = list(state.nations[nation].hand)
    for card in state.nations[nation].set_aside:
        held.remove(card)
    return sorted((c for c in held if money_type(c) == WATER), key=money_value)


def _water_decided(state: GameState, index: int) -> int | None:
    for stage, count in state.filed.get("water", ()):
        if stage == index:
            return count
    return None


@dataclass(frozen=True)
class WaterChoice:
    """The stage before a Pottery holder's Famine loss under No-Trading: how many Water cards to set aside."""

    nation: str
    points: int
    cut: int
    most: int
    index: int

    # hooks used by resolution.settle_resolution / pending_resolution / defaults_resolution
    def settle(self, state: GameState, cal: tuple) -> list[Event]:
        return []  # he is asked

    def prompt(self, state: GameState, cal: tuple) -> Prompt:
        n = state.nations[self.nation]
        lines = tuple(f"WATER {k}" for k in range(self.most, -1, -1))
        return Prompt(
            who=self.nation.lower(),
            player_id=n.player_id,
            step="famine-water",
            question=(
                f"Famine: you are to lose {self.points} unit points. With Pottery each Water card you set aside cuts "
                f"the loss by {self.cut}; the cards stay yours but cannot pay for civilization cards this turn. "
                "How many do you set aside (the lowest values go)?"
            ),
            choices=lines,
            template=lines[0],
            default=f"{lines[0]} (as many as the loss needs)",
            situation=(f"Your Water cards: {', '.join(usable_water(state, self.nation))}.",),
            cites=WATER_CITES,
        )

    def default(self, state: GameState, cal: tuple, prompt: Prompt) -> list[Event]:
        return decide_water(state, SetAsideWater(prompt.player_id, self.most), True)


def decide_water(state: GameState, command: SetAsideWater, by_default: bool = False) -> list[Event]:
    current = own_stage(state, "Famine", _famine)
    if current is None or not isinstance(current[1], WaterChoice):
        raise Rejection("no Famine asks you about Water cards now", "NT-12")
    cal, stage = current
    if state.nations[stage.nation].player_id != command.player_id:
        raise Rejection(f"no Famine asks you about Water cards now; {stage.nation} is to answer", "NT-12")
    if not 0 <= command.count <= stage.most:
        raise Rejection(f"set aside between 0 and {stage.most} Water cards", "NT-12")
    cards = usable_water(state, stage.nation)[: command.count]
    data: dict[str, Any] = {
        "calamity": cal[0], "victim": cal[1], "nation": stage.nation, "stage": stage.index, "count": command.count,
        "cards": cards, "points": stage.points, "left": max(0, stage.points - stage.cut * command.count),
    }
    if by_default:
        data["by_default"] = True
    return [Event("WaterSetAside", data, WATER_CITES)]


def apply_water(state: GameState, data: dict[str, Any]) -> GameState:
    n = state.nations[data["nation"]]
    state = state.with_nation(replace(n, set_aside=n.set_aside + tuple(data["cards"])))
    decided = tuple(state.filed.get("water", ())) + ((data["stage"], data["count"]),)
    return replace(state, filed=state.filed.set("water", decided))


def tell_water(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    how = " (by default)" if d.get("by_default") else ""
    return (
        f"Famine ({d['victim']}): {d['nation']} sets aside {d['count']} Water card{'s' if d['count'] != 1 else ''}"
        f"{how} with Pottery: {d['points']} unit points to lose become {d['left']}."
    )


def _famine_loss(state: GameState, loss: Loss, index: int) -> Loss | WaterChoice:
    """Under No-Trading, a Pottery holder with Water is first asked how many to set aside (NT-12)."""
    if not parts_of(state).calamities.water_set_aside or not loss.points:
        return loss
    cut = _water_cut(state, loss.nation)
    decided = _water_decided(state, index)
    if decided is not None:
        left = max(0, loss.points - cut * decided)
        return replace(loss, points=left, question=loss.question.replace(f"lose {loss.points}", f"lose {left}"))
    most = min(len(usable_water(state, loss.nation)), -(-loss.points // cut)) if cut > 0 else 0
    return WaterChoice(loss.nation, loss.points, cut, most, index) if most else loss


def _unit_points(name: str, keep_one: bool, cites: tuple[str, ...]) -> Callable[[GameState, Strike, int], Any]:
    """Famine and Epidemic: the victim loses unit points, gives more to others, each of them loses his share."""

    def resolve(state: GameState, cal: Strike, index: int) -> Loss | Assign | WaterChoice | None:
        _, victim, giver = cal
        spec = ruleset_of(state).calamities[name]
        if index == 0:
            points = quantity(state, victim, name, "primary", "unit_points", spec.primary["unit_points"])
            loss = Loss(victim, "primary", points, keep_one, f"{name}: you lose {points} unit points.", cites)
            return _famine_loss(state, loss, index) if name == "Famine" else loss
        if index == 1:
            # The player who traded the card is spared (§29.61); a non-tradable Famine has no trader, and
            # under No-Trading its High may be a secondary victim like anyone (Q-NT7).
            spared = giver if spec.tradable else None
            others = [n for n in in_ast_order(state, state.nations) if n not in (victim, spared)]
            if not others:
                return None  # two players, the other one traded the card: nobody is left to be given any (§29.61)
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
        loss = Loss(nation, "secondary", points, keep_one, f"{name}: {victim} gave you {given} unit points to lose; you lose {points}.", cites)
        return _famine_loss(state, loss, index) if name == "Famine" else loss

    return resolve


_famine = _unit_points("Famine", False, ("§30.31", "§29.62"))


FAMILY = CalamityFamily(
    resolvers={"Famine": _famine, "Epidemic": _unit_points("Epidemic", True, ("§30.6", "§29.62"))},
    apply={"WaterSetAside": apply_water},
    decide={SetAsideWater: decide_water},
    inputs={"WaterSetAside": lambda s, d: SetAsideWater(s.nations[d["nation"]].player_id, d["count"])},
    narrate={"WaterSetAside": tell_water},
    filed=("water",),
)

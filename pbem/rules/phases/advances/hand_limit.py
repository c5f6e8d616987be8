"""Phase 12b: the hand limit (§31.71; D-8): commodity cards above it are discarded, by the player's choice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.board.commodities import (
    card_word,
    commodity_counts,
    commodity_kinds,
    hand_limit,
)
from pbem.rules.board.ranking import in_ast_order
from pbem.rules.board.stacks import return_cards
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import acting_nation, defaulted
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.advances.payment import (
    MAX_CHOICES,
    PHASE,
    sees_hand,
    take_from_hand,
)
from pbem.rules.phases.advances.purchase import hand_text, pay_text
from pbem.rules.ruleset.rulebook import parts_of

LIMIT_CITES = ("seed 003: 12", "§31.71", "D-8")


@dataclass(frozen=True)
class DiscardCards:
    """DISCARD: the commodity cards a player over the hand limit gives up (§31.71)."""

    player_id: int
    cards: tuple[tuple[str, int], ...]


def over_limit(state: GameState, nation: str) -> int:
    """Commodity cards above the hand limit (§31.71)."""
    return max(0, sum(commodity_counts(state, nation).values()) - hand_limit(state))


def default_discards(state: GameState, nation: str) -> dict[str, int]:
    """The lowest face values go first (ties: by name) until the hand is at the limit."""
    known = commodity_kinds(state)
    cards = sorted(
        (c for c in state.nations[nation].hand if c in known), key=lambda c: (known[c].value, c)
    )[: over_limit(state, nation)]
    out: dict[str, int] = {}
    for c in cards:
        out[c] = out.get(c, 0) + 1
    return out


def _discard_line(cards: dict[str, int]) -> str:
    return "DISCARD " + pay_text(cards, 0)


def _discard_choices(state: GameState, nation: str) -> list[str]:
    excess = over_limit(state, nation)
    held = commodity_counts(state, nation)
    known = commodity_kinds(state)
    lines = [_discard_line(default_discards(state, nation))]
    # the same number of cards taken from the highest values instead, and from each type first
    highest = sorted((c for c in state.nations[nation].hand if c in known), key=lambda c: (-known[c].value, c))[:excess]
    for order in [highest] + [
        [first] * min(held[first], excess) for first in held
    ]:
        picked: dict[str, int] = {}
        for c in order:
            picked[c] = picked.get(c, 0) + 1
        if sum(picked.values()) < excess:  # fill from the lowest values
            for c in sorted(held, key=lambda c: (known[c].value, c)):
                room = held[c] - picked.get(c, 0)
                take = min(room, excess - sum(picked.values()))
                if take > 0:
                    picked[c] = picked.get(c, 0) + take
        line = _discard_line(dict(sorted(picked.items())))
        if line not in lines:
            lines.append(line)
    return lines[:MAX_CHOICES]


def discard_prompt(state: GameState, nation: str) -> Prompt:
    n = state.nations[nation]
    limit = hand_limit(state)
    excess = over_limit(state, nation)
    lowest = default_discards(state, nation)
    return Prompt(
        who=nation.lower(),
        player_id=n.player_id,
        step="hand-limit",
        question=(
            f"Hand limit: you may keep {limit} {card_word(state)} cards and hold {limit + excess}. Name the {excess} you "
            + parts_of(state).deck.discard_help
        ),
        choices=tuple(_discard_choices(state, nation)),
        template=_discard_line(lowest),
        default=f"the lowest face values go ({pay_text(lowest, 0)})",
        situation=(f"Your {card_word(state)} cards: {hand_text(state, nation)}.",),
        cites=LIMIT_CITES,
    )


def discard_prompts(state: GameState) -> dict[str, Prompt]:
    """Who is over the hand limit and has not discarded yet, each with his prompt."""
    return {
        n.lower(): discard_prompt(state, n)
        for n in in_ast_order(state, state.nations)
        if over_limit(state, n) and f"discard:{n}" not in state.filed
    }


def apply_discarded(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    n = state.nations[nation]
    hand, gone = take_from_hand(n.hand, data["cards"])
    aside, _ = take_from_hand(n.set_aside, data["cards"])  # a discarded Water card is no longer set aside
    state = state.with_nation(replace(n, hand=hand, set_aside=aside))
    state = replace(state, filed=state.filed.set(f"discard:{nation}", (1,)))
    return return_cards(state, gone)


def apply_limited(state: GameState, data: dict[str, Any]) -> GameState:
    for nation, kept in data["kept"].items():
        state = state.with_nation(replace(state.nations[nation], kept_hand_count=kept))
    return state


def decide_discard(state: GameState, command: DiscardCards, by_default: bool = False) -> list[Event]:
    nation = acting_nation(state, command.player_id)
    asked = state.phase == PHASE and state.step == "hand-limit"
    if not asked or nation.lower() not in discard_prompts(state):
        raise Rejection("you are not over the hand limit now: nothing to discard", "§31.71")
    held = commodity_counts(state, nation)
    cards: dict[str, int] = {}
    for name, count in command.cards:
        cards[name] = cards.get(name, 0) + count
    for name, count in cards.items():
        if held.get(name, 0) < count:
            raise Rejection(f"you hold {held.get(name, 0)} {name}, not {count}", "§31.71")
    excess = over_limit(state, nation)
    if sum(cards.values()) != excess:
        raise Rejection(
            f"discard exactly {excess} {card_word(state)} cards to keep {hand_limit(state)}; you named {sum(cards.values())}",
            parts_of(state).deck.hand_limit_rule,
        )
    data: dict[str, Any] = {"nation": nation, "cards": dict(sorted(cards.items()))}
    if by_default:
        data["by_default"] = True
    return [Event("CardsDiscarded", data, LIMIT_CITES)]


def tell_discarded(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    how = f" ({defaulted(d)}: the lowest values)" if d.get("by_default") else ""
    count = sum(d["cards"].values())
    if sees_hand(viewer, d["nation"]):
        return f"{d['nation']} discarded {count} cards to the hand limit{how}: {pay_text(d['cards'], 0)}."
    return f"{d['nation']} discarded {count} cards to the hand limit{how}."


def tell_limited(state: GameState, event: Event, viewer: str) -> str:
    return "Trade cards kept after the hand limit: " + ", ".join(f"{n} {k}" for n, k in event.data["kept"].items()) + "."

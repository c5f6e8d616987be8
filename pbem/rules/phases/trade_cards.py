"""Trade-card stacks: set-up (§15.2) and phase 6 acquisition (§27).

Phase 6 (seed 001: 6, 6A; Q-S3): before the first draw of the game the nine
stacks are set up from the ruleset data (§15.2). Then, fewest cities first and
ties by A.S.T.-ranking, each player with N cities on the board draws the top
card of each of stacks 1..N (an empty stack is skipped, §27.1-27.21), and
straight after his own draw may buy any number of cards from the purchase
stack (9) at ``gold_ivory_price`` treasury each, with or without cities
(§27.51; the tokens go to stock). Non-tradable calamities drawn are simply
held (§27.4). Card names are secret: only the owner, the moderator and the
auditor see them; the others see how many.

The 13b step that puts returned cards back under the stacks belongs to the
A.S.T.-alteration phase and lives in `board.stacks`.

Under ``variant-no-trading=on`` (RULINGS.md §4.2) the stacks are the nine
money piles (NT-1, NT-3): they are shuffled with the calamity pile (NT-2)
before the first draw; a player with N cities takes the top card of piles
1..N (NT-4) and may then buy cards of pile N, his highest type (pile 1 with
no city), at the money price each (NT-5). Others see the type of a money
card, never its value (Q-NT1).

Under Small Cities every six towns count as a city here: N = cities + towns
// 6, at most 9, and the draw order goes by that N (SC-8, Q-SC5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.board.ranking import ast_rank
from pbem.rules.board.stacks import (
    stacks_data,
    stacks_from,
)
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import FrozenMap, replace
from pbem.rules.core.phase import PhaseRules, acting_nation, defaulted, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import NotYourTurn, Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

PHASE = "trade-card-acquisition"
#: Most BUY lines a prompt lists (0..9, then the maximum when it is larger).
MAX_BUY_CHOICES = 10


@dataclass(frozen=True)
class BuyTradeCards:
    """6b: buy ``count`` cards from the purchase stack (§27.51); 0 buys none."""

    player_id: int
    count: int


# -- stacks -------------------------------------------------------------------------


def set_up_money(state: GameState, draws: Draws) -> Event:
    """No-Trading: each money pile shuffled (NT-3), and the twelve calamities as one shuffled pile (NT-2)."""
    rules = ruleset_of(state)
    piles = {p.number: draws.shuffle(p.cards(), f"{state.version}:money-setup:{p.number}") for p in rules.money_piles}
    calamities = draws.shuffle(sorted(rules.calamities), f"{state.version}:calamity-pile")
    data = {"stacks": stacks_data(piles), "calamities": list(calamities)}
    return Event("MoneyPilesSetUp", data, ("NT-1", "NT-2", "NT-3"))


def apply_money_set_up(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, stacks=FrozenMap(stacks_from(data["stacks"])), calamity_pile=tuple(data["calamities"]))


def set_up_stacks(state: GameState, draws: Draws) -> Event:
    """The §15.2 set-up (fact sheet §1.2 steps 1-3), recorded so it can be audited after the seed reveal.

    Each stack's commodities are shuffled; from stacks 2-9 as many commodities as
    there are players are set aside, the tradable calamity is shuffled into the
    rest, the set-aside cards go back on top, and the non-tradable calamity goes
    to the bottom. Stack 1 has no calamity.
    """
    players = len(state.players) or len(state.nations)
    stacks: dict[int, list[str]] = {}
    for stack in ruleset_of(state).stacks:
        cards = [c.name for c in stack.commodities for _ in range(c.copies)]
        cards = draws.shuffle(cards, f"{state.version}:stack-setup:{stack.number}")
        if stack.tradable_calamity or stack.non_tradable_calamity:
            top, rest = cards[:players], cards[players:]
            if stack.tradable_calamity:
                rest = draws.shuffle(rest + [stack.tradable_calamity], f"{state.version}:stack-setup:{stack.number}:calamity")
            cards = top + rest
            if stack.non_tradable_calamity:
                cards.append(stack.non_tradable_calamity)
        stacks[stack.number] = cards
    cites = ("seed 001: 6 [IMPORTANT]", "§15.2")
    return Event("StacksSetUp", {"players": players, "stacks": stacks_data(stacks)}, cites)


def apply_stacks_set_up(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, stacks=FrozenMap(stacks_from(data["stacks"])))


# -- order of play -----------------------------------------------------------------


def draw_right(state: GameState, nation: str) -> int:
    """Cities on the board, and under Small Cities one more for every six towns (SC-8): the pieces decide."""
    return parts_of(state).pieces.draw_right(state, nation)


def _order_count(state: GameState, nation: str) -> int:
    """What the draw order counts: the cities, or under Small Cities N = min(9, cities + towns // 6) (SC-8, Q-SC5).

    Games of rules revision 1 and earlier counted the towns uncapped, so two nations that both draw nine
    went by their uncapped counts; they keep that order when re-derived (`core.state.RULES_REVISION`).
    """
    if state.revision >= 2 and parts_of(state).pieces.towns:
        return draw_count(state, nation)
    return draw_right(state, nation)


def draw_order(state: GameState) -> list[str]:
    """Fewest cities on the board first, ties by A.S.T.-ranking (seed 001: 6A, Q-S3; Small Cities: by N, Q-SC5)."""
    return sorted(state.nations, key=lambda n: (_order_count(state, n), ast_rank(state, n)))


def _filed(state: GameState, key: str) -> tuple[str, ...]:
    return tuple(state.filed.get(key, ()))


def _pile_count(state: GameState) -> int:
    return parts_of(state).deck.pile_count(ruleset_of(state))


def draw_count(state: GameState, nation: str) -> int:
    """How many stacks (piles) the nation draws from: one per city on the board (§27.2, NT-4; SC-8)."""
    return min(draw_right(state, nation), _pile_count(state))


def purchase_number(state: GameState, nation: str) -> int:
    """The stack cards are bought from: stack 9 (§27.51), or under No-Trading the nation's highest pile (NT-5, Q-NT3)."""
    return parts_of(state).deck.purchase_number(ruleset_of(state), draw_count(state, nation))


def price(state: GameState) -> int:
    return parts_of(state).deck.price(ruleset_of(state))


def _purchase_stack(state: GameState, nation: str) -> tuple[str, ...]:
    return tuple(state.stacks.get(purchase_number(state, nation), ()))


def most_affordable(state: GameState, nation: str) -> int:
    """How many cards ``nation`` could buy now: by treasury and by cards left in the purchase stack."""
    return min(state.nations[nation].treasury // price(state), len(_purchase_stack(state, nation)))


def _must_draw(state: GameState, nation: str) -> bool:
    return draw_right(state, nation) > 0 and nation not in _filed(state, "drawn")


def _may_buy(state: GameState, nation: str) -> bool:
    return nation not in _filed(state, "bought") and most_affordable(state, nation) > 0


def current(state: GameState) -> str | None:
    """The nation whose draw or purchase is next, or None when everybody is done."""
    if state.phase != PHASE or state.step != "draw":
        return None
    for nation in draw_order(state):
        if _must_draw(state, nation) or _may_buy(state, nation):
            return nation
    return None


# -- folding -----------------------------------------------------------------------


def _take_top(state: GameState, number: int, count: int) -> tuple[GameState, tuple[str, ...]]:
    cards = tuple(state.stacks.get(number, ()))
    return replace(state, stacks=state.stacks.set(number, cards[count:])), cards[:count]


def apply_drawing_begun(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, step="draw")


def apply_drawn(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    for number in data["stacks"]:
        state, _ = _take_top(state, int(number), 1)
    n = state.nations[nation]
    state = state.with_nation(replace(n, hand=n.hand + tuple(data["cards"])))
    return replace(state, filed=state.filed.set("drawn", _filed(state, "drawn") + (nation,)))


def apply_bought(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    state, _ = _take_top(state, data.get("stack", ruleset_of(state).purchase_stack), data["count"])
    n = state.nations[nation]
    state = state.with_nation(
        replace(n, hand=n.hand + tuple(data["cards"]), treasury=n.treasury - data["paid"], stock=n.stock + data["paid"])
    )
    return replace(state, filed=state.filed.set("bought", _filed(state, "bought") + (nation,)))


# -- who acts ----------------------------------------------------------------------


def _buy_choices(most: int) -> tuple[str, ...]:
    counts = list(range(min(most, MAX_BUY_CHOICES - 1) + 1))
    if most > counts[-1]:
        counts.append(most)
    return tuple(f"BUY {c}" for c in counts)


def _buy_prompt(state: GameState, nation: str) -> Prompt:
    n = state.nations[nation]
    most = most_affordable(state, nation)
    each, number = price(state), purchase_number(state, nation)
    hand = ", ".join(sorted(n.hand)) or "none"
    parts = parts_of(state)
    if parts.deck.buys_own_pile:  # the buyer's highest money pile (NT-5)
        kind = ruleset_of(state).money_piles[number - 1].type
        question = (
            f"You may buy money cards of your highest type, {kind} (pile {number}), at {each} treasury each, "
            f"taken from the top; you can afford up to {most}. How many do you buy?"
        )
        cites: tuple[str, ...] = ("NT-5", "Q-NT3")
    else:
        question = (
            f"You may buy cards from stack {number} at {each} treasury each, taken from the top; "
            f"you can afford up to {most}. How many do you buy?"
        )
        cites = ("§27.51", "Q-S3")
    return Prompt(
        who=nation.lower(),
        player_id=n.player_id,
        step="buy-trade-cards",
        question=question,
        choices=_buy_choices(most),
        template="BUY 0",
        default="BUY 0 (buy nothing)",
        situation=(
            f"Treasury {n.treasury}, stock {n.stock}, cities on the board {state.cities_on_board(nation)}"
            + (f", towns {state.towns_on_board(nation)}." if parts.pieces.towns else "."),
            f"Your {parts.deck.card}s: {hand}.",
            f"Cards left in {parts.deck.pile} {number}: {len(_purchase_stack(state, nation))}.",
        ),
        cites=cites,
    )


def pending(state: GameState) -> dict[str, Prompt]:
    nation = current(state)
    if nation is None or _must_draw(state, nation):
        return {}
    prompt = _buy_prompt(state, nation)
    return {prompt.who: prompt}


# -- deciding ----------------------------------------------------------------------


def decide_buy(state: GameState, command: BuyTradeCards, by_default: bool = False) -> list[Event]:
    if state.phase != PHASE:
        raise Rejection("cards are bought from stack 9 only in phase 6, straight after your own draw", "§27.51")
    nation = acting_nation(state, command.player_id)
    who = current(state)
    if who != nation or _must_draw(state, nation):
        waiting = f"; it is {who}'s turn to draw or buy" if who else ""
        later = who is not None and nation in draw_order(state) and (_must_draw(state, nation) or _may_buy(state, nation))
        raise (NotYourTurn if later else Rejection)(f"you may buy only straight after your own draw{waiting}", "§27.51")
    deck = parts_of(state).deck
    most = most_affordable(state, nation)
    number = purchase_number(state, nation)
    if command.count < 0 or command.count > most:
        raise Rejection(
            f"you can buy at most {most} (treasury {state.nations[nation].treasury}, {price(state)} each; "
            f"{len(_purchase_stack(state, nation))} cards left in {deck.pile} {number})",
            deck.buy_rule,
        )
    data: dict[str, Any] = {
        "nation": nation,
        "count": command.count,
        "cards": list(_purchase_stack(state, nation)[: command.count]),
        "paid": command.count * price(state),
    }
    if deck.buys_own_pile:
        data["stack"] = number  # NT-5: the buyer's own pile, recorded
    if by_default:
        data["by_default"] = True
    cites = deck.buy_cites
    if deck.buys_own_pile and draw_count(state, nation) == 0:
        cites += ("Q-NT3",)
    return [Event("TradeCardsBought", data, cites)]


def defaults(state: GameState, prompt: Prompt) -> list[Event]:
    return decide_buy(state, BuyTradeCards(prompt.player_id, 0), True)


# -- resolving ---------------------------------------------------------------------


def _draw(state: GameState, nation: str) -> Event:
    reach = range(1, draw_count(state, nation) + 1)
    numbers = [n for n in reach if state.stacks.get(n)]
    cards = [state.stacks[n][0] for n in numbers]
    skipped = [n for n in reach if n not in numbers]
    data = {"nation": nation, "cities": state.cities_on_board(nation), "stacks": numbers, "cards": cards, "skipped": skipped}
    cites = parts_of(state).deck.draw_cites
    if parts_of(state).pieces.towns:
        data["towns"] = state.towns_on_board(nation)
        cites += ("SC-8", "Q-SC5")
    return Event("TradeCardsDrawn", data, cites)


def settle(state: GameState, draws: Draws) -> list[Event]:
    if state.step == "":
        if not state.stacks:
            return [set_up_money(state, draws) if parts_of(state).deck.calamities_apart else set_up_stacks(state, draws)]
        order = draw_order(state)
        return [Event("TradeCardDrawBegan", {"order": order}, ("seed 001: 6A", "Q-S3"))]
    if state.step == "draw":
        nation = current(state)
        if nation is None:
            return [phase_ended(PHASE, ("seed 001: 6",))]
        if _must_draw(state, nation):
            return [_draw(state, nation)]
        return []
    return []


# -- telling -----------------------------------------------------------------------


def sees_cards(viewer: str, nation: str) -> bool:
    return viewer in ("moderator", "auditor") or viewer == f"player:{nation.lower()}"


def _plural(state: GameState, count: int) -> str:
    return f"{count} {parts_of(state).deck.card}" + ("" if count == 1 else "s")


def _cards_seen(state: GameState, viewer: str, nation: str, cards: list[str]) -> str:
    """The cards as ``viewer`` may know them: all of it for the owner; a money card's type for the others (Q-NT1)."""
    if sees_cards(viewer, nation):
        return f" ({', '.join(cards)})"
    seen = [parts_of(state).deck.seen_by_others(c) for c in cards]
    if seen and all(s is not None for s in seen):
        return f" ({', '.join(s for s in seen if s is not None)})"
    return ""


def _tell_set_up(state: GameState, event: Event, viewer: str) -> str:
    sizes = ", ".join(f"{n}: {len(c)}" for n, c in sorted(stacks_from(event.data["stacks"]).items()))
    return f"The trade-card stacks were shuffled and set up (cards per stack {sizes})."


def _tell_drawn(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    text = f"{d['nation']} drew {_plural(state, len(d['cards']))}" + _cards_seen(state, viewer, d["nation"], d["cards"])
    if d["skipped"]:
        text += f"; empty {parts_of(state).deck.pile}s skipped: {', '.join(str(n) for n in d['skipped'])}"
    return text + "."


def _tell_bought(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    kind = parts_of(state).deck.card + "s"
    if not d["count"]:
        return f"{d['nation']} bought no {kind}." if not d.get("by_default") else f"{d['nation']} bought no {kind} ({defaulted(d)})."
    where = f"pile {d['stack']}" if "stack" in d else f"stack {ruleset_of(state).purchase_stack}"
    text = f"{d['nation']} bought {_plural(state, d['count'])} from {where} for {d['paid']} treasury"
    return text + _cards_seen(state, viewer, d["nation"], d["cards"]) + "."


RULES = PhaseRules(
    name=PHASE,
    apply={
        "StacksSetUp": apply_stacks_set_up,
        "MoneyPilesSetUp": apply_money_set_up,
        "TradeCardDrawBegan": apply_drawing_begun,
        "TradeCardsDrawn": apply_drawn,
        "TradeCardsBought": apply_bought,
    },
    decide={BuyTradeCards: decide_buy},
    pending=pending,
    defaults=defaults,
    settle=settle,
    inputs={
        "TradeCardsBought": lambda s, d: BuyTradeCards(s.nations[d["nation"]].player_id, d["count"]),
    },
    narrate={
        "StacksSetUp": _tell_set_up,
        "MoneyPilesSetUp": lambda s, e, v: (
            "The money piles and the calamity pile were shuffled (cards per pile "
            + ", ".join(f"{n}: {len(c)}" for n, c in sorted(stacks_from(e.data["stacks"]).items()))
            + f"; {len(e.data['calamities'])} calamities)."
        ),
        "TradeCardDrawBegan": lambda s, e, v: (
            parts_of(s).deck.title + " cards are drawn in this order: " + ", ".join(e.data["order"]) + "."
        ),
        "TradeCardsDrawn": _tell_drawn,
        "TradeCardsBought": _tell_bought,
    },
)

"""Phase 12a: civilization cards bought with sets of commodities and treasury (§31; seed 003: 12).

Orders are secret and simultaneous: each player asked files one ADVANCE (or
ADVANCE NONE); when all are in, or the deadline passes, they are revealed
and each purchase is made in A.S.T. order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pbem.rules.board.commodities import (
    card_word,
    commodity_counts,
    commodity_kinds,
    mining_commodities,
    sets_value,
    spendable_counts,
)
from pbem.rules.board.ranking import in_ast_order
from pbem.rules.board.stacks import return_cards
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import acting_nation, defaulted
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.advances.bundles import affordable_bundles
from pbem.rules.phases.advances.payment import (
    MAX_CHOICES,
    PHASE,
    Payments,
    affordable,
    affords_a_card,
    auto_payment,
    credits,
    most_payable,
    owners,
    price,
    sees_hand,
    take_from_hand,
)
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of

BUY_CITES = ("seed 003: 12", "§31", "§28.51")
MINING_CITES = ("§28.53", "§32.261")


@dataclass(frozen=True)
class BuyAdvances:
    """ADVANCE: the civilization cards bought this turn and the payment.

    ``pay`` is (commodity, cards) pairs and ``treasury`` the tokens; with
    ``auto`` the engine chooses the payment (the least excess, then the least
    treasury, then the fewest cards)."""

    player_id: int
    cards: tuple[str, ...]
    pay: tuple[tuple[str, int], ...] = ()
    treasury: int = 0
    auto: bool = False


def asked_to_buy(state: GameState) -> list[str]:
    return [n for n in in_ast_order(state, state.nations) if affords_a_card(state, n)]


def order_on_file(state: GameState, nation: str) -> dict[str, Any] | None:
    """The order on file, kept in the state as plain tuples (snapshots hold only immutable data)."""
    filed = state.filed.get(f"advance:{nation}")
    if not filed:
        return None
    cards, pay, treasury = filed
    return {"cards": list(cards), "pay": dict(pay), "treasury": treasury}


def _cards_text(name: str, count: int) -> str:
    """'Ochre 4' for commodities; a money card, whose name ends in its value, is named once per card ('Ore 3, Ore 3')."""
    return ", ".join([name] * count) if name[-1:].isdigit() else f"{name} {count}"


def pay_text(pay: dict[str, int], treasury: int) -> str:
    parts = [_cards_text(n, c) for n, c in pay.items()]
    if treasury:
        parts.append(f"treasury {treasury}")
    return ", ".join(parts)


def order_line(cards: tuple[str, ...] | list[str], pay: dict[str, int], treasury: int) -> str:
    if not cards:
        return "ADVANCE NONE"
    text = "ADVANCE " + ", ".join(cards)
    paid = pay_text(pay, treasury)
    return text + (f" PAY {paid}" if paid else " PAY NOTHING")


def hand_text(state: GameState, nation: str) -> str:
    held = commodity_counts(state, nation)
    if not held:
        return f"no {card_word(state)} cards"
    known = commodity_kinds(state)
    if parts_of(state).deck.pays_face_values:
        aside = state.nations[nation].set_aside
        total = sum(known[n].set_value(c) for n, c in held.items())
        text = ", ".join(_cards_text(n, c) for n, c in held.items()) + f" (worth {total})"
        return text + (f"; set aside against the Famine, not to pay this turn: {', '.join(aside)}" if aside else "")
    return ", ".join(f"{n} ×{c} (worth {known[n].set_value(c)})" for n, c in held.items())


_ADVANCE_COMMODITIES = (
    "Civilization advances: name the cards you buy on ONE line and what you pay with, e.g. "
    "ADVANCE Pottery, Mysticism PAY Ochre 4, Hides 2, treasury 3 (a set of n identical cards is worth "
    "n² × face value; credits of cards you owned before this turn are deducted by themselves; no change "
    "is given; treasury only for what cards and credits leave). Leave out PAY and the server pays for "
    "you with the least waste. ADVANCE NONE buys nothing."
)
_ADVANCE_MONEY = (
    "Civilization advances: name the cards you buy on ONE line and the money cards you pay with, each by its "
    "type and value, e.g. ADVANCE Pottery, Mysticism PAY Research 13, Water 7, Water 7, treasury 3 (money cards "
    "pay their face values added up; credits of cards you owned before this turn are deducted by themselves; no "
    "change is given; treasury only for what cards and credits leave). Leave out PAY and the server pays for you "
    "with the least waste. ADVANCE NONE buys nothing."
)


def advance_prompt(state: GameState, nation: str) -> Prompt:
    """Ready-made orders for what the player may really do: several cards together first, then each alone.

    Every choice is a complete order with the engine's own payment for its
    total due, so a player (or a bot) may send any of them unchanged; the
    best purchase is also the template to edit."""
    n = state.nations[nation]
    can = affordable(state, nation)
    payments = Payments(state, nation)  # the hand's payments, listed once for every card and bundle
    together = affordable_bundles(state, nation, payments=payments)
    choices = [order_line(b.cards, b.pay, b.treasury) for b in together]
    for card in can:
        _, _, due = price(state, nation, (card,))
        paid = payments.choose(due)
        if paid is not None:
            choices.append(order_line((card,), paid[0], paid[1]))
    choices = choices[: MAX_CHOICES - 1] + ["ADVANCE NONE"]
    offers = []
    for card in can:
        cost, credit, due = price(state, nation, (card,))
        offers.append(f"{card} {cost}" + (f" − {credit} credit = {due}" if credit else ""))
    mining = mining_commodities(state, nation)
    situation = [
        f"Your {card_word(state)} cards: {hand_text(state, nation)}; treasury {n.treasury}.",
        f"You can afford (each alone): {'; '.join(offers)}.",
        *([f"Together you can afford: {'; '.join(b.price_text for b in together)}."] if together else []),
        f"Your civilization cards: {', '.join(n.civ_cards) or 'none'}.",
    ]
    if mining:
        situation.append("Mining: one Iron, Bronze, Silver, Gems or Gold set counts one card larger this turn.")
    return Prompt(
        who=nation.lower(),
        player_id=n.player_id,
        step="buy-advances",
        question=_ADVANCE_MONEY if parts_of(state).deck.pays_face_values else _ADVANCE_COMMODITIES,
        choices=tuple(choices),
        template=choices[0],
        default="nothing is bought",
        situation=tuple(situation),
        cites=BUY_CITES + ("§31.54", "§31.58"),
    )


def apply_ordered(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    order = (tuple(data["cards"]), tuple((card, n) for card, n in data["pay"].items()), data["treasury"])
    return replace(state, filed=state.filed.set(f"advance:{nation}", order))


def apply_revealed(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, step="buy")


def apply_bought(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    filed = state.filed.without(f"advance:{nation}").set(f"resolved:{nation}", (1,))
    state = replace(state, filed=filed)
    if not data["cards"]:
        return state
    n = state.nations[nation]
    hand, gone = take_from_hand(n.hand, data["pay"])
    n = replace(
        n,
        hand=hand,
        civ_cards=n.civ_cards + tuple(data["cards"]),
        treasury=n.treasury - data["treasury"],
        stock=n.stock + data["treasury"],
        mining_used_turn=state.turn if data.get("mining") else n.mining_used_turn,
    )
    return return_cards(state.with_nation(n), gone)


def apply_purchases_done(state: GameState, data: dict[str, Any]) -> GameState:
    filed = state.filed
    for key in [k for k in filed if k.startswith("resolved:")]:
        filed = filed.without(key)
    return replace(state, step="hand-limit", filed=filed)


def check_purchase(state: GameState, nation: str, command: BuyAdvances) -> dict[str, Any]:
    """The order's data (cards, payment, value), or a Rejection saying why it cannot be carried out."""
    rules = ruleset_of(state)
    n = state.nations[nation]
    cards = tuple(dict.fromkeys(command.cards))
    if len(cards) != len(command.cards):
        raise Rejection("each card can be bought once: a player owns one copy of a card at most", "§31.61")
    for card in cards:
        if card not in rules.civ_cards:
            raise Rejection(f"{card} is not a civilization card")
        if card in n.civ_cards:
            raise Rejection(f"you already own {card}; a player owns one copy of a card at most", "§31.61")
        prerequisite = rules.civ_cards[card].prerequisite
        if prerequisite and prerequisite not in n.civ_cards:
            raise Rejection(
                f"{card} needs {prerequisite}, owned before this turn (buying both in one turn is not allowed)", "§31"
            )
        if owners(state, card) >= rules.civ_card_copies:
            raise Rejection(f"{card} is sold out: all {rules.civ_card_copies} copies are owned", "§3.1C")
    cost, credit, due = price(state, nation, cards)
    mining = mining_commodities(state, nation)
    if command.auto:
        found = auto_payment(state, nation, due)
        if found is None:
            raise Rejection(
                f"{', '.join(cards)} cost {cost}, {credit} credit: {due} to pay, and all your cards and treasury "
                f"are worth {most_payable(state, nation)}", "§31"
            )
        pay, treasury = found
    else:
        pay, treasury = {}, command.treasury
        for name, count in command.pay:
            pay[name] = pay.get(name, 0) + count
        held = spendable_counts(state, nation)
        for name, count in pay.items():
            if name not in commodity_kinds(state):
                raise Rejection(f"{name}: only commodity cards pay for civilization cards, not calamities", "§31")
            if count < 1:
                raise Rejection(f"{name}: say how many cards (at least 1)")
            if held.get(name, 0) < count:
                aside = " (Water set aside against the Famine cannot pay this turn)" if name in state.nations[nation].set_aside else ""
                raise Rejection(f"you hold {held.get(name, 0)} {name}, not {count}{aside}", "NT-12" if aside else "§31")
        if treasury > n.treasury:
            raise Rejection(f"you have {n.treasury} tokens in treasury, not {treasury}", "§31")
    pay = {k: v for k, v in sorted(pay.items()) if v}
    value, boosted = sets_value(state, pay, mining)
    if value + treasury < due:
        raise Rejection(
            f"{', '.join(cards)} cost {cost} − {credit} credit = {due}; you offered {value} in cards"
            + (f" and {treasury} treasury" if treasury else "")
            + f" = {value + treasury}",
            "§31",
        )
    if treasury > max(0, due - value):
        raise Rejection(
            f"treasury may only pay what cards and credits leave: {max(0, due - value)}, not {treasury}", "§31"
        )
    data: dict[str, Any] = {
        "nation": nation,
        "cards": list(cards),
        "pay": pay,
        "treasury": treasury,
        "cost": cost,
        "credits": credits(state, nation, cards),
        "due": due,
        "value": value,
        "lost": value + treasury - due,
    }
    if boosted:
        data["mining"] = boosted
    return data


def decide_buy(state: GameState, command: BuyAdvances) -> list[Event]:
    nation = acting_nation(state, command.player_id)
    if state.phase != PHASE or state.step != "":
        raise Rejection("civilization cards are bought in phase 12, before its orders are carried out", "seed 003: 12")
    if nation not in asked_to_buy(state):
        raise Rejection("you cannot afford any civilization card this turn, so nothing is asked of you", "§31")
    if not command.cards:
        return [Event("AdvancesOrdered", {"nation": nation, "cards": [], "pay": {}, "treasury": 0}, ("seed 003: 12",))]
    data = check_purchase(state, nation, command)
    cites = BUY_CITES + (MINING_CITES if "mining" in data else ()) + (("§31.58",) if data["lost"] else ())
    return [Event("AdvancesOrdered", data, cites)]


def purchase_event(state: GameState, nation: str) -> Event:
    order = order_on_file(state, nation) or {"cards": []}
    if not order["cards"]:
        return Event("AdvancesBought", {"nation": nation, "cards": [], "pay": {}, "treasury": 0}, ("seed 003: 12",))
    command = BuyAdvances(
        state.nations[nation].player_id, tuple(order["cards"]), tuple(order["pay"].items()), order["treasury"]
    )
    try:
        data = check_purchase(state, nation, command)
    except Rejection as exc:  # only a card sold out by an earlier buyer in A.S.T. order
        why = {"nation": nation, "cards": [], "pay": {}, "treasury": 0, "void": order["cards"], "why": exc.message}
        return Event("AdvancesBought", why, ("§31.61", "§3.1C"))
    cites = BUY_CITES + (MINING_CITES if "mining" in data else ()) + (("§31.58",) if data["lost"] else ())
    return Event("AdvancesBought", data, cites)


def _purchase_text(d: dict[str, Any]) -> str:
    credit = sum(d["credits"].values())
    paid = pay_text(d["pay"], d["treasury"]) or "credits alone"
    text = (
        f"{', '.join(d['cards'])}: cost {d['cost']}, credits {credit}, to pay {d['due']}; paid with {paid} "
        f"(cards worth {d['value']}"
    )
    if d.get("mining"):
        text += f", Mining on {d['mining']}"
    text += ")"
    if d["lost"]:
        text += f"; {d['lost']} lost (no change is given)"
    return text


def tell_ordered(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    if d.get("by_default"):
        if d.get("kicked"):
            return f"{d['nation']} buys nothing ({defaulted(d)})."
        return f"{d['nation']} gave no civilization-card order by the deadline: it buys nothing."
    if not sees_hand(viewer, d["nation"]):
        return f"{d['nation']} has given its civilization-card order."
    if not d["cards"]:
        return f"{d['nation']} orders: buy no civilization card."
    return f"{d['nation']} orders {_purchase_text(d)}."


def tell_revealed(state: GameState, event: Event, viewer: str) -> str:
    orders = {n: c for n, c in event.data["orders"].items() if c}
    if not orders:
        return "Civilization-card orders are in: nobody buys a card."
    return "Civilization-card orders are in: " + "; ".join(f"{n} buys {', '.join(c)}" for n, c in orders.items()) + "."


def tell_bought(state: GameState, event: Event, viewer: str) -> str | None:
    d = event.data
    if d.get("void"):
        return f"{d['nation']} could not buy {', '.join(d['void'])}: {d['why']}; nothing was spent."
    if not d["cards"]:
        return None
    if sees_hand(viewer, d["nation"]):
        return f"{d['nation']} bought {_purchase_text(d)}."
    spent = sum(d["pay"].values())
    treasury = f" and {d['treasury']} treasury" if d["treasury"] else ""
    return f"{d['nation']} bought {', '.join(d['cards'])}, spending {spent} trade cards{treasury}."


def command_of_order(state: GameState, d: dict[str, Any]) -> BuyAdvances:
    return BuyAdvances(state.nations[d["nation"]].player_id, tuple(d["cards"]), tuple(d["pay"].items()), d["treasury"])

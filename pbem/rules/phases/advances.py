"""Phase 12: civilization advances acquisition (§31; seed 003: 12; RULINGS §2 rows 12a, 12b).

12a. Every player who could buy at least one civilization card files one
     ADVANCE order (the cards, and what he pays with); a player who can
     afford nothing is not asked. Orders stay secret until everyone asked has
     filed or the deadline passes (default: buy nothing), then they are
     carried out in A.S.T.-ranking order.

     A purchase is paid with (§31, fact sheet §2.13):
     * commodity sets: n identical cards are worth n² × face value (§28.51);
       with Mining, once per turn one Iron/Bronze/Silver/Gems/Gold set counts
       one card larger, up to the printed maximum (§28.53, §32.261);
     * treasury tokens (back to stock), but never more than the cards and
       credits leave to pay (§31: treasury may not be deliberately overpaid);
     * credits of the civilization cards owned before this turn, each applying
       once to every card bought; credits always apply (§31.54, §31.55).
     No change is given: cards paying more than the price lose the excess
     (§31.58). Prerequisites must be owned before this turn (§31, fact sheet §2.13:
     "owned in a previous turn"; so Law and Democracy cannot be bought together). A player
     owns one copy of a card at most; at most `civ_card_copies` nations own a
     card (§3.1C, §31.61; a card sold out by an earlier buyer in A.S.T. order voids the
     later order, nothing being spent).

12b. Every player keeps at most `hand_limit` commodity cards (§31.71): one
     over it names his discards (DISCARD; default: the lowest face values).
     Spent and discarded cards go to `state.returned` for 13b (D-22). The
     number kept is public (D-8 either way).

Not played: the No-Trading variant's money cards (NT-13). Under
`variant-no-trading=on` this phase waits (nobody is asked, nothing happens).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import product
from typing import Any

from pbem.rules.board.commodities import (
    commodity_counts,
    commodity_kinds,
    mining_commodities,
    sets_value,
)
from pbem.rules.board.ranking import in_ast_order
from pbem.rules.board.stacks import return_cards
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.phase import PhaseRules, acting_nation, phase_ended
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import ruleset_of

PHASE = "civilization-advances"
MAX_CHOICES = 60
BUY_CITES = ("seed 003: 12", "§31", "§28.51")
LIMIT_CITES = ("seed 003: 12", "§31.71", "D-8")
MINING_CITES = ("§28.53", "§32.261")
_SEARCH_LIMIT = 4_000  # payment combinations tried when the engine chooses what to pay


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


@dataclass(frozen=True)
class DiscardCards:
    """DISCARD: the commodity cards a player over the hand limit gives up (§31.71)."""

    player_id: int
    cards: tuple[tuple[str, int], ...]


# -- the rules as numbers -------------------------------------------------------------------


def buyable(state: GameState, nation: str) -> list[str]:
    """Cards the nation may buy this turn: not owned, prerequisite owned before this turn, not sold out."""
    rules = ruleset_of(state)
    owned = state.nations[nation].civ_cards
    out = []
    for name, card in rules.civ_cards.items():
        if name in owned or (card.prerequisite and card.prerequisite not in owned):
            continue
        if _owners(state, name) >= rules.civ_card_copies:
            continue
        out.append(name)
    return sorted(out, key=lambda c: (rules.civ_cards[c].cost, c))


def _owners(state: GameState, card: str) -> int:
    return sum(1 for n in state.nations.values() if card in n.civ_cards)


def credits(state: GameState, nation: str, buying: tuple[str, ...]) -> dict[str, int]:
    """Card bought -> credit from every card owned before this turn, once each (§31.54)."""
    rules = ruleset_of(state)
    owned = [c for c in state.nations[nation].civ_cards if c in rules.civ_cards]
    return {card: sum(rules.credit(o, card) for o in owned) for card in buying}


def price(state: GameState, nation: str, buying: tuple[str, ...]) -> tuple[int, int, int]:
    """(printed cost, credits, still to pay) for a set of cards bought together."""
    rules = ruleset_of(state)
    cost = sum(rules.civ_cards[c].cost for c in buying)
    credit = sum(credits(state, nation, buying).values())
    return cost, credit, max(0, cost - credit)


def _most_payable(state: GameState, nation: str) -> int:
    value, _ = sets_value(state, commodity_counts(state, nation), mining_commodities(state, nation))
    return value + state.nations[nation].treasury


def affordable(state: GameState, nation: str) -> list[str]:
    """Cards the nation could pay for on its own (each alone)."""
    most = _most_payable(state, nation)
    return [c for c in buyable(state, nation) if price(state, nation, (c,))[2] <= most]


def auto_payment(state: GameState, nation: str, due: int) -> tuple[dict[str, int], int] | None:
    """The payment the engine chooses: least excess, then least treasury, then fewest cards (None: cannot pay)."""
    held = commodity_counts(state, nation)
    treasury = state.nations[nation].treasury
    mining = mining_commodities(state, nation)
    names = list(held)
    ranges = [range(held[n] + 1) for n in names]
    size = 1
    for r in ranges:
        size *= len(r)
    if size > _SEARCH_LIMIT:  # whole sets only: still a valid, if not always the thriftiest, payment
        ranges = [(0, held[n]) for n in names]  # type: ignore[misc]
        if 2 ** len(names) > _SEARCH_LIMIT:
            return _greedy_payment(state, held, treasury, mining, due)
    best: tuple[tuple[int, int, int, tuple[int, ...]], dict[str, int], int] | None = None
    for counts in product(*ranges):
        sets = {n: c for n, c in zip(names, counts) if c}
        value, _ = sets_value(state, sets, mining)
        from_treasury = max(0, due - value)
        if from_treasury > treasury:
            continue
        key = (max(0, value - due), from_treasury, sum(counts), tuple(counts))
        if best is None or key < best[0]:
            best = (key, sets, from_treasury)
    return None if best is None else (best[1], best[2])


def _greedy_payment(
    state: GameState, held: dict[str, int], treasury: int, mining: tuple[str, ...], due: int
) -> tuple[dict[str, int], int] | None:
    """For very varied hands: whole sets from the least valuable up until treasury can make up the rest."""
    known = commodity_kinds(state)
    sets: dict[str, int] = {}
    for name in sorted(held, key=lambda n: (known[n].set_value(held[n]), n)):
        if sets_value(state, sets, mining)[0] + treasury >= due:
            break
        sets[name] = held[name]
    value, _ = sets_value(state, sets, mining)
    if value + treasury < due:
        return None
    return dict(sorted(sets.items())), max(0, due - value)


# -- who is asked ----------------------------------------------------------------------------


def _no_trading(state: GameState) -> bool:
    return options_of(state).no_trading


def _asked(state: GameState) -> list[str]:
    return [n for n in in_ast_order(state, state.nations) if affordable(state, n)]


def _order_of(state: GameState, nation: str) -> dict[str, Any] | None:
    """The order on file, kept in the state as plain tuples (snapshots hold only immutable data)."""
    filed = state.filed.get(f"advance:{nation}")
    if not filed:
        return None
    cards, pay, treasury = filed
    return {"cards": list(cards), "pay": dict(pay), "treasury": treasury}


def over_limit(state: GameState, nation: str) -> int:
    """Commodity cards above the hand limit (§31.71)."""
    return max(0, sum(commodity_counts(state, nation).values()) - ruleset_of(state).hand_limit)


def _pay_text(pay: dict[str, int], treasury: int) -> str:
    parts = [f"{n} {c}" for n, c in pay.items()]
    if treasury:
        parts.append(f"treasury {treasury}")
    return ", ".join(parts)


def order_line(cards: tuple[str, ...] | list[str], pay: dict[str, int], treasury: int) -> str:
    if not cards:
        return "ADVANCE NONE"
    text = "ADVANCE " + ", ".join(cards)
    paid = _pay_text(pay, treasury)
    return text + (f" PAY {paid}" if paid else " PAY NOTHING")


def _hand_text(state: GameState, nation: str) -> str:
    held = commodity_counts(state, nation)
    if not held:
        return "no commodity cards"
    known = commodity_kinds(state)
    return ", ".join(f"{n} ×{c} (worth {known[n].set_value(c)})" for n, c in held.items())


def _advance_prompt(state: GameState, nation: str) -> Prompt:
    n = state.nations[nation]
    can = affordable(state, nation)
    choices: list[str] = []
    for card in can:
        _, _, due = price(state, nation, (card,))
        paid = auto_payment(state, nation, due)
        if paid is not None:
            choices.append(order_line((card,), paid[0], paid[1]))
    choices = choices[: MAX_CHOICES - 1] + ["ADVANCE NONE"]
    offers = []
    for card in can:
        cost, credit, due = price(state, nation, (card,))
        offers.append(f"{card} {cost}" + (f" − {credit} credit = {due}" if credit else ""))
    mining = mining_commodities(state, nation)
    situation = [
        f"Your commodity cards: {_hand_text(state, nation)}; treasury {n.treasury}.",
        f"You can afford (each alone): {'; '.join(offers)}.",
        f"Your civilization cards: {', '.join(n.civ_cards) or 'none'}.",
    ]
    if mining:
        situation.append("Mining: one Iron, Bronze, Silver, Gems or Gold set counts one card larger this turn.")
    return Prompt(
        who=nation.lower(),
        player_id=n.player_id,
        step="buy-advances",
        question=(
            "Civilization advances: name the cards you buy on ONE line and what you pay with, e.g. "
            "ADVANCE Pottery, Mysticism PAY Ochre 4, Hides 2, treasury 3 (a set of n identical cards is worth "
            "n² × face value; credits of cards you owned before this turn are deducted by themselves; no change "
            "is given; treasury only for what cards and credits leave). Leave out PAY and the server pays for "
            "you with the least waste. ADVANCE NONE buys nothing."
        ),
        choices=tuple(choices),
        template=choices[0],
        default="nothing is bought",
        situation=tuple(situation),
        cites=BUY_CITES + ("§31.54", "§31.58"),
    )


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
    return "DISCARD " + ", ".join(f"{n} {c}" for n, c in cards.items())


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


def _discard_prompt(state: GameState, nation: str) -> Prompt:
    n = state.nations[nation]
    limit = ruleset_of(state).hand_limit
    excess = over_limit(state, nation)
    lowest = default_discards(state, nation)
    return Prompt(
        who=nation.lower(),
        player_id=n.player_id,
        step="hand-limit",
        question=(
            f"Hand limit: you may keep {limit} commodity cards and hold {limit + excess}. Name the {excess} you "
            "give up, e.g. DISCARD Ochre 2, Hides 1. They go back under their stacks; how many you keep is public."
        ),
        choices=tuple(_discard_choices(state, nation)),
        template=_discard_line(lowest),
        default=f"the lowest face values go ({_pay_text(lowest, 0)})",
        situation=(f"Your commodity cards: {_hand_text(state, nation)}.",),
        cites=LIMIT_CITES,
    )


def pending(state: GameState) -> dict[str, Prompt]:
    if _no_trading(state):
        return {}
    if state.step == "":
        return {n.lower(): _advance_prompt(state, n) for n in _asked(state) if _order_of(state, n) is None}
    if state.step == "hand-limit":
        return {
            n.lower(): _discard_prompt(state, n)
            for n in in_ast_order(state, state.nations)
            if over_limit(state, n) and f"discard:{n}" not in state.filed
        }
    return {}


# -- folding ------------------------------------------------------------------------------------


def apply_ordered(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    order = (tuple(data["cards"]), tuple((card, n) for card, n in data["pay"].items()), data["treasury"])
    return replace(state, filed=state.filed.set(f"advance:{nation}", order))


def apply_revealed(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, step="buy")


def _take_from_hand(hand: tuple[str, ...], cards: dict[str, int]) -> tuple[tuple[str, ...], list[str]]:
    left = dict(cards)
    kept, gone = [], []
    for card in hand:
        if left.get(card, 0) > 0:
            left[card] -= 1
            gone.append(card)
        else:
            kept.append(card)
    return tuple(kept), gone


def apply_bought(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    filed = state.filed.without(f"advance:{nation}").set(f"resolved:{nation}", (1,))
    state = replace(state, filed=filed)
    if not data["cards"]:
        return state
    n = state.nations[nation]
    hand, gone = _take_from_hand(n.hand, data["pay"])
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


def apply_discarded(state: GameState, data: dict[str, Any]) -> GameState:
    nation = data["nation"]
    n = state.nations[nation]
    hand, gone = _take_from_hand(n.hand, data["cards"])
    state = state.with_nation(replace(n, hand=hand))
    state = replace(state, filed=state.filed.set(f"discard:{nation}", (1,)))
    return return_cards(state, gone)


def apply_limited(state: GameState, data: dict[str, Any]) -> GameState:
    for nation, kept in data["kept"].items():
        state = state.with_nation(replace(state.nations[nation], kept_hand_count=kept))
    return state


# -- deciding ------------------------------------------------------------------------------------


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
        if _owners(state, card) >= rules.civ_card_copies:
            raise Rejection(f"{card} is sold out: all {rules.civ_card_copies} copies are owned", "§3.1C")
    cost, credit, due = price(state, nation, cards)
    mining = mining_commodities(state, nation)
    if command.auto:
        found = auto_payment(state, nation, due)
        if found is None:
            raise Rejection(
                f"{', '.join(cards)} cost {cost}, {credit} credit: {due} to pay, and all your cards and treasury "
                f"are worth {_most_payable(state, nation)}", "§31"
            )
        pay, treasury = found
    else:
        pay, treasury = {}, command.treasury
        for name, count in command.pay:
            pay[name] = pay.get(name, 0) + count
        held = commodity_counts(state, nation)
        for name, count in pay.items():
            if name not in commodity_kinds(state):
                raise Rejection(f"{name}: only commodity cards pay for civilization cards, not calamities", "§31")
            if count < 1:
                raise Rejection(f"{name}: say how many cards (at least 1)")
            if held.get(name, 0) < count:
                raise Rejection(f"you hold {held.get(name, 0)} {name}, not {count}", "§31")
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
    if state.phase != PHASE or state.step != "" or _no_trading(state):
        raise Rejection("civilization cards are bought in phase 12, before its orders are carried out", "seed 003: 12")
    if nation not in _asked(state):
        raise Rejection("you cannot afford any civilization card this turn, so nothing is asked of you", "§31")
    if not command.cards:
        return [Event("AdvancesOrdered", {"nation": nation, "cards": [], "pay": {}, "treasury": 0}, ("seed 003: 12",))]
    data = check_purchase(state, nation, command)
    cites = BUY_CITES + (MINING_CITES if "mining" in data else ()) + (("§31.58",) if data["lost"] else ())
    return [Event("AdvancesOrdered", data, cites)]


def decide_discard(state: GameState, command: DiscardCards, by_default: bool = False) -> list[Event]:
    nation = acting_nation(state, command.player_id)
    if state.phase != PHASE or state.step != "hand-limit" or nation.lower() not in pending(state):
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
            f"discard exactly {excess} commodity cards to keep {ruleset_of(state).hand_limit}; you named {sum(cards.values())}",
            "§31.71",
        )
    data: dict[str, Any] = {"nation": nation, "cards": dict(sorted(cards.items()))}
    if by_default:
        data["by_default"] = True
    return [Event("CardsDiscarded", data, LIMIT_CITES)]


def defaults(state: GameState, prompt: Prompt) -> list[Event]:
    nation = acting_nation(state, prompt.player_id)
    if prompt.step == "buy-advances":
        return [Event("AdvancesOrdered", {"nation": nation, "cards": [], "pay": {}, "treasury": 0, "by_default": True})]
    cards = tuple(default_discards(state, nation).items())
    return decide_discard(state, DiscardCards(prompt.player_id, cards), True)


# -- resolving -----------------------------------------------------------------------------------------


def _resolve(state: GameState, nation: str) -> Event:
    order = _order_of(state, nation) or {"cards": []}
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


def settle(state: GameState, draws: Draws) -> list[Event]:
    if _no_trading(state):
        return []  # NT-13 money cards are not played by this engine: the game waits here
    if state.step == "":
        asked = _asked(state)
        if any(_order_of(state, n) is None for n in asked):
            return []
        orders = {n: _order_of(state, n)["cards"] for n in in_ast_order(state, state.nations) if _order_of(state, n)}  # type: ignore[index]
        return [Event("AdvanceOrdersRevealed", {"orders": orders, "asked": asked}, ("seed 003: 12", "§31"))]
    if state.step == "buy":
        for nation in in_ast_order(state, state.nations):
            if _order_of(state, nation) is not None:
                return [_resolve(state, nation)]
        return [Event("AdvancePurchasesDone", {}, ("seed 003: 12",))]
    if state.step == "hand-limit":
        if pending(state):
            return []
        kept = {n: len(state.nations[n].hand) for n in in_ast_order(state, state.nations)}
        return [Event("HandsLimited", {"kept": kept}, LIMIT_CITES), phase_ended(PHASE, ("seed 003: 12",))]
    return []


# -- telling ------------------------------------------------------------------------------------------


def _sees(viewer: str, nation: str) -> bool:
    return viewer in ("moderator", "auditor") or viewer == f"player:{nation.lower()}"


def _purchase_text(d: dict[str, Any]) -> str:
    credit = sum(d["credits"].values())
    paid = _pay_text(d["pay"], d["treasury"]) or "credits alone"
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


def _tell_ordered(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    if d.get("by_default"):
        return f"{d['nation']} gave no civilization-card order by the deadline: it buys nothing."
    if not _sees(viewer, d["nation"]):
        return f"{d['nation']} has given its civilization-card order."
    if not d["cards"]:
        return f"{d['nation']} orders: buy no civilization card."
    return f"{d['nation']} orders {_purchase_text(d)}."


def _tell_revealed(state: GameState, event: Event, viewer: str) -> str:
    orders = {n: c for n, c in event.data["orders"].items() if c}
    if not orders:
        return "Civilization-card orders are in: nobody buys a card."
    return "Civilization-card orders are in: " + "; ".join(f"{n} buys {', '.join(c)}" for n, c in orders.items()) + "."


def _tell_bought(state: GameState, event: Event, viewer: str) -> str | None:
    d = event.data
    if d.get("void"):
        return f"{d['nation']} could not buy {', '.join(d['void'])}: {d['why']}; nothing was spent."
    if not d["cards"]:
        return None
    if _sees(viewer, d["nation"]):
        return f"{d['nation']} bought {_purchase_text(d)}."
    spent = sum(d["pay"].values())
    treasury = f" and {d['treasury']} treasury" if d["treasury"] else ""
    return f"{d['nation']} bought {', '.join(d['cards'])}, spending {spent} trade cards{treasury}."


def _tell_discarded(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    how = " (deadline passed: the lowest values)" if d.get("by_default") else ""
    count = sum(d["cards"].values())
    if _sees(viewer, d["nation"]):
        return f"{d['nation']} discarded {count} cards to the hand limit{how}: {_pay_text(d['cards'], 0)}."
    return f"{d['nation']} discarded {count} cards to the hand limit{how}."


def _tell_limited(state: GameState, event: Event, viewer: str) -> str:
    return "Trade cards kept after the hand limit: " + ", ".join(f"{n} {k}" for n, k in event.data["kept"].items()) + "."


def _command_of_order(state: GameState, d: dict[str, Any]) -> BuyAdvances:
    return BuyAdvances(state.nations[d["nation"]].player_id, tuple(d["cards"]), tuple(d["pay"].items()), d["treasury"])


RULES = PhaseRules(
    name=PHASE,
    apply={
        "AdvancesOrdered": apply_ordered,
        "AdvanceOrdersRevealed": apply_revealed,
        "AdvancesBought": apply_bought,
        "AdvancePurchasesDone": apply_purchases_done,
        "CardsDiscarded": apply_discarded,
        "HandsLimited": apply_limited,
    },
    decide={BuyAdvances: decide_buy, DiscardCards: decide_discard},
    pending=pending,
    defaults=defaults,
    settle=settle,
    inputs={
        "AdvancesOrdered": _command_of_order,
        "CardsDiscarded": lambda s, d: DiscardCards(s.nations[d["nation"]].player_id, tuple(d["cards"].items())),
    },
    narrate={
        "AdvancesOrdered": _tell_ordered,
        "AdvanceOrdersRevealed": _tell_revealed,
        "AdvancesBought": _tell_bought,
        "AdvancePurchasesDone": lambda s, e, v: None,
        "CardsDiscarded": _tell_discarded,
        "HandsLimited": _tell_limited,
    },
)

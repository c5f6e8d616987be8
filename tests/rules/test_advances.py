"""Phase 12 (§31, seed 003: 12): ADVANCE/DISCARD orders, payment rules, prompts, defaults, narration, verify."""

from __future__ import annotations

import random
from dataclasses import replace
from itertools import product

import pytest

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.board.commodities import (
    commodity_kinds,
    mining_commodities,
    sets_value,
    spendable_counts,
)
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.rejection import Rejection
from pbem.rules.engine import describe_event
from pbem.rules.phases.advances.hand_limit import DiscardCards, default_discards
from pbem.rules.phases.advances.payment import (
    Payments,
    affordable,
    affords_a_card,
    auto_payment,
    buyable,
    price,
)
from pbem.rules.phases.advances.purchase import BuyAdvances, asked_to_buy
from pbem.rules.ruleset.rulebook import ruleset_of

from .casefile import position

DRAWS = Draws("advances")
PHASE = "civilization-advances"


def game(nations, **extra):
    case = {"players": 3, "phase": PHASE, "nations": nations}
    case.update(extra)
    state = position(case)
    return E.fold(state, E.resume(state, DRAWS))


def parse(text, state, player_id=1):
    (line,) = parse_orders(text, state, Actor(player_id=player_id)).lines
    return line


def decide(state, text, player_id=1):
    line = parse(text, state, player_id)
    assert line.error is None, line.error
    events = E.decide(state, line.command, DRAWS)
    return E.fold(state, events), events


E10 = {"Egypt": {"civ_cards": ["Mysticism"], "hand": ["Grain"] * 3 + ["Papyrus"] * 2 + ["Hides"], "treasury": 10},
       "Babylon": {"hand": ["Gold"] * 5}, "Crete": {}}


# -- the order language ------------------------------------------------------------------------------


def test_advance_is_read_forgivingly():
    state = game(E10)
    line = parse("adv music, drama and poetry pay 3 grain, papyrus x2, hides, t 10", state)
    assert line.command == BuyAdvances(1, ("Music", "Drama & Poetry"), (("Grain", 3), ("Papyrus", 2), ("Hides", 1)), 10)
    assert line.canonical == "ADVANCE Music, Drama & Poetry PAY Grain 3, Papyrus 2, Hides 1, treasury 10"
    assert parse("ADVANCE musc, drama", state).command.cards == ("Music", "Drama & Poetry")
    assert parse("ADVANCE Music", state).command == BuyAdvances(1, ("Music",), auto=True)
    assert parse("ADVANCE none", state).command == BuyAdvances(1, ())
    assert parse("ADVANCE Law PAY nothing", state).command == BuyAdvances(1, ("Law",))
    assert parse("DIS Ochre 2, Hides", state).command == DiscardCards(1, (("Ochre", 2), ("Hides", 1)))


def test_pay_alone_and_bad_lines_are_explained():
    state = game(E10)
    assert "ADVANCE line" in parse("PAY Grain 3", state).error
    assert parse("ADVANCE", state).error
    assert parse("ADVANCE Music PAY", state).error
    assert parse("ADVANCE NONE PAY Grain 3", state).error
    assert parse("ADVANCE Music PAY 3", state).error
    assert parse("ADVANCE Music PAY Famine 1", state).error  # a calamity is not a commodity


# -- the rules as numbers -------------------------------------------------------------------------------


def test_set_values_and_mining_once():
    state = game(E10)
    assert sets_value(state, {"Salt": 3}) == (27, None)
    assert sets_value(state, {"Grain": 3}) == (36, None)  # E3
    assert sets_value(state, {"Bronze": 3, "Gems": 2}, ("Bronze", "Gems")) == (96 + 32, "Bronze")  # E4
    assert sets_value(state, {"Iron": 3}, ("Iron",)) == (32, "Iron")  # E5
    assert sets_value(state, {"Gems": 2}, ("Gems",)) == (72, "Gems")  # E5
    assert sets_value(state, {"Gold": 5}, ("Gold",)) == (225, None)  # capped at the printed maximum
    assert sets_value(state, {"Ochre": 7}) == (49, None)


def test_credits_and_prerequisites():
    state = game({"Egypt": {"civ_cards": ["Drama & Poetry", "Architecture", "Literacy"]}, "Babylon": {}, "Crete": {}})
    assert price(state, "Egypt", ("Democracy",)) == (200, 45, 155)  # E11
    assert "Democracy" not in buyable(state, "Egypt")  # needs Law first
    state = game({"Egypt": {"civ_cards": ["Astronomy"]}, "Babylon": {}, "Crete": {}})
    assert price(state, "Egypt", ("Coinage", "Medicine")) == (250, 40, 210)  # E8


def test_sold_out_cards_cannot_be_bought():
    state = game(E10)
    copies = ruleset_of(state).civ_card_copies
    assert copies == 8
    # pretend 8 other owners: the card leaves the list of buyable cards
    for i in range(copies):
        state = state.with_nation(replace(state.nations["Egypt"], name=f"X{i}", player_id=100 + i, civ_cards=("Pottery",)))
    state = state.with_nation(replace(state.nations["Egypt"]))
    assert "Pottery" not in buyable(state, "Egypt")


def test_auto_payment_wastes_least():
    state = game(E10)
    assert auto_payment(state, "Egypt", 55) == ({"Grain": 3, "Hides": 1, "Papyrus": 2}, 10)
    assert auto_payment(state, "Egypt", 36) == ({"Grain": 3}, 0)
    assert auto_payment(state, "Egypt", 100) is None


def _thriftiest(state, nation: str, due: int):
    """The rule as written, tried on every part of the hand: least excess, then least treasury, then fewest cards,
    then the least counts in the hand's order."""
    held = spendable_counts(state, nation)
    treasury, mining = state.nations[nation].treasury, mining_commodities(state, nation)
    best = None
    for counts in product(*(range(n + 1) for n in held.values())):
        value = sets_value(state, dict(zip(held, counts)), mining)[0]
        if due - value > treasury:
            continue
        key = (max(0, value - due), max(0, due - value), sum(counts), counts)
        if best is None or key < best:
            best = key
    return None if best is None else ({n: c for n, c in zip(held, best[3]) if c}, best[1])


@pytest.mark.parametrize("mining", [False, True])
def test_payments_listed_once_choose_for_every_sum_what_the_rule_chooses(mining):
    """`Payments` answers each sum from one listing of the hand (a prompt asks for many sums of one hand)."""
    rng = random.Random(31 + mining)
    base = game(E10)
    kinds = sorted(commodity_kinds(base))
    for _ in range(25):
        hand = tuple(rng.choice(kinds[:8] if mining else kinds) for _ in range(rng.randint(0, 9)))
        owned = ("Mysticism", "Mining") if mining else ("Mysticism",)
        state = base.with_nation(replace(base.nations["Egypt"], hand=hand, civ_cards=owned, treasury=rng.randint(0, 25)))
        assert bool(mining_commodities(state, "Egypt")) == mining
        payments = Payments(state, "Egypt")
        for due in range(0, 90, 7):
            assert payments.choose(due) == auto_payment(state, "Egypt", due) == _thriftiest(state, "Egypt", due)


def test_a_nation_is_asked_to_buy_exactly_when_it_can_afford_a_card_alone():
    rng = random.Random(12)
    base = game(E10)
    kinds = sorted(commodity_kinds(base))
    seen = set()
    for _ in range(60):
        hand = tuple(rng.choice(kinds) for _ in range(rng.randint(0, 6)))
        owned = tuple(rng.sample(["Mysticism", "Pottery", "Mining", "Astronomy", "Coinage"], rng.randint(0, 3)))
        state = base.with_nation(replace(base.nations["Egypt"], hand=hand, civ_cards=owned, treasury=rng.randint(0, 12)))
        can = bool(affordable(state, "Egypt"))
        assert affords_a_card(state, "Egypt") == can
        assert ("Egypt" in asked_to_buy(state)) == can
        seen.add(can)
    assert seen == {True, False}


# -- prompts, refusals, defaults ---------------------------------------------------------------------------


def test_prompt_choices_are_complete_legal_orders():
    state = game(E10)
    prompts = E.pending(state)
    assert sorted(prompts) == ["babylon", "egypt"]
    prompt = prompts["egypt"]
    assert prompt.choices[-1] == "ADVANCE NONE"
    assert prompt.default == "nothing is bought"
    assert any("treasury 10" in s for s in prompt.situation)
    for choice in prompt.choices:
        line = parse(choice, state)
        assert line.error is None
        E.decide(state, line.command, DRAWS)  # never refused


def test_refusals():
    state = game(E10)
    with pytest.raises(Rejection, match="needs Law"):
        decide(state, "ADVANCE Democracy PAY Grain 3")
    with pytest.raises(Rejection, match="you hold 3 Grain, not 4"):
        decide(state, "ADVANCE Music PAY Grain 4")
    with pytest.raises(Rejection, match="offered"):
        decide(state, "ADVANCE Music PAY Grain 3")
    with pytest.raises(Rejection, match="treasury may only pay"):
        decide(state, "ADVANCE Pottery PAY Grain 3, treasury 10")
    with pytest.raises(Rejection, match="all your cards and treasury are worth"):
        decide(state, "ADVANCE Law")
    poor = game({"Egypt": {"hand": ["Salt"] * 3}, "Babylon": {"hand": ["Gold"] * 5}, "Crete": {}})
    with pytest.raises(Rejection, match="cannot afford"):
        decide(poor, "ADVANCE NONE")


def test_deadline_buys_nothing_and_discards_lowest():
    hand = ["Hides", "Ochre", "Ochre", "Iron", "Papyrus", "Salt", "Timber", "Grain", "Oil", "Cloth", "Gold"]
    state = game({"Egypt": {"hand": hand, "treasury": 20}, "Babylon": {}, "Crete": {}})
    assert E.pending(state)["egypt"].step == "buy-advances"
    events = E.decide(state, PassDeadline(), DRAWS)
    state = E.fold(state, events)
    ordered = next(e for e in events if e.type == "AdvancesOrdered")
    assert ordered.data["by_default"] and ordered.data["cards"] == []
    assert not E.is_input(ordered)
    prompt = E.pending(state)["egypt"]
    assert prompt.step == "hand-limit"
    assert default_discards(state, "Egypt") == {"Hides": 1, "Ochre": 2}
    for choice in prompt.choices:
        line = parse(choice, state)
        E.decide(state, line.command, DRAWS)
    events = E.decide(state, PassDeadline(), DRAWS)
    discarded = next(e for e in events if e.type == "CardsDiscarded")
    assert discarded.data == {"nation": "Egypt", "cards": {"Hides": 1, "Ochre": 2}, "by_default": True}
    assert describe_event(state, discarded, "player:babylon") == "Egypt discarded 3 cards to the hand limit (deadline passed: the lowest values)."


# -- verify and narration ------------------------------------------------------------------------------------


def test_verify_re_decides_every_order_of_the_phase():
    hand = ["Gold"] * 5 + ["Ochre"] * 6 + ["Hides"] * 4
    state = game({"Egypt": E10["Egypt"], "Babylon": {"hand": hand}, "Crete": {}})
    for text, pid in (("ADVANCE Music", 1), ("ADVANCE Law PAY Gold 5", 2), ("DISCARD Ochre 2", 2)):
        before = state
        state, events = decide(state, text, pid)
        order = events[0]
        assert E.is_input(order)
        assert E.decide(before, E.command_for(before, order), DRAWS) == events
    assert state.nations["Egypt"].civ_cards == ("Mysticism", "Music")
    assert state.nations["Babylon"].hand == ("Ochre",) * 4 + ("Hides",) * 4
    assert state.nations["Babylon"].kept_hand_count == 8


def test_orders_are_secret_and_payments_hidden():
    state = game(E10)
    after, events = decide(state, "ADVANCE Music PAY Grain 3, Papyrus 2, Hides, treasury 10")
    order = events[0]
    assert describe_event(state, order, "player:babylon") == "Egypt has given its civilization-card order."
    mine = describe_event(state, order, "player:egypt")
    assert "cost 60, credits 5, to pay 55" in mine and "Grain 3" in mine
    _, events = decide(after, "ADVANCE NONE", 2)
    bought = next(e for e in events if e.type == "AdvancesBought" and e.data["cards"])
    seen = describe_event(after, bought, "observer")
    assert seen == "Egypt bought Music, spending 6 trade cards and 10 treasury."
    assert "Grain" not in seen
    assert "cards worth 45" in describe_event(after, bought, "auditor")


def test_mining_bonus_used_once_per_turn():
    state = game({"Egypt": {"civ_cards": ["Engineering", "Mining"], "hand": ["Bronze"] * 3 + ["Gems"] * 2,
                             "treasury": 24}, "Babylon": {}, "Crete": {}})
    before = state
    _, events = decide(state, "ADVANCE Medicine PAY Bronze 3, treasury 24")
    at = next(i for i, e in enumerate(events) if e.type == "AdvancesBought")
    bought = events[at]
    state = E.fold(before, events[: at + 1])  # still turn 1, phase 12
    assert bought.data["mining"] == "Bronze" and bought.data["value"] == 96
    assert state.nations["Egypt"].mining_used_turn == state.turn
    from pbem.rules.phases.ast import score

    assert score(state, "Egypt")["trade_cards"] == 32  # the Gems are not enlarged again this turn


def test_no_trading_money_cards_are_read_written_and_paid_at_face_value():
    """NT-13: money cards pay their face values added up; the engine's payment wastes least; Water set aside cannot pay."""
    money = {"Egypt": {"hand": ["Research 13", "Titanium 10", "Water 7", "Water 7", "Ore 2"], "treasury": 20,
                       "set_aside": ["Water 7"]},
             "Babylon": {}, "Crete": {}}
    state = game(money, options={"variant-no-trading": "on"})
    line = parse("advance pottery pay research 13, water 7, ore 2 x1, treasury 1", state)
    assert line.command == BuyAdvances(1, ("Pottery",), (("Research 13", 1), ("Water 7", 1), ("Ore 2", 1)), 1)
    assert line.canonical == "ADVANCE Pottery PAY Research 13, Water 7, Ore 2, treasury 1"
    assert parse("ADVANCE Pottery PAY Water 7 x2", state).command.pay == (("Water 7", 2),)
    assert "type and value" in parse("ADVANCE Pottery PAY Water", state).error
    # one Water 7 is set aside: the cards can pay 13 + 10 + 7 + 2 = 32 at most, and treasury 20 the rest
    assert auto_payment(state, "Egypt", 45) == ({"Ore 2": 1, "Research 13": 1, "Titanium 10": 1, "Water 7": 1}, 13)
    assert auto_payment(state, "Egypt", 53) is None
    assert auto_payment(state, "Egypt", 30) == ({"Research 13": 1, "Titanium 10": 1, "Water 7": 1}, 0)
    assert auto_payment(state, "Egypt", 24) == ({"Research 13": 1, "Titanium 10": 1}, 1)
    with pytest.raises(Rejection, match="set aside against the Famine"):
        E.decide(state, BuyAdvances(1, ("Mysticism",), (("Water 7", 2),), 0), DRAWS)


def test_a_card_sold_out_by_an_earlier_buyer_voids_the_later_order():
    """8 copies (§3.1C): 7 are owned; Africa (A.S.T. rank 1) and Egypt (rank 9) both order the 8th."""
    owners = ["Italy", "Illyria", "Thrace", "Crete", "Asia", "Assyria", "Babylon"]
    nations = {"Africa": {"hand": ["Grain"] * 4}, **{n: {"civ_cards": ["Pottery"]} for n in owners},
               "Egypt": {"hand": ["Grain"] * 4}}
    case = {"players": 8, "phase": PHASE, "nations": nations}
    state = position(case)
    from pbem.rules.core.state import Player

    state = replace(state, players=state.players + (Player(9, "player9", "Egypt"),))
    state = E.fold(state, E.resume(state, DRAWS))
    assert sorted(E.pending(state)) == ["africa", "egypt"]
    state, _ = decide(state, "ADVANCE Pottery PAY Grain 4", 9)
    state, events = decide(state, "ADVANCE Pottery PAY Grain 4", 1)
    bought = [e for e in events if e.type == "AdvancesBought"]
    assert bought[0].data["nation"] == "Africa" and bought[0].data["cards"] == ["Pottery"]
    assert bought[1].data["nation"] == "Egypt" and bought[1].data["void"] == ["Pottery"]
    assert "nothing was spent" in describe_event(state, bought[1], "observer")


def test_an_order_on_file_survives_a_snapshot():
    """A snapshot may fall while one player's order waits for the others': the state must encode and decode."""
    from pbem.rules.core.codec import state_from_json, state_to_json
    from pbem.rules.invariants import broken_invariants

    state = game(E10)
    waiting, _ = decide(state, "ADVANCE Music PAY Grain 3, Papyrus 2, Hides, treasury 10")
    assert E.pending(waiting).keys() == {"babylon"}
    assert broken_invariants(waiting) == []
    again = state_from_json(state_to_json(waiting))
    assert again == waiting
    after, events = decide(again, "ADVANCE NONE", 2)
    assert after.nations["Egypt"].civ_cards == ("Mysticism", "Music")

"""Trade cards (§15.2, §27, 13b): stack set-up, BUY orders, prompts, defaults, D-8, narration, restacking, verify."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.board.stacks import cards_not_conserved, restack
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.frozen import FrozenMap
from pbem.rules.core.rejection import Rejection
from pbem.rules.engine import describe_event
from pbem.rules.phases.trade_cards import BuyTradeCards, set_up_stacks
from pbem.rules.ruleset.model import money_type
from pbem.rules.ruleset.rulebook import ruleset_of
from pbem.rules.view import view

from .casefile import position, within_phase

DRAWS = Draws("trade-cards")
THREE = {"Africa": {}, "Italy": {}, "Crete": {}}


def start(nations=None, areas=None, stacks=None, **extra):
    case = {"players": 3, "phase": "trade-card-acquisition", "nations": nations or THREE, "areas": areas or {}}
    if stacks is not None:
        case["stacks"] = stacks
    case.update(extra)
    return position(case)


def settled(state, draws=DRAWS):
    return E.fold(state, within_phase(state.phase, E.resume(state, draws)))


def pid(state, nation):
    return state.nations[nation].player_id


def parse(text, state, nation):
    (line,) = parse_orders(text, state, Actor(player_id=pid(state, nation))).lines
    return line


def decide(state, text, nation):
    events = within_phase(state.phase, E.decide(state, parse(text, state, nation).command, DRAWS))
    return E.fold(state, events), events


# -- stack set-up (§15.2, seed 001: 6 [IMPORTANT]) ------------------------------------------------


@pytest.mark.parametrize("players", [3, 5, 8])
def test_stacks_are_set_up_as_the_rules_say(players):
    nations = {n: {} for n in ruleset_of(start()).setup_for(players).nations_allowed[:players]}
    state = position({"players": players, "phase": "trade-card-acquisition", "nations": nations, "areas": {}})
    event = set_up_stacks(state, DRAWS)
    assert event.type == "StacksSetUp" and "§15.2" in event.cites
    stacks = {int(n): cards for n, cards in event.data["stacks"].items()}
    ruleset = ruleset_of(state)
    assert [len(stacks[n]) for n in range(1, 10)] == [14, 17, 19, 17, 15, 12, 12, 10, 10]
    n_players = len(state.players)
    for stack in ruleset.stacks:
        cards = stacks[stack.number]
        expected = Counter({c.name: c.copies for c in stack.commodities})
        for calamity in (stack.non_tradable_calamity, stack.tradable_calamity):
            if calamity:
                expected[calamity] += 1
        assert Counter(cards) == expected
        commodities = {c.name for c in stack.commodities}
        if stack.number == 1:
            assert set(cards) == commodities  # stack 1 has no calamity
            continue
        assert set(cards[:n_players]) <= commodities  # safe commodities on top
        if stack.non_tradable_calamity:
            assert cards[-1] == stack.non_tradable_calamity


def test_set_up_is_recorded_and_reproducible():
    state = start()
    assert set_up_stacks(state, Draws("x")) == set_up_stacks(state, Draws("x"))
    assert set_up_stacks(state, Draws("x")) != set_up_stacks(state, Draws("y"))
    after = E.fold(state, [set_up_stacks(state, Draws("x"))])
    assert sum(len(c) for c in after.stacks.values()) == 126


def test_stacks_already_set_up_are_not_set_up_again():
    events = E.resume(start(stacks={"1": ["Ochre"]}), DRAWS)
    assert "StacksSetUp" not in [e.type for e in events]


def test_no_trading_sets_up_money_piles_and_a_calamity_pile_then_draws_by_cities():
    """NT-1 to NT-4: nine shuffled money piles and the twelve calamities in one pile; one card per city."""
    state = settled(start(areas={"Carthago": {"city": "Africa"}, "Sidon": {"city": "Africa"}},
                          options={"variant-no-trading": "on"}))
    rules = ruleset_of(state)
    assert sorted(state.calamity_pile) == sorted(rules.calamities)
    africa = state.nations["Africa"].hand
    assert [money_type(c) for c in africa] == ["Ore", "Water"]
    assert sum(len(c) for c in state.stacks.values()) + len(africa) == 228
    assert state.returned == {} and not any(c in rules.calamities for c in africa)


# -- the order language and prompts --------------------------------------------------------------


def test_buy_is_read_forgivingly():
    state = start()
    assert parse("BUY 2", state, "Africa").command == BuyTradeCards(pid(state, "Africa"), 2)
    assert parse("bu 1", state, "Africa").error  # two letters are not enough
    assert parse("buy none", state, "Africa").command.count == 0
    assert parse("BUY 0", state, "Africa").canonical == "BUY 0"
    assert "how many" in parse("BUY", state, "Africa").error
    assert parse("BUY two", state, "Africa").error


def buyer(treasury=40, stack9=("Gold", "Ivory", "Gold", "Piracy"), cities=("Carthago",)):
    return settled(start(
        nations={"Africa": {"treasury": treasury, "stock": 5, "hand": ["Salt"]}, "Italy": {}, "Crete": {}},
        areas={a: {"city": "Africa"} for a in cities},
        stacks={"1": ["Ochre", "Hides"], "9": list(stack9)},
    ))


def test_buy_prompt_lists_every_affordable_count_and_shows_the_hand():
    state = buyer()
    (prompt,) = E.pending(state).values()
    assert prompt.who == "africa" and prompt.step == "buy-trade-cards"
    assert prompt.choices == ("BUY 0", "BUY 1", "BUY 2")
    assert prompt.template == "BUY 0" and "BUY 0" in prompt.default
    assert any("Ochre" in s and "Salt" in s for s in prompt.situation)
    for choice in prompt.choices:
        assert not parse(choice, state, "Africa").error


def test_buy_choices_are_capped_to_ten_lines_and_the_maximum():
    state = buyer(treasury=18 * 12, stack9=["Gold"] * 12)
    (prompt,) = E.pending(state).values()
    assert prompt.choices[:10] == tuple(f"BUY {n}" for n in range(10)) and prompt.choices[-1] == "BUY 12"
    assert len(prompt.choices) == 11


def test_buying_is_limited_by_the_cards_left_in_stack_9():
    state = buyer(treasury=100, stack9=["Gold", "Ivory"])
    with pytest.raises(Rejection, match="at most 2"):
        decide(state, "BUY 3", "Africa")


def test_nobody_who_cannot_afford_a_card_is_asked():
    state = buyer(treasury=17)
    assert E.pending(state) == {} and state.step == "ended"  # phase 6 ended without asking anyone


def test_buy_refused_outside_phase_6():
    state = replace(buyer(), phase="trade")
    with pytest.raises(Rejection, match="phase 6"):
        E.decide(state, BuyTradeCards(pid(state, "Africa"), 1), DRAWS)


def test_buy_pays_treasury_into_stock_and_takes_the_top_cards():
    state, events = decide(buyer(), "BUY 2", "Africa")
    africa = state.nations["Africa"]
    assert africa.treasury == 4 and africa.stock == 41
    assert africa.hand == ("Salt", "Ochre", "Gold", "Ivory")
    assert state.stacks[9] == ("Gold", "Piracy")
    assert events[0].type == "TradeCardsBought" and "PhaseEnded" in [e.type for e in events]


def test_deadline_buys_nothing():
    state = buyer()
    events = E.decide(state, PassDeadline(), DRAWS)
    bought = [e for e in events if e.type == "TradeCardsBought"]
    assert bought[0].data["count"] == 0 and bought[0].data["by_default"] is True


# -- verify and narration -------------------------------------------------------------------------


def test_verify_re_decides_the_purchase():
    before = buyer()
    _, events = decide(before, "BUY 1", "Africa")
    order = events[0]
    assert E.is_input(order)
    again = E.decide(before, E.command_for(before, order), DRAWS)
    assert within_phase(before.phase, again) == events


def test_card_names_are_told_only_to_the_owner_moderator_and_auditor():
    state = start(nations={"Africa": {"treasury": 40}, "Italy": {}, "Crete": {}},
                  areas={"Carthago": {"city": "Africa"}}, stacks={"1": ["Ochre"], "9": ["Gold", "Ivory"]})
    events = E.resume(state, DRAWS)
    drawn = next(e for e in events if e.type == "TradeCardsDrawn")
    assert describe_event(state, drawn, "player:africa") == "Africa drew 1 trade card (Ochre)."
    assert describe_event(state, drawn, "auditor") == "Africa drew 1 trade card (Ochre)."
    assert describe_event(state, drawn, "player:italy") == "Africa drew 1 trade card."
    assert describe_event(state, drawn, "observer") == "Africa drew 1 trade card."
    state = E.fold(state, events)
    _, bought = decide(state, "BUY 2", "Africa")
    assert "Gold, Ivory" in describe_event(state, bought[0], "moderator")
    assert describe_event(state, bought[0], "observer") == "Africa bought 2 trade cards from stack 9 for 36 treasury."


def test_set_up_narration_names_no_card():
    state = start()
    text = describe_event(state, set_up_stacks(state, DRAWS), "observer")
    assert "Ochre" not in text and "Famine" not in text


# -- D-8 public-hand-size --------------------------------------------------------------------------


def after_6a(value):
    return settled(start(areas={"Carthago": {"city": "Africa"}, "Thapsus": {"city": "Africa"}},
                         stacks={"1": ["Ochre"], "2": ["Iron"]}, options={"public-hand-size": value}))


def test_d8_seed_every_view_shows_the_card_count():
    state = after_6a("seed")
    assert view(state, "observer")["nations"]["africa"]["hand_count"] == 2
    assert view(state, "player:italy")["nations"]["africa"]["hand_count"] == 2
    assert "hand" not in view(state, "observer")["nations"]["africa"]
    assert view(state, "player:africa")["nations"]["africa"]["hand"] == ["Ochre", "Iron"]


def test_d8_1991_others_see_only_the_count_kept_after_12b():
    state = after_6a("1991")
    assert view(state, "observer")["nations"]["africa"]["hand_count"] is None
    assert view(state, "player:italy")["nations"]["africa"]["hand_count"] is None
    assert view(state, "player:africa")["nations"]["africa"]["hand_count"] == 2
    assert view(state, "moderator")["nations"]["africa"]["hand_count"] == 2
    kept = state.with_nation(replace(state.nations["Africa"], kept_hand_count=1))
    assert view(kept, "observer")["nations"]["africa"]["hand_count"] == 1


# -- 13b restacking (R-2.4, D-22, §29.7, §31.8) -----------------------------------------------------


def test_restack_puts_returned_cards_under_with_the_non_tradable_calamity_at_the_very_bottom():
    state = start(stacks={"3": ["Salt", "Timber"], "9": ["Gold"]})
    state = replace(state, returned=FrozenMap({3: ("Famine", "Salt", "Superstition", "Timber"), 9: ("Ivory",)}))
    (event,) = restack(state, DRAWS)
    assert event.type == "CardsRestacked" and "D-22" in event.cites
    after = E.fold(state, [event])
    three = after.stacks[3]
    assert three[:2] == ("Salt", "Timber")
    assert sorted(three[2:5]) == ["Salt", "Superstition", "Timber"]
    assert three[-1] == "Famine"
    assert after.stacks[9] == ("Gold", "Ivory")
    assert after.returned == FrozenMap()
    assert restack(after, DRAWS) == []


def test_restack_shuffles_with_the_draws_and_records_the_result():
    state = start(stacks={"1": []})
    cards = tuple(["Ochre"] * 3 + ["Hides"] * 3)
    state = replace(state, returned=FrozenMap({1: cards}))
    orders = {tuple(restack(state, Draws(str(i)))[0].data["stacks"]["1"]) for i in range(8)}
    assert len(orders) > 1
    (event,) = restack(state, Draws("0"))
    assert E.fold(state, [event]).stacks[1] == tuple(event.data["stacks"]["1"])


def test_restack_with_nothing_returned_does_nothing():
    assert restack(start(stacks={"1": ["Ochre"]}), DRAWS) == []
    state = replace(start(), returned=FrozenMap({2: ()}))
    assert restack(state, DRAWS) == []


def test_a_whole_deck_is_conserved_through_set_up_draws_purchases_and_restacking():
    nations = {"Africa": {"treasury": 40, "stock": 10}, "Italy": {}, "Crete": {"treasury": 18, "stock": 20}}
    areas = {a: {"city": "Africa"} for a in ("Carthago", "Thapsus", "Cyrene")} | {"Roma": {"city": "Italy"}}
    state = settled(start(nations=nations, areas=areas))
    assert state.stacks and cards_not_conserved(state) == []
    state, _ = decide(state, "BUY 1", "Crete")
    state, _ = decide(state, "BUY 2", "Africa")
    assert sum(len(n.hand) for n in state.nations.values()) == 1 + 3 + 2 + 1
    assert cards_not_conserved(state) == []
    # cards spent later in the turn go to `returned` and come back at 13b
    africa = state.nations["Africa"]
    spent = africa.hand[:2]
    state = state.with_nation(replace(africa, hand=africa.hand[2:]))
    returned = {}
    for card in spent:
        number = ruleset_of(state).stack_of(card).number
        returned[number] = returned.get(number, ()) + (card,)
    state = replace(state, returned=FrozenMap(returned))
    assert cards_not_conserved(state) == []
    state = E.fold(state, restack(state, DRAWS))
    assert cards_not_conserved(state) == [] and not state.returned
    broken = state.with_nation(replace(state.nations["Italy"], hand=("Gold",) + state.nations["Italy"].hand))
    assert "extra {'Gold': 1}" in cards_not_conserved(broken)[0]

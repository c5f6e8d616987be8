"""Phase 12 (§31, §31.54): the purchase prompt offers several cards bought together, each a complete legal order."""

from __future__ import annotations

from itertools import combinations

import pytest

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.draws import Draws
from pbem.rules.phases.advances import purchase
from pbem.rules.phases.advances.bundles import BEST_BUNDLES, affordable_bundles
from pbem.rules.phases.advances.payment import (
    MAX_CHOICES,
    auto_payment,
    buyable,
    most_payable,
    price,
)
from pbem.rules.ruleset.rulebook import ruleset_of

from .casefile import position

DRAWS = Draws("bundles")
PHASE = "civilization-advances"

# Egypt owns Mysticism (5 credit to Drama & Poetry, Music, Literacy, Architecture; 15 to Deism, Enlightenment);
# its cards are worth 64 + 8 + 1 = 73 and its treasury 77: 150 in all. Only Egypt can afford a card.
RICH = {"Egypt": {"civ_cards": ["Mysticism"], "hand": ["Grain"] * 4 + ["Papyrus"] * 2 + ["Hides"], "treasury": 77},
        "Babylon": {}, "Crete": {}}
NO_TRADING = {"Egypt": {"civ_cards": ["Mysticism"], "hand": ["Research 13", "Titanium 10", "Water 7", "Water 7", "Ore 2"],
                        "treasury": 60},
              "Babylon": {}, "Crete": {}}


def game(nations, **extra):
    case = {"players": 3, "phase": PHASE, "nations": nations}
    case.update(extra)
    state = position(case)
    return E.fold(state, E.resume(state, DRAWS))


def cards_of(choice: str) -> tuple[str, ...]:
    named = choice.removeprefix("ADVANCE ").split(" PAY ")[0]
    return () if named == "NONE" else tuple(named.split(", "))


def bought_by(state, choice: str, player_id: int = 1):
    """Parse the choice as a player's mail would be read, decide it, and return the AdvancesBought event."""
    (line,) = parse_orders(choice, state, Actor(player_id=player_id)).lines
    assert line.error is None, (choice, line.error)
    assert line.canonical == choice  # the choice is written as the server writes orders
    events = E.decide(state, line.command, DRAWS)
    return next(e for e in events if e.type == "AdvancesBought"), E.fold(state, events)


def test_the_prompt_offers_three_cards_and_two_together_before_each_alone():
    state = game(RICH)
    prompt = E.pending(state)["egypt"]
    assert prompt.choices[:4] == (
        "ADVANCE Cloth Making, Pottery, Drama & Poetry PAY Grain 4, Hides 1, Papyrus 2, treasury 72",
        "ADVANCE Cloth Making, Pottery, Music PAY Grain 4, Hides 1, Papyrus 2, treasury 72",
        "ADVANCE Astronomy, Deism PAY Grain 4, Hides 1, Papyrus 2, treasury 72",
        "ADVANCE Deism, Metalworking PAY Grain 4, Hides 1, Papyrus 2, treasury 72",
    )
    assert prompt.template == prompt.choices[0]  # the best purchase is the order to edit
    together = [c for c in prompt.choices if len(cards_of(c)) > 1]
    assert len(together) == BEST_BUNDLES
    assert prompt.choices[: len(together)] == tuple(together)  # several cards first, then each alone
    assert prompt.choices[len(together)] == "ADVANCE Cloth Making PAY Grain 3, Hides 1, Papyrus 2"
    assert prompt.choices[-1] == "ADVANCE NONE"
    assert (
        "Together you can afford: Cloth Making + Pottery + Drama & Poetry 150 − 5 credit = 145; "
        "Cloth Making + Pottery + Music 150 − 5 credit = 145; Astronomy + Deism 160 − 15 credit = 145; "
        "Deism + Metalworking 160 − 15 credit = 145; Cloth Making + Literacy 155 − 5 credit = 150; "
        "Pottery + Literacy 155 − 5 credit = 150; Drama & Poetry + Deism 140 − 20 credit = 120; "
        "Music + Deism 140 − 20 credit = 120; Drama & Poetry + Astronomy 140 − 5 credit = 135; "
        "Drama & Poetry + Metalworking 140 − 5 credit = 135; Music + Astronomy 140 − 5 credit = 135; "
        "Music + Metalworking 140 − 5 credit = 135."
    ) in prompt.situation
    assert any(s.startswith("You can afford (each alone): Cloth Making 45; Pottery 45;") for s in prompt.situation)


def test_every_choice_is_accepted_and_buys_all_its_cards():
    state = game(RICH)
    prompt = E.pending(state)["egypt"]
    for choice in prompt.choices:
        bought, after = bought_by(state, choice)
        named = cards_of(choice)
        assert bought.data["cards"] == list(named)
        if named:
            assert after.nations["Egypt"].civ_cards == ("Mysticism",) + named
            assert bought.data["due"] == price(state, "Egypt", named)[2]
    bought, _ = bought_by(state, prompt.choices[0])
    assert bought.data["cost"] == 150 and bought.data["due"] == 145 and bought.data["lost"] == 0
    assert bought.data["credits"] == {"Cloth Making": 0, "Pottery": 0, "Drama & Poetry": 5}


def test_listed_sets_are_affordable_maximal_and_ranked():
    state = game(RICH)
    budget = most_payable(state, "Egypt")
    assert budget == 150
    found = affordable_bundles(state, "Egypt")
    faces = ruleset_of(state).civ_cards
    for bundle in found:
        assert bundle.due == price(state, "Egypt", bundle.cards)[2] <= budget
        assert auto_payment(state, "Egypt", bundle.due) == (bundle.pay, bundle.treasury)
        for card in set(buyable(state, "Egypt")) - set(bundle.cards):  # no larger affordable set holds it
            assert price(state, "Egypt", bundle.cards + (card,))[2] > budget, (bundle.cards, card)
    keys = [(-len(b.cards), -sum(faces[c].cost for c in b.cards), b.due) for b in found]
    assert keys == sorted(keys)
    # no affordable set of four exists, and both sets of three are listed
    cards = buyable(state, "Egypt")
    assert all(price(state, "Egypt", s)[2] > budget for s in combinations(cards, 4))
    threes = [s for s in combinations(cards, 3) if price(state, "Egypt", s)[2] <= budget]
    assert sorted(b.cards for b in found if len(b.cards) == 3) == sorted(threes)
    assert affordable_bundles(state, "Egypt") == found  # the same answer every time


def test_a_nation_that_can_afford_every_card_is_offered_them_all_at_once():
    state = game({"Egypt": {"hand": ["Gold"] * 5, "treasury": 3000}, "Babylon": {}, "Crete": {}})
    everything = buyable(state, "Egypt")
    found = affordable_bundles(state, "Egypt")
    assert [b.cards for b in found] == [tuple(everything)]  # every smaller set is inside it, so not listed
    bought, _ = bought_by(state, E.pending(state)["egypt"].choices[0])
    assert bought.data["cards"] == everything


def test_a_nation_that_can_afford_one_card_only_gets_no_sets():
    state = game({"Egypt": {"hand": ["Grain"] * 4}, "Babylon": {}, "Crete": {}})  # 64: two cards cost 90 at least
    prompt = E.pending(state)["egypt"]
    assert affordable_bundles(state, "Egypt") == []
    assert prompt.choices == ("ADVANCE Cloth Making PAY Grain 4", "ADVANCE Pottery PAY Grain 4",
                              "ADVANCE Mysticism PAY Grain 4", "ADVANCE Drama & Poetry PAY Grain 4",
                              "ADVANCE Music PAY Grain 4", "ADVANCE NONE")
    assert prompt.template == "ADVANCE Cloth Making PAY Grain 4"
    assert not any(s.startswith("Together") for s in prompt.situation)


@pytest.mark.parametrize("limit", [MAX_CHOICES, 8])
def test_choices_never_exceed_the_limit(monkeypatch, limit):
    monkeypatch.setattr(purchase, "MAX_CHOICES", limit)
    state = game({"Egypt": {"hand": ["Gold"] * 5, "treasury": 90}, "Babylon": {}, "Crete": {}})
    prompt = E.pending(state)["egypt"]
    assert len(prompt.choices) <= limit
    assert prompt.choices[-1] == "ADVANCE NONE"
    singles = sum(1 for c in prompt.choices if len(cards_of(c)) == 1)
    if limit == MAX_CHOICES:
        assert len(prompt.choices) == BEST_BUNDLES + len(buyable(state, "Egypt")) + 1  # 315 buys any card alone
    else:
        assert len(prompt.choices) == 8 and singles == 0  # the sets come first


def test_no_trading_money_cards_buy_several_cards_together():
    """NT-13: money cards pay their face values added up (39 here) with treasury 60: two 45s fit, not three cards."""
    state = game(NO_TRADING, options={"variant-no-trading": "on"})
    prompt = E.pending(state)["egypt"]
    assert prompt.choices[0] == (
        "ADVANCE Cloth Making, Pottery PAY Ore 2, Research 13, Titanium 10, Water 7, Water 7, treasury 51"
    )
    assert [c for c in prompt.choices if len(cards_of(c)) > 1] == [prompt.choices[0]]
    assert "Together you can afford: Cloth Making + Pottery 90." in prompt.situation
    for choice in prompt.choices:
        bought, _ = bought_by(state, choice)
        assert bought.data["cards"] == list(cards_of(choice))
    richer = game({**NO_TRADING, "Egypt": {**NO_TRADING["Egypt"], "treasury": 120}},
                  options={"variant-no-trading": "on"})
    # 159 in all: of the three-card sets, Cloth Making + Pottery + Deism has the highest face value (170, 155 to pay)
    top = E.pending(richer)["egypt"].choices[0]
    assert top == "ADVANCE Cloth Making, Pottery, Deism PAY Ore 2, Research 13, Titanium 10, Water 7, Water 7, treasury 116"
    bought, after = bought_by(richer, top)
    assert bought.data["due"] == 155 and bought.data["value"] == 39 and bought.data["lost"] == 0
    assert after.nations["Egypt"].civ_cards == ("Mysticism", "Cloth Making", "Pottery", "Deism")

"""Phase 7, trade (seed 003: 7; §28; NT-6): orders, refusals, prompts, defaults, privacy, verify."""

from __future__ import annotations

import random

import pytest

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as E
from pbem.rules.core.codec import state_from_json, state_to_json
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws
from pbem.rules.core.rejection import Rejection
from pbem.rules.engine import describe_event
from pbem.rules.phases.trade import (
    AcceptOffer,
    FinishTrading,
    MakeOffer,
    WithdrawOffer,
    open_offers,
)

from .casefile import position, within_phase

DRAWS = Draws("trade")
HANDS = {
    "Egypt": {"hand": ["Salt", "Salt", "Superstition", "Ochre"]},
    "Babylon": {"hand": ["Grain", "Iron", "Hides", "Treachery", "Wine"]},
    "Crete": {"hand": ["Ochre", "Hides", "Iron"]},
}


def game(nations=None, **extra):
    case = {"players": 3, "phase": "trade", "nations": nations or HANDS}
    case.update(extra)
    state = position(case)
    return E.fold(state, within_phase("trade", E.resume(state, DRAWS)))


def parse(text, state, player_id=1):
    (line,) = parse_orders(text, state, Actor(player_id=player_id)).lines
    return line


def decide(state, text, player_id=1):
    line = parse(text, state, player_id)
    assert line.error is None, line.error
    events = within_phase("trade", E.decide(state, line.command, DRAWS))
    return E.fold(state, events), events


# -- the order language ------------------------------------------------------------------------


def test_offer_is_read_with_counts_hidden_cards_and_replaces():
    state = game()
    line = parse("offer babylon, crete: 2 salt + superstition for grain, iron + 2 more replaces 4", state)
    assert line.command == MakeOffer(1, ("Babylon", "Crete"), ("Salt", "Salt"), ("Superstition",), ("Grain", "Iron"), 4, 4)
    assert line.canonical == "OFFER Babylon, Crete: Salt 2 + Superstition FOR Grain, Iron + 2 more REPLACES 4"
    again = parse(line.canonical, state)
    assert again.command == line.command
    assert parse("OFF to Babylon: Salt 2, Ochre FOR Grain 3", state).command == MakeOffer(
        1, ("Babylon",), ("Salt", "Salt", "Ochre"), (), ("Grain", "Grain", "Grain"), 3)


def test_accept_withdraw_finish_are_read():
    state = game()
    assert parse("acc 3 giving Grain, Iron, Hides", state, 2).command == AcceptOffer(2, 3, ("Grain", "Iron", "Hides"))
    assert parse("ACCEPT 3: Grain 2, Hides", state, 2).canonical == "ACCEPT 3 GIVING Grain 2, Hides"
    assert parse("wit 3", state).command == WithdrawOffer(1, 3)
    assert parse("FINISH", state).command == FinishTrading(1)
    assert parse("Finish!", state).canonical == "FINISH"


@pytest.mark.parametrize(
    "text, error",
    [
        ("OFFER Babylon Salt 2 FOR Grain 3", "OFFER <nation>:"),
        ("OFFER Babylon: Salt 2 + Ochre", "FOR"),
        ("OFFER Babylon: Salt 2 + 1 more FOR Grain, Iron + 1 more", "name every card"),
        ("OFFER Babylon: Salt 2 + Ochre FOR Grain, Iron + some", "how many more"),
        ("OFFER Babylon: Salt 2 + Coinage FOR Grain, Iron + 1 more", "trade card"),
        ("ACCEPT three GIVING Grain", "ACCEPT <offer number>"),
        ("ACCEPT 3", "ACCEPT <offer number>"),
    ],
)
def test_unreadable_trade_orders_say_how_to_write_them(text, error):
    line = parse(text, game())
    assert line.error and error in line.error


# -- refusals --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, player, reason",
    [
        ("OFFER Egypt: Salt 2 + Ochre FOR Grain, Iron + 1 more", 1, "yourself"),
        ("OFFER Babylon: Salt 2 + Treachery FOR Grain, Iron + 1 more", 1, "do not hold"),
        ("OFFER Babylon: Salt 2 FOR Grain, Iron + 1 more", 1, "at least 3"),
        ("OFFER Babylon: Salt 2 + Ochre FOR Grain, Civil War + 1 more", 1, "Civil War cannot be traded"),
        ("ACCEPT 1 GIVING Grain, Iron, Hides", 2, "no open offer 1"),
        ("WITHDRAW 1", 1, "no open offer 1"),
        ("OFFER Babylon: Salt 2 + Ochre FOR Grain, Iron + 1 more REPLACES 9", 1, "no open offer 9"),
    ],
)
def test_refusals_give_the_reason(text, player, reason):
    state = game()
    with pytest.raises(Rejection, match=reason):
        decide(state, text, player)


def test_orders_outside_the_phase_are_refused():
    state = position({"players": 3, "phase": "calamity-selection", "nations": HANDS})
    with pytest.raises(Rejection, match="phase 7"):
        E.decide(state, FinishTrading(1), DRAWS)


# -- prompts ---------------------------------------------------------------------------------------


def test_prompt_shows_hand_offers_and_legal_choices():
    state = game()
    prompts = E.pending(state)
    assert sorted(prompts) == ["babylon", "crete", "egypt"]
    egypt = prompts["egypt"]
    assert egypt.step == "trade"
    assert "Your hand: Salt 2, Superstition, Ochre." in egypt.situation
    assert "FINISH" in egypt.choices and egypt.template.startswith("OFFER")
    assert "OFFER" in egypt.question and "ACCEPT" in egypt.question and "FINISH" in egypt.question
    for prompt in prompts.values():
        assert len(prompt.choices) <= 60
        for choice in prompt.choices:  # every choice is a complete legal order on its own
            E.decide(state, parse(choice, state, prompt.player_id).command, DRAWS)


def test_a_new_offer_changes_the_addressee_step_only_and_lists_an_accept_line():
    state = game()
    state, _ = decide(state, "OFFER Babylon: Salt 2 + Superstition FOR Grain, Iron + 2 more")
    prompts = E.pending(state)
    assert prompts["egypt"].step == "trade"  # the offerer is not mailed again
    assert prompts["crete"].step == "trade"
    babylon = prompts["babylon"]
    assert babylon.step == "trade:offer-1"
    assert any("Offer 1 to you from Egypt: gives Salt 2 + 1 more (3 cards) FOR Grain, Iron + 2 more" in s for s in babylon.situation)
    accept = [c for c in babylon.choices if c.startswith("ACCEPT 1")]
    assert accept == ["ACCEPT 1 GIVING Grain, Iron, Hides, Treachery"]
    assert babylon.template == accept[0]
    assert "Superstition" not in " ".join(babylon.situation)  # the hidden card stays hidden
    assert "WITHDRAW 1" in prompts["egypt"].choices


def test_bots_choosing_at_random_reach_trades_and_the_phase_ends():
    traded = 0
    for seed in range(30):
        rng = random.Random(seed)
        state = game()
        for _ in range(200):
            prompts = E.pending(state)
            if not prompts:
                break
            prompt = prompts[rng.choice(sorted(prompts))]
            state, events = decide(state, rng.choice(prompt.choices), prompt.player_id)
            traded += sum(1 for e in events if e.type == "TradeExecuted")
        assert state.step == "ended" or state.phase != "trade"
    assert traded > 0


# -- defaults, state, verify --------------------------------------------------------------------


def test_deadline_finishes_everyone_and_the_phase_ends():
    state, _ = decide(game(), "OFFER Babylon: Salt 2 + Superstition FOR Grain, Iron + 2 more")
    events = within_phase("trade", E.decide(state, PassDeadline(), DRAWS))
    finished = [e for e in events if e.type == "TradingFinished"]
    assert len(finished) == 3 and all(e.data["by_default"] for e in finished)
    assert not any(E.is_input(e) for e in finished)
    ends = [e for e in events if e.type == "PhaseEnded" and e.data["phase"] == "trade"]
    assert ends and "§28.41" in ends[0].cites
    assert all(p.default.startswith("you finish trading") for p in E.pending(state).values())


def test_finish_lapses_offers_to_and_from_the_player():
    state, _ = decide(game(), "OFFER Babylon, Crete: Salt 2 + Superstition FOR Grain, Iron + 1 more")
    state, _ = decide(state, "FINISH", 3)
    assert [o.to for o in open_offers(state)] == [("Babylon",)]
    state, _ = decide(state, "FINISH", 1)
    assert state.phase != "trade" or state.step == "ended"


def test_offers_survive_a_snapshot():
    state, _ = decide(game(), "OFFER Babylon, Crete: Salt 2 + Superstition FOR Grain, Iron + 1 more")
    again = state_from_json(state_to_json(state))
    assert open_offers(again) == open_offers(state)
    after, _ = decide(again, "ACCEPT 1 GIVING Grain, Iron, Hides", 2)
    assert after.nations["Babylon"].hand == ("Treachery", "Wine", "Salt", "Salt", "Superstition")


def test_calamity_givers_record_every_tradable_calamity_with_its_giver():
    state, _ = decide(game(), "OFFER Babylon: Salt 2 + Superstition FOR Grain, Iron + 2 more")
    state, _ = decide(state, "ACCEPT 1 GIVING Grain, Iron, Treachery, Wine", 2)
    assert state.calamity_givers == (("Babylon", "Superstition", "Egypt"), ("Egypt", "Treachery", "Babylon"))
    assert state.nations["Egypt"].hand == ("Ochre", "Grain", "Iron", "Treachery", "Wine")


def test_verify_re_decides_every_order_of_the_phase():
    state = game()
    for text, pid in (
        ("OFFER Babylon: Salt 2 + Superstition FOR Grain, Iron + 2 more", 1),
        ("OFFER Egypt: Grain, Iron + Hides FOR Salt 2 + 1 more REPLACES 1", 2),
        ("OFFER Crete: Grain, Hides + Wine FOR Ochre, Iron + 1 more", 2),
        ("WITHDRAW 3", 2),
        ("ACCEPT 2 GIVING Salt 2, Ochre", 1),
        ("FINISH", 3),
    ):
        before = state
        state, events = decide(state, text, pid)
        order = events[0]
        assert E.is_input(order)
        assert within_phase("trade", E.decide(before, E.command_for(before, order), DRAWS)) == events


# -- privacy in narration ---------------------------------------------------------------------------


def test_only_the_parties_see_an_offer_and_nobody_sees_hidden_cards():
    before = game()
    state, (offer,) = decide(before, "OFFER Babylon: Salt 2 + Superstition FOR Grain, Iron + 2 more")
    mine = describe_event(before, offer, "player:egypt")
    theirs = describe_event(before, offer, "player:babylon")
    assert "Superstition" in mine
    assert theirs.startswith("Offer 1: Egypt to Babylon: gives Salt 2 + 1 more FOR Grain, Iron + 2 more")
    assert "Superstition" not in theirs
    assert describe_event(before, offer, "player:crete") is None
    assert describe_event(before, offer, "observer") is None
    assert "Superstition" in describe_event(before, offer, "auditor")

    _, events = decide(state, "ACCEPT 1 GIVING Grain, Iron, Hides, Treachery", 2)
    accepted, executed = events[0], events[1]
    assert describe_event(state, accepted, "player:babylon") == "Babylon accepted offer 1, giving Grain, Iron, Hides, Treachery."
    assert describe_event(state, accepted, "player:egypt") == "Babylon accepted offer 1."
    assert describe_event(state, accepted, "player:crete") is None
    assert describe_event(state, executed, "player:egypt") == (
        "Trade with Babylon done (offer 1): you gave Salt 2, Superstition; you received Grain, Iron, Hides, Treachery.")
    assert describe_event(state, executed, "player:babylon") == (
        "Trade with Egypt done (offer 1): you gave Grain, Iron, Hides, Treachery; you received Salt 2, Superstition.")
    for viewer in ("player:crete", "observer"):
        told = describe_event(state, executed, viewer)
        assert told == "Egypt and Babylon traded."
    assert "Superstition" in describe_event(state, executed, "moderator")


def test_withdrawal_and_finish_are_told():
    state, _ = decide(game(), "OFFER Babylon: Salt 2 + Superstition FOR Grain, Iron + 2 more")
    _, (withdrawn,) = decide(state, "WITHDRAW 1")
    assert describe_event(state, withdrawn, "player:babylon") == "Egypt withdrew offer 1."
    assert describe_event(state, withdrawn, "player:crete") is None
    _, events = decide(state, "FINISH", 3)
    assert describe_event(state, events[0], "observer") == "Crete has finished trading."


def test_no_trading_skips_the_phase():
    state = position({"players": 3, "phase": "trade", "nations": HANDS, "options": {"variant-no-trading": "on"}})
    first = E.resume(state, DRAWS)[0]
    assert first.type == "PhaseEnded" and first.data["phase"] == "trade" and first.cites == ("NT-6",)


def test_a_player_who_cannot_trade_is_asked_only_to_finish_and_cannot_trade():
    nations = {"Egypt": HANDS["Egypt"], "Babylon": HANDS["Babylon"], "Crete": {"hand": ["Ochre", "Famine", "Hides"]}}
    state = game(nations)
    crete = E.pending(state)["crete"]
    assert crete.choices == ("FINISH",) and "cannot trade" in crete.question
    assert any(c.startswith("OFFER Crete:") for c in E.pending(state)["egypt"].choices)  # counts stay private
    with pytest.raises(Rejection, match="at least 3"):
        decide(state, "OFFER Egypt: Ochre, Hides FOR Salt 2 + 1 more", 3)
    state, _ = decide(state, "OFFER Crete: Salt 2 + Ochre FOR Ochre, Hides + 1 more")
    with pytest.raises(Rejection, match="Famine cannot be traded"):
        decide(state, "ACCEPT 1 GIVING Ochre, Hides, Famine", 3)
    state, events = decide(state, "FINISH", 2)  # Egypt alone can trade now: the phase ends without Crete
    assert any(e.type == "PhaseEnded" and e.data["phase"] == "trade" for e in events)


def test_nobody_with_cards_is_not_asked():
    nations = {"Egypt": HANDS["Egypt"], "Babylon": HANDS["Babylon"], "Crete": {"hand": []}}
    assert sorted(E.pending(game(nations))) == ["babylon", "egypt"]
    with pytest.raises(Rejection, match="Crete is not trading"):
        decide(game(nations), "OFFER Crete: Salt 2 + Ochre FOR Ochre, Hides + 1 more")


def test_the_first_offerer_is_told_his_offer_was_declined_and_what_replaced_it():
    """Issue 31: a counter-offer with REPLACES declines the offer it answers; its maker hears of it in his
    prompt (brought up to date) and in the narration, whether the counter-offer goes to him or elsewhere."""
    state, _ = decide(game(), "OFFER Babylon, Crete: Salt 2 + Superstition FOR Grain, Iron + 2 more")
    before = E.pending(state)["egypt"]
    countered, events = decide(state, "OFFER Egypt: Grain, Iron + Hides FOR Salt 2 + 1 more REPLACES 1", 2)
    egypt = E.pending(countered)["egypt"]
    assert egypt.step != before.step
    assert "Babylon declined your offer 1, making offer 2 in its place to you." in egypt.situation
    assert describe_event(state, events[0], "player:egypt").startswith("Babylon declined your offer 1, making offer 2")
    # Crete still has offer 1 and hears nothing of the counter-offer
    assert describe_event(state, events[0], "player:crete") is None
    elsewhere, events = decide(state, "OFFER Crete: Grain, Iron + Hides FOR Ochre, Iron + 1 more REPLACES 1", 2)
    assert "Babylon declined your offer 1, making offer 2 in its place." in E.pending(elsewhere)["egypt"].situation
    assert describe_event(state, events[0], "player:egypt") == "Babylon declined your offer 1, making offer 2 in its place."

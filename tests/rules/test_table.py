"""The table around the board (`pbem.rules.table`): KICK, observers, orders kept for one's turn, who reads what."""

from __future__ import annotations

import pytest

from pbem.rules import engine as E
from pbem.rules import table
from pbem.rules.core.commands import (
    SetMailPreference,
    AdmitObserver,
    AskToObserve,
    DismissObserver,
    Kick,
    Moderate,
    NoteAbsence,
    QueueOrders,
    ReplacePlayer,
    SetTimezone,
    TakeQueued,
)
from pbem.rules.core.draws import Draws, commitment
from pbem.rules.core.events import Event
from pbem.rules.core.rejection import NotYourTurn, Rejection
from pbem.rules.phases.movement.turns import EndMoves, MoveTokens
from pbem.rules.phases.setup import ChooseNation, PlaceStartToken
from pbem.rules.phases.trade_cards import BuyTradeCards

from .test_movement import game as movement_game
from .test_trade_cards import settled, start

SEED = "table-seed"
THREE = [(1, "Ann", None), (2, "Ben", None), (3, "Cy", None)]


def setup():
    draws = Draws(SEED)
    return E.fold(E.new_game("g"), E.create("g", THREE, {}, commitment(SEED), draws)), draws


def step(state, draws, command):
    return E.fold(state, E.decide(state, command, draws))


def asked(state) -> int:
    (prompt,) = E.pending(state).values()
    return prompt.player_id


# -- KICK ---------------------------------------------------------------------------


def test_a_kicked_player_is_never_waited_for_his_nation_plays_its_defaults_at_once():
    state, draws = setup()
    first, second = state.place_order[0], state.place_order[1]
    state = step(state, draws, Kick(second, "gone for good"))
    assert table.kicked(state) == {second: "gone for good"}
    state = step(state, draws, ChooseNation(first, "Crete"))
    state = step(state, draws, PlaceStartToken(first, "Knossos"))
    kicked = state.player(second)
    assert kicked.nation is not None  # his default nation and start area were played as the engine settled
    assert asked(state) == state.place_order[2]


def test_kick_when_his_turn_is_now_plays_it_and_unkick_gives_the_seat_back():
    state, draws = setup()
    first = state.place_order[0]
    events = E.decide(state, Kick(first, "asleep"), draws)
    assert events[0] == Event("PlayerKicked", {"player": first, "reason": "asleep"})
    assert {e.type for e in events[1:]} >= {"NationChosen"}  # the defaults, in the same batch
    told, at = [], E.fold(state, events[:1])
    for event in events[1:]:
        told.append(E.describe_event(at, event, "observer"))
        at = E.apply(at, event)
    assert any("(played by default: the player was taken out)" in t for t in told if t)
    assert not any("deadline" in t for t in told if t)
    state = E.fold(state, events)
    state = step(state, draws, Kick(first, "awake again", lift=True))
    assert table.kicked(state) == {}
    with pytest.raises(Rejection, match="was not kicked"):
        step(state, draws, Kick(first, "again", lift=True))


def test_a_replacement_takes_the_seat_free_of_kick_absence_and_kept_orders():
    state, draws = setup()
    third = state.place_order[2]
    state = step(state, draws, QueueOrders(third, ("NATION Crete",)))
    state = step(state, draws, Kick(third, "gone"))
    state = step(state, draws, ReplacePlayer(third, "Dora", "Cy left"))
    assert table.kicked(state) == {} and table.queued_orders(state, third) == ()
    assert state.player(third).name == "Dora" and table.seat_generation(state, third) == 1


# -- orders sent before one's turn --------------------------------------------------


def test_setup_out_of_turn_is_not_your_turn_yet_but_a_player_who_is_done_is_refused_plainly():
    state, draws = setup()
    first, second = state.place_order[0], state.place_order[1]
    with pytest.raises(NotYourTurn):
        step(state, draws, ChooseNation(second, "Crete"))
    state = step(state, draws, ChooseNation(first, "Crete"))
    state = step(state, draws, PlaceStartToken(first, "Knossos"))
    with pytest.raises(Rejection) as refused:
        step(state, draws, ChooseNation(first, "Italy"))
    assert not isinstance(refused.value, NotYourTurn)


def test_movement_out_of_turn_is_not_your_turn_yet_for_a_nation_still_to_move():
    state = movement_game(Thebes={"tokens": {"Egypt": 4}}, Knossos={"tokens": {"Crete": 2}})
    with pytest.raises(NotYourTurn):
        E.decide(state, MoveTokens(2, 1, "Knossos", "Phaestos"), Draws("m"))
    egypt_done = E.fold(state, E.decide(state, EndMoves(1), Draws("m")))
    with pytest.raises(Rejection) as refused:
        E.decide(egypt_done, MoveTokens(1, 1, "Thebes", "Memphis"), Draws("m"))
    assert not isinstance(refused.value, NotYourTurn)


def test_moves_sent_while_ships_are_built_wait_for_step_3b():
    state = movement_game("ships", Thebes={"tokens": {"Egypt": 4}}, Knossos={"tokens": {"Crete": 2}})
    with pytest.raises(NotYourTurn, match="3b"):
        E.decide(state, MoveTokens(1, 1, "Thebes", "Memphis"), Draws("m"))


def test_buying_cards_before_ones_draw_is_not_your_turn_yet():
    """§27.51: a nation buys straight after its own draw; Italy (two cities) draws after Africa (one)."""
    state = settled(start(
        nations={"Africa": {"treasury": 40}, "Italy": {"treasury": 40}, "Crete": {}},
        areas={"Carthago": {"city": "Africa"}, "Roma": {"city": "Italy"}, "Neapolis": {"city": "Italy"}},
        stacks={"1": ["Ochre", "Hides", "Ochre"], "2": ["Hides"], "9": ["Gold", "Ivory", "Gold"]},
    ))
    assert [p.who for p in E.pending(state).values()] == ["africa"]
    with pytest.raises(NotYourTurn):
        E.decide(state, BuyTradeCards(state.nations["Italy"].player_id, 1), Draws("t"))
    with pytest.raises(Rejection) as refused:  # Crete holds no city: it neither draws nor buys this turn
        E.decide(state, BuyTradeCards(state.nations["Crete"].player_id, 1), Draws("t"))
    assert not isinstance(refused.value, NotYourTurn)


def test_kept_orders_fold_per_phase_and_are_gone_when_the_phase_is_over():
    state, draws = setup()
    third = state.place_order[2]
    state = step(state, draws, QueueOrders(third, ("NATION Crete",)))
    state = step(state, draws, QueueOrders(third, ("PLACE Knossos",)))
    assert table.queued_orders(state, third) == ("NATION Crete", "PLACE Knossos")
    with pytest.raises(Rejection, match="not the orders kept"):
        step(state, draws, TakeQueued(third, ("NATION Crete",)))
    taken = step(state, draws, TakeQueued(third, ("NATION Crete", "PLACE Knossos")))
    assert table.queued_orders(taken, third) == ()
    moved_on = E.fold(state, [Event("PhaseBegan", {"phase": "tax-collection", "turn": 1})])
    assert table.queued_orders(moved_on, third) == ()


def test_kept_orders_are_read_only_by_their_sender_and_the_overseers():
    state, draws = setup()
    first = state.place_order[0]
    state = step(state, draws, ChooseNation(first, "Crete"))
    queued = E.decide(state, QueueOrders(first, ("MOVE 1 Knossos Phaestos",)), draws)[0]
    assert "MOVE 1 Knossos Phaestos" in E.describe_event(state, queued, "player:crete")
    assert "MOVE" in E.describe_event(state, queued, "moderator")
    assert E.describe_event(state, queued, "observer") is None
    assert E.describe_event(state, queued, "player:italy") is None


# -- observers ----------------------------------------------------------------------


def test_an_observer_asks_is_admitted_and_leaves_and_a_request_turned_down_is_not_told_to_the_table():
    state, draws = setup()
    with pytest.raises(Rejection, match="nobody numbered 7"):
        step(state, draws, AdmitObserver(7))
    asked_event = E.decide(state, AskToObserve(7, "  Dora   Smith "), draws)[0]
    assert asked_event.data == {"observer": 7, "name": "Dora Smith"}
    assert E.describe_event(state, asked_event, "observer") is None
    state = E.fold(state, [asked_event])
    assert table.observers(state) == {} and table.observers(state, "asked") == {7: "Dora Smith"}
    state = step(state, draws, AdmitObserver(7))
    assert table.observers(state) == {7: "Dora Smith"}
    with pytest.raises(Rejection, match="watches already"):
        step(state, draws, AdmitObserver(7))
    left = E.decide(state, DismissObserver(7, "asked to stop"), draws)[0]
    assert E.describe_event(state, left, "player:crete") == "Dora Smith no longer watches the game: asked to stop."
    state = E.fold(state, [left])
    assert table.observers(state) == {}
    state = step(state, draws, AskToObserve(8, "Eve"))
    denied = E.decide(state, DismissObserver(8, "private game"), draws)[0]
    assert E.describe_event(state, denied, "observer") is None
    assert "Eve will not watch the game" in E.describe_event(state, denied, "moderator")


def test_requests_waiting_for_the_moderator_are_bounded():
    state, draws = setup()
    for number in range(table.MAX_WAITING_OBSERVERS):
        state = step(state, draws, AskToObserve(number + 1, f"watcher {number}"))
    with pytest.raises(Rejection, match="wait for the moderator"):
        step(state, draws, AskToObserve(99, "one too many"))


def test_every_table_event_is_an_input_verify_can_decide_again():
    state, draws = setup()
    first = state.place_order[0]
    for command in (Kick(first, "r"), AskToObserve(3, "Dora"), QueueOrders(2, ("HALT",))):
        event = E.decide(state, command, draws)[0]
        assert E.is_input(event) and E.command_for(state, event) == command


def test_the_table_outlives_the_phase_but_kept_orders_do_not():
    """A phase ending clears the phase's own notes (``filed``), never the table: a seat handed over stays
    handed over (its old reply tokens stay dead), a time zone stays set, a pause stays in force."""
    state, draws = setup()
    first, third = state.place_order[0], state.place_order[2]
    for command in (
        SetTimezone(first, "Europe/Berlin"),
        NoteAbsence(first, "2026-12-01", "2026-12-05", "travel"),
        ReplacePlayer(third, "Dora", "Cy left"),
        Kick(third, "Dora has not started"),
        AskToObserve(5, "Eve"),
        Moderate("pause", "holidays"),
        QueueOrders(third, ("NATION Crete",)),
    ):
        state = step(state, draws, command)
    later = E.fold(state, [Event("PhaseEnded", {"phase": "setup"}), Event("PhaseBegan", {"phase": "tax-collection", "turn": 1})])
    assert table.timezone_of(later, first) == "Europe/Berlin"
    assert table.absences(later) == {first: ("2026-12-01", "2026-12-05", "travel")}
    assert table.seat_generation(later, third) == 1 and table.kicked(later) == {third: "Dora has not started"}
    assert table.observers(later, "asked") == {5: "Eve"} and table.paused_by_moderator(later) == "holidays"
    assert table.queued_orders(later, third) == ()


def test_mail_keeps_the_half_not_named_is_the_players_own_and_goes_with_his_seat():
    state, draws = setup()
    first = state.place_order[0]
    assert table.mail_preference(state, first) == ("every", True)
    state = step(state, draws, SetMailPreference(first, "digest", None))
    state = step(state, draws, SetMailPreference(first, None, False))
    assert table.mail_preference(state, first) == ("digest", False)
    event = E.decide(state, SetMailPreference(first, "every", None), draws)[0]
    assert E.is_input(event) and E.command_for(state, event) == SetMailPreference(first, "every", False)
    assert E.describe_event(state, event, "player:" + "x") is None  # nobody else's business
    with pytest.raises(Rejection):
        E.decide(state, SetMailPreference(first, "weekly", None), draws)
    state = step(state, draws, ReplacePlayer(first, "Dora", "left"))
    assert table.mail_preference(state, first) == ("every", True)

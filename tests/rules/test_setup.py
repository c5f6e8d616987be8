"""Setup (§15.4, §16): place cards, nation choice, start tokens, defaults."""

from __future__ import annotations

import pytest

from pbem.rules import engine as E
from pbem.rules.core.commands import PassDeadline, SetDeadline
from pbem.rules.core.draws import Draws, commitment
from pbem.rules.core.rejection import Rejection
from pbem.rules.phases.setup import ChooseNation, PlaceStartToken
from pbem.rules.ruleset.rulebook import ruleset_of

SEED = "test-seed"


def new(players, options=None, seed=SEED):
    draws = Draws(seed)
    events = E.create("g", players, options or {}, commitment(seed), draws)
    return E.fold(E.new_game("g"), events), draws, events


def step(state, draws, command):
    return E.fold(state, E.decide(state, command, draws))


THREE = [(1, "Ann", None), (2, "Ben", None), (3, "Cy", None)]


def test_place_cards_come_from_the_seed_and_are_recorded():
    """§15.4: the place-card order is a draw from the committed seed, recorded as an event."""
    s1, _, ev1 = new(THREE)
    s2, _, ev2 = new(THREE)
    assert s1.place_order == s2.place_order
    assert ev1[1].type == "PlaceCardsDealt" and ev1[1].cites == ("§15.4",)
    orders = {new(THREE, seed=f"seed-{i}")[0].place_order for i in range(30)}
    assert len(orders) > 3  # different seeds deal different orders
    assert all(sorted(o) == [1, 2, 3] for o in orders)


def test_only_the_place_card_holder_is_asked():
    """§15.4: players choose in place-card order; only the current one is pending."""
    state, draws, _ = new(THREE)
    pending = E.pending(state)
    first = state.player(state.place_order[0])
    assert list(pending) == [first.name.lower()]
    other = state.place_order[1]
    with pytest.raises(Rejection) as err:
        step(state, draws, ChooseNation(other, "Crete"))
    assert "not your turn" in str(err.value) and err.value.cite == "§15.4"


def test_three_players_may_not_choose_egypt():
    """§16: with 3 players only Italy, Africa, Illyria, Thrace and Crete play."""
    state, draws, _ = new(THREE)
    first = state.place_order[0]
    with pytest.raises(Rejection) as err:
        step(state, draws, ChooseNation(first, "Egypt"))
    assert err.value.cite == "§16"
    with pytest.raises(Rejection):
        new([(1, "Ann", "Egypt"), (2, "Ben", None), (3, "Cy", None)])


def test_a_taken_nation_is_refused_and_names_are_forgiving():
    state, draws, _ = new(THREE)
    a, b, _c = state.place_order
    state = step(state, draws, ChooseNation(a, "crete"))
    assert state.player(a).nation == "Crete"
    state = step(state, draws, PlaceStartToken(a, "knossos"))  # any case
    assert state.area("Knossos").tokens == {"Crete": 1}
    with pytest.raises(Rejection) as err:
        step(state, draws, ChooseNation(b, "Crete"))
    assert "already taken" in str(err.value)


def test_start_token_must_go_to_an_own_start_area():
    """§15.4: one token in one of the nation's start areas."""
    state, draws, _ = new(THREE)
    a = state.place_order[0]
    state = step(state, draws, ChooseNation(a, "Thrace"))
    with pytest.raises(Rejection) as err:
        step(state, draws, PlaceStartToken(a, "Knossos"))
    assert "not a start area of Thrace" in str(err.value)
    state = step(state, draws, PlaceStartToken(a, "Scythia"))
    nation = state.nations["Thrace"]
    tokens = ruleset_of(state).setup_for(3).tokens_per_player
    assert nation.stock == tokens - 1 == 46  # §16: 47 tokens each with 3 players


def test_assigned_nations_skip_the_choice():
    state, draws, _ = new([(1, "Ann", "Africa"), (2, "Ben", "Italy"), (3, "Cy", "Crete")])
    for pid in state.place_order:
        prompt = next(iter(E.pending(state).values()))
        assert prompt.step == "place-start-token" and prompt.player_id == pid
        area = prompt.choices[0].split(" ", 1)[1]
        state = step(state, draws, PlaceStartToken(pid, area))
    # Turn 1 then plays by itself: tax is skipped (no city, R-2.5), every lone start token
    # grows by one (§20) and the census ranks the ties by A.S.T. order; the game
    # waits in movement, where only players with a choice are asked.
    assert state.phase == "movement" and state.turn == 1
    assert all(p.step != "place-start-token" for p in E.pending(state).values())
    assert {n: state.tokens_on_board(n) for n in state.nations} == {"Africa": 2, "Italy": 2, "Crete": 2}
    assert {n: v.census for n, v in state.nations.items()} == {"Africa": 1, "Italy": 2, "Crete": 3}
    assert all(v.stock == 47 - 2 for v in state.nations.values())


def test_deadline_applies_the_documented_defaults():
    """A missed deadline: first free nation in A.S.T. order, its first start area."""
    state, draws, _ = new(THREE)
    state = step(state, draws, SetDeadline("2026-01-01 00:00 UTC"))
    assert state.deadline == "2026-01-01 00:00 UTC"
    first = state.player(state.place_order[0])
    events = E.decide(state, PassDeadline(), draws)
    assert [e.type for e in events] == ["DeadlinePassed", "NationChosen", "StartTokenPlaced"]
    assert all(e.data.get("by_default") for e in events[1:])
    state = E.fold(state, events)
    assert state.player(first.id).nation == "Africa"  # A.S.T. order 1
    assert state.deadline is None


def test_unplayable_sizes_are_refused():
    with pytest.raises(Rejection) as err:
        new([(1, "Solo", None)])
    assert err.value.cite == "§16"
    with pytest.raises(Rejection):
        new([(1, "Ann", None), (2, "ann", None)])

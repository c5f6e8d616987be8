"""The invariants check that a state can be snapshotted without writing its JSON: the verdict must be the same."""

from __future__ import annotations

import dataclasses

import pytest

from pbem.rules.core.codec import check_encodable, state_to_json
from pbem.rules.core.frozen import FrozenMap
from pbem.rules.core.state import GameState
from pbem.rules.invariants import broken_invariants

from .test_pending import _states


@pytest.mark.parametrize("odd", [{1, 2}, b"bytes", object(), FrozenMap({"k": frozenset()})])
def test_a_state_holding_what_json_cannot_hold_is_refused_by_both(odd):
    state = GameState(game_id="g", table=FrozenMap({"odd": odd}))
    with pytest.raises(TypeError):
        state_to_json(state)
    with pytest.raises(TypeError):
        check_encodable(state)


def test_every_state_of_a_game_passes_both_and_the_invariants_say_so():
    for state in _states(30):
        state_to_json(state)
        check_encodable(state)
        assert not [p for p in broken_invariants(state) if "snapshotted" in p]
    spoilt = _states(3)[-1]
    spoilt = GameState(**{**spoilt.__dict__, "table": spoilt.table.set("odd", {1})})
    assert any("cannot be snapshotted" in p for p in broken_invariants(spoilt))


@dataclasses.dataclass
class _Loose:
    """A record that is not frozen: what it holds may change after a check."""

    held: object


def test_a_map_checked_in_one_state_is_not_walked_again_yet_every_new_value_is_checked():
    state = _states(3)[-1]
    check_encodable(state)
    again = GameState(**{**state.__dict__, "table": state.table.set("odd", {1})})  # the other maps: the same
    with pytest.raises(TypeError):
        check_encodable(again)
    deep = GameState(**{**state.__dict__, "filed": FrozenMap({"k": (1, ("x", FrozenMap({"y": [2]})))})})
    with pytest.raises(TypeError):
        check_encodable(deep)


def test_a_record_that_is_not_frozen_is_checked_again_in_every_state():
    loose = _Loose(held=("fine",))
    state = GameState(game_id="g", table=FrozenMap({"loose": loose}))
    check_encodable(state)
    state_to_json(state)
    loose.held = {"changed"}  # the same map, the same record: now it cannot be written
    with pytest.raises(TypeError):
        state_to_json(state)
    with pytest.raises(TypeError):
        check_encodable(state)

"""The engine's immutable state: FrozenMap's order and ``replace``'s copies agree with the slow, obvious forms."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.rules.core.frozen import FrozenMap, replace
from pbem.rules.core.state import AreaState, GameState, NationState


@given(st.dictionaries(st.text(max_size=3), st.integers()), st.text(max_size=3), st.integers())
def test_set_and_without_keep_the_map_sorted_as_a_new_map_would_be(items, key, value):
    before = FrozenMap(items)
    after = before.set(key, value)
    assert list(after.items()) == list(FrozenMap({**items, key: value}).items())
    assert list(before.items()) == sorted(items.items())  # the old map is untouched
    dropped = after.without(key)
    expected = dict(items)
    expected.pop(key, None)
    assert list(dropped.items()) == sorted(expected.items())
    assert hash(dropped) == hash(FrozenMap(expected))


def test_replace_copies_a_record_as_dataclasses_replace_does():
    nation = NationState("Egypt", player_id=1, stock=40, hand=("Ochre",))
    state = GameState("g", nations=FrozenMap({"Egypt": nation}), areas=FrozenMap({"Memphis": AreaState()}))
    for record, changes in [(nation, {"stock": 39, "treasury": 1}), (state, {"version": 7, "phase": "tax"}),
                            (state, {})]:
        fast, slow = replace(record, **changes), dataclasses.replace(record, **changes)
        assert fast == slow and hash(fast) == hash(slow) and type(fast) is type(slow)
        assert fast is not record
    with pytest.raises(dataclasses.FrozenInstanceError):
        replace(nation, stock=1).stock = 2  # type: ignore[misc]


def test_replace_refuses_a_name_that_is_not_a_field():
    with pytest.raises(TypeError, match="no field 'stok'"):
        replace(NationState("Egypt", player_id=1, stock=40), stok=3)


def test_replace_leaves_a_class_with_checks_to_dataclasses():
    @dataclasses.dataclass(frozen=True)
    class Checked:
        n: int

        def __post_init__(self) -> None:
            if self.n < 0:
                raise ValueError("negative")

    assert replace(Checked(1), n=2) == Checked(2)
    with pytest.raises(ValueError, match="negative"):
        replace(Checked(1), n=-1)

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


def test_what_is_derived_from_a_map_is_worked_out_once_and_a_changed_map_works_it_out_afresh():
    calls = []

    def total(m):
        calls.append(m)
        return sum(m.values())

    first = FrozenMap({"a": 1, "b": 2})
    assert first.derived(total) == first.derived(total) == 3
    changed = first.set("a", 5)
    assert changed.derived(total) == 7 and first.derived(total) == 3
    assert first.without("b").derived(total) == 1
    assert len(calls) == 3


_AREA = st.builds(
    AreaState,
    tokens=st.dictionaries(st.sampled_from(["Egypt", "Crete", "Babylon"]), st.integers(1, 9)).map(FrozenMap),
    city=st.sampled_from([None, "Egypt", "Crete", "Babylon"]),
    ships=st.dictionaries(st.sampled_from(["Egypt", "Crete"]), st.integers(1, 4)).map(FrozenMap),
    towns=st.dictionaries(st.sampled_from(["Egypt", "Babylon"]), st.integers(1, 5)).map(FrozenMap),
)


@given(st.dictionaries(st.text(min_size=1, max_size=4), _AREA, max_size=12), st.text(max_size=4), _AREA)
def test_the_board_tallies_are_the_sums_over_the_areas_in_every_position(areas, changed, area):
    """What a state says is on the board, remembered with its map of areas, is what adding up the areas says,
    also after an area changes (a new map) and for a nation with nothing on the board."""
    state = GameState("g", areas=FrozenMap(areas))
    for current in (state, state.with_area(changed or "x", area)):
        for nation in ("Egypt", "Crete", "Babylon", "Nobody", None):
            board = current.areas.values()
            assert current.tokens_on_board(nation) == sum(a.tokens.get(nation, 0) for a in board)
            assert current.towns_on_board(nation) == sum(a.towns.get(nation, 0) for a in board)
            assert current.ships_on_board(nation) == sum(a.ships.get(nation, 0) for a in board)
            assert current.cities_on_board(nation) == sum(1 for a in board if a.city == nation)

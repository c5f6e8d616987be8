"""An immutable mapping for game state, and updated copies of frozen records.

State must be safe to share between replay snapshots and cheap to compare, so
every mapping inside it is a FrozenMap: hashable, ordered by key for stable
output, and updated by returning a new map.

Replaying a log makes an updated copy of the game state several times per
event, so both kinds of copy are on the hot path of every replay
(docs/performance.md): a map keeps its order when a key it has is set or a
key is dropped, without sorting again, and ``replace`` copies a frozen
dataclass's fields as they are instead of passing each through ``__init__``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


class FrozenMap(Mapping[K, V], Generic[K, V]):
    __slots__ = ("_data", "_hash", "_derived")

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        data = dict(items)
        self._data: dict[K, V] = {k: data[k] for k in sorted(data)}  # type: ignore[type-var]
        self._hash: int | None = None
        self._derived: dict[Callable[[FrozenMap[K, V]], Any], Any] | None = None

    def derived(self, work: Callable[[FrozenMap[K, V]], T]) -> T:
        """What ``work`` makes of this map, worked out at the first call and kept with the map.

        The map never changes, so neither does what follows from it alone: the
        board's tallies per nation are asked for thousands of times in one
        position, and an updated map (``set``, ``without``) starts with none.
        ``work`` must read nothing but the map and what it holds (all frozen).
        """
        derived = self._derived
        if derived is None:
            derived = self._derived = {}
        try:
            return derived[work]
        except KeyError:
            found = derived[work] = work(self)
            return found

    def __getitem__(self, key: K) -> V:
        return self._data[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    # The dict's own views and lookups: the Mapping mixins' versions run in
    # Python, and the rules call them hundreds of thousands of times a game.
    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get(self, key, default=None):  # type: ignore[override]
        return self._data.get(key, default)

    def keys(self):  # type: ignore[override]
        return self._data.keys()

    def values(self):  # type: ignore[override]
        return self._data.values()

    def items(self):  # type: ignore[override]
        return self._data.items()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    @classmethod
    def _sorted(cls, data: dict[K, V]) -> FrozenMap[K, V]:
        """A map of ``data``, whose keys are already in order (taken, not copied)."""
        out = cls.__new__(cls)
        out._data = data
        out._hash = None
        out._derived = None
        return out

    def set(self, key: K, value: V) -> FrozenMap[K, V]:
        data = dict(self._data)
        if key in data:
            data[key] = value
            return FrozenMap._sorted(data)
        data[key] = value
        return FrozenMap(data)

    def without(self, key: K) -> FrozenMap[K, V]:
        if key not in self._data:
            return self
        data = dict(self._data)
        del data[key]
        return FrozenMap._sorted(data)


_FIELDS: dict[type, frozenset[str] | None] = {}


def replace(record: T, /, **changes: Any) -> T:
    """``dataclasses.replace`` for the engine's frozen records, several times faster.

    A frozen dataclass without ``__post_init__`` holds exactly its fields in
    its ``__dict__``, already checked when it was made; the copy takes them as
    they are and sets the changed ones. A name that is not a field is refused
    as ``dataclasses.replace`` refuses it. Any other class goes through
    ``dataclasses.replace`` itself.
    """
    cls = type(record)
    names = _FIELDS.get(cls, False)
    if names is False:
        plain = (dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
                 and not hasattr(cls, "__post_init__") and hasattr(record, "__dict__")
                 and all(f.init for f in dataclasses.fields(cls)))
        names = frozenset(f.name for f in dataclasses.fields(cls)) if plain else None
        _FIELDS[cls] = names
    if names is None:
        return dataclasses.replace(record, **changes)
    if not names.issuperset(changes):
        unknown = sorted(set(changes) - names)
        raise TypeError(f"{cls.__name__} has no field {unknown[0]!r}")
    copy = object.__new__(cls)
    fields = copy.__dict__
    fields.update(record.__dict__)
    fields.update(changes)
    return copy

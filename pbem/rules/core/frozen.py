"""An immutable mapping for game state.

State must be safe to share between replay snapshots and cheap to compare, so
every mapping inside it is a FrozenMap: hashable, ordered by key for stable
output, and updated by returning a new map.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class FrozenMap(Mapping[K, V], Generic[K, V]):
    __slots__ = ("_data", "_hash")

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        data = dict(items)
        self._data: dict[K, V] = {k: data[k] for k in sorted(data)}  # type: ignore[type-var]
        self._hash: int | None = None

    def __getitem__(self, key: K) -> V:
        return self._data[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

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

    def set(self, key: K, value: V) -> FrozenMap[K, V]:
        data = dict(self._data)
        data[key] = value
        return FrozenMap(data)

    def without(self, key: K) -> FrozenMap[K, V]:
        data = dict(self._data)
        data.pop(key, None)
        return FrozenMap(data)

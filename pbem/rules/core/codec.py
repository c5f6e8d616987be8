"""Lossless JSON encoding of game state, for snapshots.

A snapshot must decode to a state equal to the one that was saved, so tuples,
FrozenMaps and the state dataclasses are tagged explicitly instead of relying
on JSON's looser types.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from pbem.rules.core.frozen import FrozenMap
from pbem.rules.core.state import AreaState, GameState, NationState, Player

_TYPES: dict[str, type] = {t.__name__: t for t in (GameState, Player, NationState, AreaState)}


#: The field names of each state record class met, in their order. A bot game checks after every step that its
#: state encodes (`invariants`), and asking `dataclasses` for a record's fields each time was most of the cost.
_RECORD_FIELDS: dict[type, tuple[str, ...]] = {}
_PLAIN = frozenset({str, int, float, bool, type(None)})


def _encode(value: Any) -> Any:
    cls = type(value)
    names = _RECORD_FIELDS.get(cls)
    if names is not None:
        return {"@": cls.__name__, **{name: _encode(getattr(value, name)) for name in names}}
    if cls in _PLAIN:
        return value
    if cls is tuple:
        return [_encode(v) for v in value]
    if cls is FrozenMap:
        return {"@": "map", "items": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        _RECORD_FIELDS[cls] = tuple(f.name for f in dataclasses.fields(value))
        body = {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"@": type(value).__name__, **body}
    if isinstance(value, FrozenMap):
        return {"@": "map", "items": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot encode {type(value).__name__} in game state")


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_decode(v) for v in value)
    if isinstance(value, dict):
        tag = value["@"]
        if tag == "map":
            return FrozenMap((_decode(k), _decode(v)) for k, v in value["items"])
        cls = _TYPES[tag]
        return cls(**{k: _decode(v) for k, v in value.items() if k != "@"})
    return value


def check_encodable(state: GameState) -> None:
    """Raise TypeError exactly when `state_to_json` would, without writing the JSON.

    What `_encode` returns holds only JSON's own types, with text keys, so
    writing it cannot fail; checking a state after every step need not pay
    for the text, nor walk again a map checked in an earlier state: one step
    changes a few maps and shares the rest (`_sealed`).
    """
    _sealed(state)


def _sealed(value: Any) -> bool:
    """Raise TypeError where `_encode` would; True when ``value`` encodes and nothing in it can ever change
    (plain values, tuples, maps and frozen records of them), so a map holding only such need not be walked
    again: the map remembers it (`FrozenMap.derived`). A record that is not frozen is walked every time."""
    cls = type(value)
    if cls in _PLAIN:
        return True
    if cls is FrozenMap:
        return value.derived(_map_sealed) or _map_sealed(value)
    if cls is tuple:
        return all([_sealed(v) for v in value])  # a list, not a generator: every item is checked
    names = _RECORD_FIELDS.get(cls)
    if names is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _RECORD_FIELDS[cls] = tuple(f.name for f in dataclasses.fields(value))
    if names is not None:
        inside = all([_sealed(getattr(value, name)) for name in names])
        return inside and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    if isinstance(value, FrozenMap):
        return _map_sealed(value)
    if isinstance(value, tuple):
        return all([_sealed(v) for v in value])
    if value is None or isinstance(value, (str, int, float, bool)):
        return True
    raise TypeError(f"cannot encode {type(value).__name__} in game state")


def _map_sealed(value: FrozenMap) -> bool:
    return all([_sealed(k) & _sealed(v) for k, v in value.items()])  # both checked, whatever the first says


def state_to_json(state: GameState) -> str:
    return json.dumps(_encode(state), sort_keys=True, separators=(",", ":"))


def state_from_json(text: str) -> GameState:
    state = _decode(json.loads(text))
    if not isinstance(state, GameState):
        raise ValueError("snapshot does not hold a game state")
    return state

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


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
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


def state_to_json(state: GameState) -> str:
    return json.dumps(_encode(state), sort_keys=True, separators=(",", ":"))


def state_from_json(text: str) -> GameState:
    state = _decode(json.loads(text))
    if not isinstance(state, GameState):
        raise ValueError("snapshot does not hold a game state")
    return state

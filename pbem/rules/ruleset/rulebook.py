"""The ruleset in force for one game: packaged data or a house map, plus options."""

from __future__ import annotations

from functools import lru_cache

from pbem.rules.core.frozen import FrozenMap
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.loader import RULESET_OPTIONS, load_ruleset
from pbem.rules.ruleset.model import Ruleset


@lru_cache(maxsize=32)
def _load(data_dir: str | None, overrides: tuple[tuple[str, str], ...]) -> Ruleset:
    return load_ruleset(data_dir, dict(overrides))


def ruleset_for_options(options: FrozenMap[str, str] | dict[str, str]) -> Ruleset:
    overrides = tuple(sorted((k, v) for k, v in options.items() if k in RULESET_OPTIONS))
    return _load(options.get("ruleset-data"), overrides)


def ruleset_of(state: GameState) -> Ruleset:
    return ruleset_for_options(state.options)

"""The ruleset in force for one game: packaged data or a house map, plus the board options."""

from __future__ import annotations

from functools import lru_cache

from pbem.rules.core.frozen import FrozenMap
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.loader import RULESET_OPTIONS, load_ruleset
from pbem.rules.ruleset.model import Ruleset
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.parts import Parts, parts_for


@lru_cache(maxsize=32)
def _load(data_dir: str | None, overrides: tuple[tuple[str, str], ...]) -> Ruleset:
    return load_ruleset(data_dir, dict(overrides))


def ruleset_for_options(options: FrozenMap[str, str] | dict[str, str]) -> Ruleset:
    """The ruleset for option text not yet checked (a game being created, `pbem rules --option`)."""
    overrides = tuple(sorted((k, v) for k, v in options.items() if k in RULESET_OPTIONS))
    return _load(options.get("ruleset-data"), overrides)


#: As `options_of`: the last typed options looked up and their ruleset, checked by identity.
_last: tuple[object, Ruleset] | None = None


def ruleset_of(state: GameState) -> Ruleset:
    """The ruleset of a game, from its typed options (checked when the game was created)."""
    global _last
    options = options_of(state)
    last = _last
    if last is not None and last[0] is options:
        return last[1]
    ruleset = _load(options.ruleset_data, options.board)
    _last = (options, ruleset)
    return ruleset


#: As `ruleset_of`: the last typed options looked up and the parts they chose, checked by identity.
_last_parts: tuple[object, Parts] | None = None


def parts_of(state: GameState) -> Parts:
    """What the game's variants chose, once: its deck, its pieces, its calamity procedure (`ruleset.parts`)."""
    global _last_parts
    options = options_of(state)
    last = _last_parts
    if last is not None and last[0] is options:
        return last[1]
    parts = parts_for(options)
    _last_parts = (options, parts)
    return parts

"""Game options, typed: the named deviations of RULINGS.md §7, the variants and the board choices.

A game records its options as KEY=VALUE text (in ``GameCreated``, and so in
``state.options``); every option has a default and a game records only what
differs. This module is the one place that knows them all: `validate_options`
refuses an unknown option or value when a game is created (a typo never
silently plays a different game), and `options_of` gives the rules a typed
`Options` to read (``options_of(state).city_defender_deferral == "1991"``),
so a variant plugs in as a field here read by the phases it changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any, Literal

from pbem.rules.core.frozen import FrozenMap
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.loader import RULESET_OPTIONS

SeedOr1991 = Literal["seed", "1991"]
_SEED_OR_1991 = ("seed", "1991")
_OFF_ON = ("off", "on")


class OptionError(ValueError):
    pass


def _whole_number_or_none(what: str) -> Callable[[str], int | None]:
    def parse(value: str) -> int | None:
        if value == "none":
            return None
        if not (value.isdigit() and int(value) >= 1):
            raise OptionError(what)
        return int(value)

    return parse


def _choice(key: str, values: tuple[str, ...], *, ruling: str) -> Any:
    """A field set by option ``key`` to one of ``values`` (the default first)."""
    return field(default=values[0], metadata={"key": key, "values": values, "ruling": ruling})


def _switch(key: str, *, ruling: str) -> Any:
    """A field set by option ``key`` to off (False, the default) or on (True)."""
    return field(default=False, metadata={"key": key, "values": _OFF_ON, "ruling": ruling})


def _number(key: str, default: int | None, what: str, *, ruling: str) -> Any:
    """A field set by option ``key`` to a whole number of at least 1, or none."""
    return field(default=default, metadata={"key": key, "parse": _whole_number_or_none(what), "ruling": ruling})


@dataclass(frozen=True)
class Options:
    """Every option of one game, as the rules read them."""

    # RULINGS.md §3: where the seeds and the 1991 rulebook differ (D-1 to D-10).
    beneficiary_rule: SeedOr1991 = _choice("beneficiary-rule", _SEED_OR_1991, ruling="D-1")
    tax_shortfall_payment: SeedOr1991 = _choice("tax-shortfall-payment", _SEED_OR_1991, ruling="D-2")
    city_defender_deferral: SeedOr1991 = _choice("city-defender-deferral", _SEED_OR_1991, ruling="D-3")
    city_capture_spoils: SeedOr1991 = _choice("city-capture-spoils", _SEED_OR_1991, ruling="D-4")
    pirate_city_attack: SeedOr1991 = _choice("pirate-city-attack", _SEED_OR_1991, ruling="D-5")
    support_reduction_order: SeedOr1991 = _choice("support-reduction-order", _SEED_OR_1991, ruling="D-6")
    zero_limit_city_ban: SeedOr1991 = _choice("zero-limit-city-ban", _SEED_OR_1991, ruling="D-7")
    public_hand_size: SeedOr1991 = _choice("public-hand-size", _SEED_OR_1991, ruling="D-8")
    post_calamity_surplus: SeedOr1991 = _choice("post-calamity-surplus", _SEED_OR_1991, ruling="D-9")
    slave_revolt_recovery: SeedOr1991 = _choice("slave-revolt-recovery", _SEED_OR_1991, ruling="D-10")
    # RULINGS.md §4: the variants.
    small_cities: bool = _switch("variant-small-cities", ruling="RULINGS.md §4.1")
    no_trading: bool = _switch("variant-no-trading", ruling="RULINGS.md §4.2")
    #: R-3.3, D-14: calamities one primary victim suffers in a turn (None: no limit; No-Trading's default).
    primary_calamity_limit: int | None = _number(
        "primary-calamity-limit", 2, "option primary-calamity-limit takes a whole number of at least 1, or none",
        ruling="R-3.3")
    #: §34: the time limit agreed before play, counted in turns (None: the game ends on the A.S.T. only).
    last_turn: int | None = _number(
        "last-turn", None, "option last-turn takes a whole number of at least 1 (the last turn played), or none",
        ruling="§34")
    # Not a rule of the game: what the engine does at a phase it cannot play
    # yet. `wait` stops there (the honest default); `skip` records the phase
    # as skipped and goes on, so the playable phases can run turn after turn.
    unplayable_phases: Literal["wait", "skip"] = _choice("unplayable-phases", ("wait", "skip"), ruling="engine")
    #: A house map: the folder of ruleset data files (docs/rules-data.md); None for the packaged 1991 board.
    ruleset_data: str | None = field(default=None, metadata={"key": "ruleset-data", "ruling": "docs/rules-data.md"})
    #: The board choices of the ruleset loader (`RULESET_OPTIONS`), as given: (key, value) pairs.
    board: tuple[tuple[str, str], ...] = ()


#: What each option decides, in a player's words (`pbem rules options`, HELP OPTIONS).
MEANINGS: dict[str, str] = {
    "beneficiary-rule": (
        "who is the beneficiary of a tax revolt or Civil War: most cities in stock (seed), or most "
        "unit points in stock (1991)"
    ),
    "tax-shortfall-payment": (
        "a player short of tax moves his whole stock to treasury (seed), or pays for whole cities "
        "only (1991)"
    ),
    "city-defender-deferral": (
        "a defender short of stock may have one attack of his own resolved first (seed), or all of "
        "them are resolved first (1991)"
    ),
    "city-capture-spoils": "the taker of a city may draw a card and pillage (seed), or must draw a card (1991)",
    "pirate-city-attack": "Barbarian survivors of an attack on a pirate city stay (seed), or are removed (1991)",
    "support-reduction-order": (
        "cities built this turn are reduced first (seed), or with cities gained this turn (1991)"
    ),
    "zero-limit-city-ban": "no city in an area of population limit 0 (seed), or any land area may hold one (1991)",
    "public-hand-size": (
        "everybody sees how many trade cards each player holds (seed), or only the count kept after "
        "phase 12 (1991)"
    ),
    "post-calamity-surplus": (
        "phase 11 removes surplus population before the support check (seed), or only checks "
        "support (1991)"
    ),
    "slave-revolt-recovery": (
        "Slave Revolt's tokens count again in phase 11 (seed), or after its support check (1991)"
    ),
    "variant-small-cities": "the Small Cities variant: towns on the board (seed 000)",
    "variant-no-trading": "the No-Trading variant: money cards, no trade, calamities by dice (seed 004)",
    "primary-calamity-limit": "calamities one primary victim suffers in a turn; none under No-Trading",
    "last-turn": (
        "the last turn played, the time limit of §34 agreed before play (none: the game ends on the "
        "A.S.T. only)"
    ),
    "ruleset-data": (
        "a folder of house-map data files instead of the packaged 1991 board (docs/rules-data.md)"
    ),
    "unplayable-phases": "what the engine does at a part of the game it cannot play: wait there, or skip it",
}


#: The board choices where the sources disagree (docs/rules-data.md).
BOARD_MEANINGS: dict[str, str] = {
    "open-sea": "which all-water areas are open sea, where ships need Astronomy",
    "western-extension": "the Western Extension board (and Iberia) for 6 to 8 players",
    "disputed-areas": "whose reading of the disputed area values (limits, city sites, coasts, flood plains)",
    "water-links": "every water link the sources give, or only the confirmed ones",
    "five-player-board": "which part of the board a five-player game leaves out",
    "babylon-late-iron": "Babylon's card points to enter the Late Iron Age",
}


#: Variants the engine does not play yet: refused at creation rather than silently ignored.
NOT_YET_PLAYED: tuple[str, ...] = ()
_FIELDS = {f.metadata["key"]: f for f in fields(Options) if "key" in f.metadata}


def _read(key: str, value: str) -> tuple[str, Any]:
    """The normalised text of one option and its typed value."""
    spec = _FIELDS[key].metadata
    if "values" in spec:
        allowed = spec["values"]
        if value.lower() not in allowed:
            raise OptionError(f"option {key} takes one of {', '.join(allowed)}, not {value!r}")
        text = value.lower()
        return text, (text == "on") if allowed == _OFF_ON else text
    if "parse" in spec:
        text = value.lower()
        return text, spec["parse"](text)
    return value, value


def validate_options(options: Mapping[str, str]) -> dict[str, str]:
    """Check every option a game is created with and return them with values normalised."""
    out: dict[str, str] = {}
    for raw_key, raw_value in options.items():
        key, value = raw_key.strip().lower(), str(raw_value).strip()
        if key in _FIELDS:
            out[key] = _read(key, value)[0]
        elif key in RULESET_OPTIONS:
            if value.lower() not in RULESET_OPTIONS[key]:
                raise OptionError(f"option {key} takes one of {', '.join(RULESET_OPTIONS[key])}, not {value!r}")
            out[key] = value.lower()
        else:
            known = ", ".join(sorted([*_FIELDS, *RULESET_OPTIONS]))
            raise OptionError(f"unknown option {key!r}; known options: {known}")
    for variant in NOT_YET_PLAYED:
        if out.get(variant) == "on":
            raise OptionError(f"{variant}=on is not played by this engine yet; a game with it cannot be created")
    if out.get("variant-no-trading") == "on" and out.get("primary-calamity-limit", "none") != "none":
        raise OptionError("primary-calamity-limit must be none with variant-no-trading=on (RULINGS.md §7)")
    return out


@lru_cache(maxsize=256)
def _typed(options: FrozenMap[str, str]) -> Options:
    values: dict[str, Any] = {}
    for key, text in options.items():
        if key in _FIELDS:
            values[_FIELDS[key].name] = _read(key, text)[1]
    if values.get("no_trading") and "primary_calamity_limit" not in values:
        values["primary_calamity_limit"] = None  # NT: the dice decide how many calamities strike (RULINGS.md §4.2)
    board = tuple((k, v) for k, v in options.items() if k in RULESET_OPTIONS)
    return Options(**values, board=board)


#: The last options map looked up and its typed options. Every state of a game shares one options map (updated
#: copies take it as it is), and the rules ask for the options over a hundred thousand times in a replay: an
#: identity check spares hashing and comparing the map each time. The map is immutable, so the pair stays true.
_last: tuple[FrozenMap[str, str], Options] | None = None


def options_of(state: GameState) -> Options:
    """The typed options of the game ``state`` belongs to (the recorded ones were validated at creation)."""
    global _last
    last = _last
    if last is not None and last[0] is state.options:
        return last[1]
    typed = _typed(state.options)
    _last = (state.options, typed)
    return typed


def typed_options(options: Mapping[str, str]) -> Options:
    """The typed options of option text already checked by `validate_options` (a game being created)."""
    return _typed(options if isinstance(options, FrozenMap) else FrozenMap(options))


@dataclass(frozen=True)
class OptionDoc:
    """One option as `pbem rules options` and HELP OPTIONS list it."""

    key: str
    values: str     # the allowed values, the default first
    ruling: str     # where RULINGS.md (or the docs) define it
    meaning: str


def option_docs() -> list[OptionDoc]:
    """Every game option: the rules' own, then the board choices of the ruleset loader."""
    out = []
    for key, f in _FIELDS.items():
        spec = f.metadata
        if "values" in spec:
            values = ", ".join(spec["values"])
        elif "parse" in spec and f.default is None:
            values = "none, or a whole number of at least 1"
        elif "parse" in spec:
            values = f"{f.default}, a whole number of at least 1, or none"
        else:
            values = "a folder (default: the packaged data)"
        out.append(OptionDoc(key, values, spec["ruling"], MEANINGS[key]))
    for key, allowed in RULESET_OPTIONS.items():
        out.append(OptionDoc(key, ", ".join(allowed), "docs/rules-data.md", BOARD_MEANINGS[key]))
    return out

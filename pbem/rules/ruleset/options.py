"""Game options: the named deviations of RULINGS.md §7 and the board choices.

Every option has a default; a game records only what differs. Unknown options
and values outside the allowed set are refused when the game is created, so a
typo never silently plays a different game.
"""

from __future__ import annotations

from collections.abc import Mapping

from pbem.rules.ruleset.loader import RULESET_OPTIONS

_SEED_OR_1991 = ("seed", "1991")

#: Option name -> allowed values, the default first (RULINGS.md §7).
RULES_OPTIONS: dict[str, tuple[str, ...]] = {
    "beneficiary-rule": _SEED_OR_1991,
    "tax-shortfall-payment": _SEED_OR_1991,
    "city-defender-deferral": _SEED_OR_1991,
    "city-capture-spoils": _SEED_OR_1991,
    "pirate-city-attack": _SEED_OR_1991,
    "support-reduction-order": _SEED_OR_1991,
    "zero-limit-city-ban": _SEED_OR_1991,
    "public-hand-size": _SEED_OR_1991,
    "post-calamity-surplus": _SEED_OR_1991,
    "slave-revolt-recovery": _SEED_OR_1991,
    "variant-small-cities": ("off", "on"),
    "variant-no-trading": ("off", "on"),
    # Not a rule of the game: what the engine does at a phase it cannot play
    # yet. `wait` stops there (the honest default); `skip` records the phase
    # as skipped and goes on, so the playable phases can run turn after turn.
    "unplayable-phases": ("wait", "skip"),
}

#: Variants the engine does not play yet: refused at creation rather than silently ignored.
NOT_YET_PLAYED = ("variant-small-cities", "variant-no-trading")

#: Options whose value is free text checked by a function of its own.
FREE_OPTIONS = ("primary-calamity-limit", "ruleset-data", "last-turn")


class OptionError(ValueError):
    pass


def _allowed() -> dict[str, tuple[str, ...]]:
    return {**RULES_OPTIONS, **RULESET_OPTIONS}


def validate_options(options: Mapping[str, str]) -> dict[str, str]:
    """Check every option and return them with values normalised."""
    allowed = _allowed()
    out: dict[str, str] = {}
    for raw_key, raw_value in options.items():
        key, value = raw_key.strip().lower(), str(raw_value).strip()
        if key in allowed:
            if value.lower() not in allowed[key]:
                raise OptionError(f"option {key} takes one of {', '.join(allowed[key])}, not {value!r}")
            out[key] = value.lower()
        elif key == "primary-calamity-limit":
            if value.lower() != "none" and not (value.isdigit() and int(value) >= 1):
                raise OptionError("option primary-calamity-limit takes a whole number of at least 1, or none")
            out[key] = value.lower()
        elif key == "last-turn":
            # §34: the time limit agreed before play; by email it is counted in turns.
            if value.lower() != "none" and not (value.isdigit() and int(value) >= 1):
                raise OptionError("option last-turn takes a whole number of at least 1 (the last turn played), or none")
            out[key] = value.lower()
        elif key == "ruleset-data":
            out[key] = value
        else:
            known = ", ".join(sorted([*allowed, *FREE_OPTIONS]))
            raise OptionError(f"unknown option {key!r}; known options: {known}")
    for variant in NOT_YET_PLAYED:
        if out.get(variant) == "on":
            raise OptionError(f"{variant}=on is not played by this engine yet; a game with it cannot be created")
    if out.get("variant-no-trading") == "on" and out.get("primary-calamity-limit", "none") != "none":
        raise OptionError("primary-calamity-limit must be none with variant-no-trading=on (RULINGS.md §7)")
    return out


def option(options: Mapping[str, str], key: str) -> str:
    """The value in force: the game's own, else the default."""
    if key in options:
        return options[key]
    if key == "primary-calamity-limit":
        return "none" if options.get("variant-no-trading") == "on" else "2"
    if key == "last-turn":
        return "none"
    return _allowed()[key][0]

"""The vocabulary of civilization card effects in ``civ_cards.json``: each kind and its parameters.

A parameter ending in "?" is optional. Each checker receives the value and the
names known so far, and says what is wrong with it (None when nothing is).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable, Mapping

from pbem.rules.ruleset.model import ROLES

Names = Mapping[str, frozenset[str]]


Checker = Callable[[Any, Names], str | None]


def _is_int(v: Any, _: Names) -> str | None:
    return None if isinstance(v, int) and not isinstance(v, bool) else "must be a whole number"


def _is_pos_int(v: Any, n: Names) -> str | None:
    return _is_int(v, n) or (None if v > 0 else "must be positive")


def _is_int_list(v: Any, n: Names) -> str | None:
    ok = isinstance(v, list) and v and all(_is_pos_int(x, n) is None for x in v)
    return None if ok else "must be a list of positive whole numbers"


def _is_str(v: Any, _: Names) -> str | None:
    return None if isinstance(v, str) and v else "must be a text"


def _is_role(v: Any, _: Names) -> str | None:
    return None if v in ROLES else f"must be one of {', '.join(ROLES)}"


def _name_in(kind: str) -> Checker:
    def check(v: Any, names: Names) -> str | None:
        return None if v in names[kind] else f"unknown {kind[:-1]} {v!r}"
    return check


def _names_in(kind: str) -> Checker:
    def check(v: Any, names: Names) -> str | None:
        if not isinstance(v, list) or not v:
            return f"must be a list of {kind}"
        bad = [x for x in v if x not in names[kind]]
        return f"unknown {kind[:-1]} {bad[0]!r}" if bad else None
    return check


#: The card-effect vocabulary (documented in docs/rules-data.md).
_CALAMITY = _name_in("calamities")

EFFECT_KINDS: Mapping[str, Mapping[str, Checker]] = MappingProxyType({
    "ship-range": {"value": _is_pos_int},
    "open-sea-passage": {},
    "tax-rate-choice": {"values": _is_int_list},
    "tax-revolt-immunity": {},
    "conflict-removes-last": {},
    "population-limit-bonus": {"value": _is_pos_int, "where": _is_str},
    "city-reduction-bonus": {"value": _is_pos_int},
    "land-move-range": {"value": _is_pos_int, "pass_through": _is_str},
    "set-value-bonus": {"cards": _is_pos_int, "per_turn": _is_pos_int,
                        "commodities": _names_in("commodities")},
    "city-attack": {"role": lambda v, _: None if v in ("attacker", "defender")
                    else "must be attacker or defender",
                    "threshold": _is_pos_int, "replacement_tokens": _is_pos_int},
    "city-build-from-treasury": {"max_percent": _is_pos_int, "per_turn": _is_pos_int},
    "acts-last": {"steps": lambda v, _: None if isinstance(v, list) and v
                  and all(isinstance(s, str) for s in v) else "must be a list of steps"},
    "conversion": {"per_turn": _is_pos_int, "reach": _is_str,
                   "blocked_by": _names_in("cards")},
    "conversion-immunity": {},
    "calamity-modifier": {"calamity": _CALAMITY, "role": _is_role, "quantity": _is_str,
                          "delta": _is_int, "per?": _name_in("commodities")},
    "calamity-override": {"calamity": _CALAMITY, "role": _is_role, "quantity": _is_str,
                          "value": _is_int},
    "calamity-cap": {"calamity": _CALAMITY, "role": _is_role, "quantity": _is_str,
                     "value": _is_int},
    "calamity-immunity": {"calamity": _CALAMITY, "role": _is_role, "part?": _is_str},
    "calamity-downgrade": {"calamity": _CALAMITY, "role": _is_role, "part?": _is_str,
                           "from": _is_str, "to": _is_str},
    "calamity-rule": {"calamity": _CALAMITY, "role": _is_role, "rule": _is_str,
                      "value?": _is_int},
})

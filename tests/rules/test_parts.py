"""The parts a game's variants choose (`ruleset/parts.py`): chosen once from the options, each override cited."""

from __future__ import annotations

import inspect
import re

import pytest

from pbem.rules.ruleset.options import typed_options
from pbem.rules.ruleset.parts import (
    CalamityProcedure,
    CitiesAndTowns,
    Deck,
    MoneyPiles,
    Pieces,
    RolledCalamities,
    parts_for,
)

VARIANT_PARTS = ((MoneyPiles, Deck), (CitiesAndTowns, Pieces), (RolledCalamities, CalamityProcedure))


@pytest.mark.parametrize(
    ("options", "kinds", "names"),
    [
        ({}, (Deck, Pieces, CalamityProcedure), ()),
        ({"variant-small-cities": "on"}, (Deck, CitiesAndTowns, CalamityProcedure), ("Small Cities",)),
        ({"variant-no-trading": "on"}, (MoneyPiles, Pieces, RolledCalamities), ("No-Trading",)),
        ({"variant-small-cities": "on", "variant-no-trading": "on"}, (MoneyPiles, CitiesAndTowns, RolledCalamities),
         ("Small Cities", "No-Trading")),
    ],
)
def test_the_options_choose_the_parts_once(options, kinds, names):
    parts = parts_for(typed_options(options))
    assert tuple(type(p) for p in (parts.deck, parts.pieces, parts.calamities)) == kinds
    assert parts.variants == names


@pytest.mark.parametrize(("variant", "base"), VARIANT_PARTS)
def test_every_override_names_the_clause_it_implements(variant, base):
    """What a variant changes stays named by its RULINGS identifier where it is implemented (issue 34)."""
    source = inspect.getsource(variant)
    for name, value in vars(variant).items():
        if name.startswith("_") or not hasattr(base, name):
            continue
        if callable(value):
            assert re.search(r"\b(SC|NT|Q-SC|Q-NT)-?\d+|RULINGS", value.__doc__ or ""), f"{variant.__name__}.{name}"
        else:
            line = next(line for line in source.splitlines() if re.match(rf"\s+{name}\b.*=", line))
            cited = re.search(r"\b(SC|NT|Q-SC|Q-NT)-?\d+", line) or name.endswith(("cites", "rule"))
            assert cited, f"{variant.__name__}.{name}: {line.strip()}"

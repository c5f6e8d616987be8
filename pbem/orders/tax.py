"""Orders of phase 1 (§19.2, seed 003: 1B): TAX for a Coinage holder, REVOLT for a beneficiary."""

from __future__ import annotations

from pbem.rules.core.state import GameState
from pbem.rules.phases.tax import ChooseRevoltingCities, ChooseTaxRate

from .grammar import Actor, LineError, Parser, areas, count, player_of


def _tax(state: GameState, actor: Actor, rest: str, notes: list[str]) -> ChooseTaxRate:
    rate = count(rest, "tax rate (1, 2 or 3)")
    if rate not in (1, 2, 3):
        raise LineError("the tax rate is 1, 2 or 3")
    return ChooseTaxRate(player_of(actor), rate)


def _revolt(state: GameState, actor: Actor, rest: str, notes: list[str]) -> ChooseRevoltingCities:
    return ChooseRevoltingCities(player_of(actor), areas(state, rest, notes))


VERBS: dict[str, tuple[Parser, str]] = {
    "TAX": (_tax, "TAX <1|2|3>"),
    "REVOLT": (_revolt, "REVOLT <area>, <area> ..."),
}
CANONICAL = {
    ChooseTaxRate: lambda c: f"TAX {c.rate}",
    ChooseRevoltingCities: lambda c: "REVOLT " + ", ".join(c.areas),
}

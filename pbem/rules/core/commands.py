"""Commands: what a player, the moderator or the clock asks the engine to do.

The order parser turns text into these; `decide` turns them into events.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChooseNation:
    player_id: int
    nation: str


@dataclass(frozen=True)
class PlaceStartToken:
    player_id: int
    area: str


@dataclass(frozen=True)
class SetDeadline:
    """The service's scheduler announces when the current step's orders are due."""

    due: str


@dataclass(frozen=True)
class PassDeadline:
    """The deadline passed (or the moderator forced it): defaults fill the gaps."""

    by: str = "clock"




@dataclass(frozen=True)
class ChooseTaxRate:
    """A Coinage holder's rate for this turn (§19.2)."""

    player_id: int
    rate: int


@dataclass(frozen=True)
class ChooseRevoltingCities:
    """The beneficiary's pick of which of the victim's cities revolt to him (seed 003: 1B, Q-S5)."""

    player_id: int
    areas: tuple[str, ...]


Command = ChooseNation | PlaceStartToken | SetDeadline | PassDeadline | ChooseTaxRate | ChooseRevoltingCities

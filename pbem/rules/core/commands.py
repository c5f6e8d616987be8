"""Commands: what a player, the moderator or the clock asks the engine to do.

The order parser turns text into these; `decide` turns them into events.
Each phase declares its own commands (frozen dataclasses beside its rules,
carrying the ``player_id`` who gives them); only the clock's commands,
common to every phase, are declared here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias


@dataclass(frozen=True)
class SetDeadline:
    """The service's scheduler announces when the current step's orders are due."""

    due: str


@dataclass(frozen=True)
class PassDeadline:
    """The deadline passed (or the moderator forced it): defaults fill the gaps."""

    by: str = "clock"


#: Any command: a phase's own, or the clock's above.
Command: TypeAlias = object

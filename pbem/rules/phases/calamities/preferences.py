"""Cities named in order of preference: one PICK answers every city choice a calamity asks of one player.

A calamity may ask the same player to choose again within one step (Slave
Revolt reduces one city at a time until the rest are supported, §30.422;
Iconoclasm & Heresy asks the victim for his own cities and then for other
players', §30.8). Asked one pick per letter, a player would spend a deadline
on each. So ``PICK Ur, Elam, Susa`` may name more cities than the stage asks
for: the engine takes the first ones that are legal, in the order given, and
keeps the rest in ``state.filed`` (`QUEUE`). Whenever the calamity then asks
the same player to choose cities again, `settle` takes them from there
before asking him; what is left when the calamity is resolved is recorded as
not needed. Each skip says why, so the player reads in the report which of
his cities were used and which not.

The queue is only ever filled by a PICK naming more cities than asked for,
which an earlier engine refused, so a log recorded before this never holds
one and is ruled as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pbem.rules.core.frozen import replace
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.choosing import Stage, city_owner, feasible, within_caps

#: The ``filed`` key of the cities a player named beyond what was asked: (nation, area, area, ...).
QUEUE = "preferences"


@dataclass(frozen=True)
class Taken:
    """What a list of preferences gives one stage: the cities picked, those passed over and why, the rest."""

    picked: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]
    rest: tuple[str, ...]


def queued(state: GameState) -> tuple[str, tuple[str, ...]] | None:
    """The nation whose preferences wait, and the areas in his order; None when nobody's do."""
    entry = state.filed.get(QUEUE, ())
    return (str(entry[0]), tuple(str(a) for a in entry[1:])) if entry else None


def with_queue(state: GameState, nation: str, areas: tuple[str, ...] | list[str]) -> GameState:
    """The state keeping ``areas`` for ``nation``'s next choice (none: the queue is emptied)."""
    filed = state.filed.set(QUEUE, (nation, *areas)) if areas else state.filed.without(QUEUE)
    return replace(state, filed=filed)


def _why_not(state: GameState, stage: Stage, picked: tuple[str, ...], area: str) -> str | None:
    """Why ``area`` cannot be added to ``picked`` in this stage (None: it can)."""
    if area not in stage.candidates:
        return "not a city this choice may take"
    if not within_caps(state, stage, picked + (area,)):
        return f"{city_owner(state, area)} may lose no more cities here"
    return None


def take(state: GameState, stage: Stage, named: tuple[str, ...]) -> Taken:
    """The first legal cities of ``named`` that the stage needs, in the order given (§29.6: the chooser's choice)."""
    need = feasible(state, stage)
    picked: tuple[str, ...] = ()
    skipped: list[tuple[str, str]] = []
    for i, area in enumerate(dict.fromkeys(named)):
        if len(picked) == need:
            return Taken(picked, tuple(skipped), tuple(dict.fromkeys(named))[i:])
        why = _why_not(state, stage, picked, area)
        if why:
            skipped.append((area, why))
        else:
            picked += (area,)
    return Taken(picked, tuple(skipped), ())


def skipped_data(taken: Taken) -> dict[str, Any]:
    """The event fields that say which named cities were passed over and which wait (none: no fields)."""
    out: dict[str, Any] = {}
    if taken.skipped:
        out["skipped"] = [list(s) for s in taken.skipped]
    if taken.rest:
        out["queued"] = list(taken.rest)
    return out


def tell_skips(data: Mapping[str, Any]) -> str:
    """The sentence a report adds for cities named but not taken by this choice."""
    parts = [f"{a} is passed over ({why})" for a, why in data.get("skipped", ())]
    queued_areas = list(data.get("queued", ()))
    if queued_areas:
        parts.append(f"kept for a further choice: {', '.join(queued_areas)}")
    if parts:
        parts[0] = parts[0][0].upper() + parts[0][1:]
    return (" " + "; ".join(parts) + ".") if parts else ""

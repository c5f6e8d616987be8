"""Orders of phase 2 (§20): GROW, for a player whose stock is short of his growth.

``GROW Thebes 2, Sinai 1`` places two tokens in Thebes and one in Sinai. A
name without a number means one token; commas may be left out when every
entry ends with its number (``GROW Thebes 2 Sinai 1``).
"""

from __future__ import annotations

import re

from pbem.rules.core.state import GameState
from pbem.rules.phases.expansion import DistributeGrowth

from .grammar import Actor, LineError, Parser, area, player_of


def area_counts(state: GameState, text: str, notes: list[str], what: str = "tokens") -> tuple[tuple[str, int], ...]:
    """``Thebes 2, Upper Egypt 1, Sinai`` -> (("Thebes", 2), ("Upper Egypt", 1), ("Sinai", 1))."""
    entries: list[tuple[str, int]] = []
    for part in (p.strip() for p in re.split(r"[,;]", text)):
        words: list[str] = []
        for word in part.split():
            if word.isdigit():
                if not words:
                    raise LineError(f"write the area before the number of {what}, e.g. Thebes 2")
                entries.append((area(state, " ".join(words), notes), int(word)))
                words = []
            else:
                words.append(word)
        if words:
            entries.append((area(state, " ".join(words), notes), 1))
    if not entries:
        raise LineError("say which areas, e.g. Thebes 2, Sinai 1")
    return tuple(entries)


def _grow(state: GameState, actor: Actor, rest: str, notes: list[str]) -> DistributeGrowth:
    return DistributeGrowth(player_of(actor), area_counts(state, rest, notes))


VERBS: dict[str, tuple[Parser, str]] = {
    "GROW": (_grow, "GROW <area> <tokens>, <area> <tokens> ..."),
}
CANONICAL = {
    DistributeGrowth: lambda c: "GROW " + ", ".join(f"{a} {n}" for a, n in c.placements),
}

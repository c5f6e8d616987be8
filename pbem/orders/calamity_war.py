"""Order of Civil War (phase 9, §30.41): REBELS.

``REBELS Thebes 3, Memphis CITY`` names the victim's units for the faction
that goes over to the beneficiary: 3 tokens in Thebes and the city of
Memphis (5 unit points). The victim answers first (15 points and his card
bonuses), then the beneficiary (20 more); with Philosophy only the
beneficiary answers (15).
"""

from __future__ import annotations

import re

from pbem.rules.calamity_war import ChooseFaction, write
from pbem.rules.state import GameState

from .grammar import Actor, LineError, Parser, area, count, player_of

_UNIT = re.compile(r"^(?P<place>.*?)\s+(?P<what>\d+|city|cit|c)$", re.IGNORECASE)


def _faction(state: GameState, actor: Actor, rest: str, notes: list[str]) -> ChooseFaction:
    if rest.strip().upper() in ("NOTHING", "NONE"):
        return ChooseFaction(player_of(actor), ())
    items = []
    for part in (p.strip() for p in re.split(r"[,;]", rest)):
        if not part:
            continue
        match = _UNIT.match(part)
        if not match:
            raise LineError(f"{part!r}: write '<area> <tokens>' or '<area> CITY'")
        place = area(state, match.group("place").strip(), notes)
        what = match.group("what")
        if what.isdigit():
            items.append((place, "tokens", count(what, "number of tokens")))
        else:
            items.append((place, "city", 1))
    if not items:
        raise LineError("say which units: REBELS <area> <tokens>, <area> CITY ...")
    return ChooseFaction(player_of(actor), tuple(items))


VERBS: dict[str, tuple[Parser, str]] = {"REBELS": (_faction, "REBELS <area> <tokens>, <area> CITY ...")}
CANONICAL = {ChooseFaction: lambda c: write(c.items)}

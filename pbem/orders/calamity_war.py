"""Orders of Civil War (phase 9, §30.41): REBELS and FACTION.

``REBELS Thebes 3, Memphis CITY`` names the victim's units for the faction
that goes over to the beneficiary: 3 tokens in Thebes and the city of
Memphis (5 unit points); under Small Cities ``Sinai 2 TOWNS`` adds two
towns (1 point each, SC-9). The victim answers first (15 points and his card
bonuses), then the beneficiary (20 more); with Philosophy only the
beneficiary answers (15). ``FACTION 2`` (or ``FACTION 1``) is the
victim's last word: the faction he keeps; the other changes sides.
"""

from __future__ import annotations

import re

from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.war import ChooseFaction, KeepFaction, write

from .grammar import Actor, LineError, Parser, area, count, player_of

#: A place, then what of it. The blanks before what start where a run of blanks does and take it whole (the
#: look-behind, the possessive): else the place, taken a character at a time, read a long run again from each.
_UNIT = re.compile(r"^(?P<place>.*?)(?<!\s)\s++(?P<what>\d++(?:\s+towns?)?|city|cit|c)$", re.IGNORECASE)


def _faction(state: GameState, actor: Actor, rest: str, notes: list[str]) -> ChooseFaction:
    if rest.strip().upper() in ("NOTHING", "NONE"):
        return ChooseFaction(player_of(actor), ())
    items = []
    for part in (p.strip() for p in re.split(r"[,;]", rest)):
        if not part:
            continue
        match = _UNIT.match(part)
        if not match:
            raise LineError(f"'{part}': write '<area> <tokens>' or '<area> CITY'")
        place = area(state, match.group("place").strip(), notes)
        what = match.group("what").lower()
        if what.endswith(("town", "towns")):
            items.append((place, "towns", count(what.split()[0], "number of towns")))
        elif what.isdigit():
            items.append((place, "tokens", count(what, "number of tokens")))
        else:
            items.append((place, "city", 1))
    if not items:
        raise LineError("say which units: REBELS <area> <tokens>, <area> CITY ...")
    return ChooseFaction(player_of(actor), tuple(items))


def _keep(state: GameState, actor: Actor, rest: str, notes: list[str]) -> KeepFaction:
    word = rest.strip().lower().removeprefix("no").strip(" .")
    numbers = {"1": 1, "one": 1, "i": 1, "first": 1, "2": 2, "two": 2, "ii": 2, "second": 2}
    if word not in numbers:
        raise LineError("say which faction you keep: FACTION 1 or FACTION 2")
    return KeepFaction(player_of(actor), numbers[word])


VERBS: dict[str, tuple[Parser, str]] = {
    "REBELS": (_faction, "REBELS <area> <tokens>, <area> <n> TOWNS, <area> CITY ..."),
    "FACTION": (_keep, "FACTION 1|2"),
}
CANONICAL = {ChooseFaction: lambda c: write(c.items), KeepFaction: lambda c: f"FACTION {c.faction}"}

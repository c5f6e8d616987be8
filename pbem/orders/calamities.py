"""Orders of phases 9 and 10 (§29.6, §30, §32.941): PICK, LOSE, GIVE and CONVERT.

``PICK Thebes, Memphis`` answers whatever city choice the calamity being
resolved asks of you: the cities of yours it reduces (Superstition, Civil
Disorder, Iconoclasm & Heresy, untraded Treachery), the city of the victim
you take (Treachery you traded), or the other players' cities you name
(Iconoclasm & Heresy, Piracy), your city by the volcano that erupts or
destroyed by an Earthquake and the neighbour's city it reduces, your coastal
city a Flood takes, any area of the flood plain you name when two tie, or
the one area where Barbarian Hordes appear or go when areas tie. Name them
all on one line. More cities than asked for are a list in order of
preference: the engine takes the first legal ones and keeps the rest for the
calamity's next city choice asked of you (`calamities.preferences`), so one
letter answers a Slave Revolt that asks one city at a time.

``LOSE Thebes 3, Memphis CITY, Buhen REDUCE`` pays unit points (Famine,
Epidemic, Flood): 3 tokens from Thebes, the city of Memphis eliminated, the city
of Buhen reduced. Under Small Cities ``LOSE Sinai 2 TOWNS`` pays with towns
(1 point each, SC-9), and in a conflict says how many of your removals in
the area are towns (SC-15). ``GIVE Crete 8, Babylon 8, Thrace 4`` hands the secondary
unit points to other players. ``CONVERT Buhen`` (Monotheism, phase 10)
converts the units there; ``CONVERT NONE`` converts nothing.

No-Trading (NT-8): ``VOLUNTEER`` is a standing order to roll for calamities
even in a turn when you need not; ``VOLUNTEER OFF`` withdraws it. ``WATER 2``
sets aside two Water cards against a Famine (Pottery, NT-12).
"""

from __future__ import annotations

import re

from pbem.rules.board.losses import LoseUnits
from pbem.rules.board.losses import write as write_losses
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.choosing import GiveLosses, PickCities
from pbem.rules.phases.calamities.dice import Volunteer
from pbem.rules.phases.calamities.plagues import SetAsideWater
from pbem.rules.phases.monotheism import Convert

from .grammar import Actor, LineError, Parser, area, areas, count, name, player_of

#: A place, then what of it; the blanks between start where a run does and take it whole (as `calamity_war._UNIT`).
_LOSS = re.compile(r"^(?P<place>.*?)(?<!\s)\s++(?P<what>\d++(?:\s+towns?)?|city|cit|c|reduce|red|r)$", re.IGNORECASE)


def _pick(state: GameState, actor: Actor, rest: str, notes: list[str]) -> PickCities:
    if not rest.strip():
        raise LineError("say which cities: PICK <area>, <area> ...")
    return PickCities(player_of(actor), areas(state, rest, notes))


def _lose(state: GameState, actor: Actor, rest: str, notes: list[str]) -> LoseUnits:
    if rest.strip().upper() in ("NOTHING", "NONE"):
        return LoseUnits(player_of(actor), ())
    items = []
    for part in (p.strip() for p in re.split(r"[,;]", rest)):
        if not part:
            continue
        match = _LOSS.match(part)
        if not match:
            raise LineError(f"'{part}': write '<area> <tokens>', '<area> <n> TOWNS', '<area> CITY' or '<area> REDUCE'")
        place = area(state, match.group("place").strip(), notes)
        what = match.group("what").lower()
        if what.split()[0].isdigit() and what.endswith(("town", "towns")):
            items.append((place, "towns", int(what.split()[0])))
        elif what.isdigit():
            items.append((place, "tokens", count(what, "number of tokens")))
        else:
            items.append((place, "city" if what.startswith("c") else "reduce", 1))
    if not items:
        raise LineError("say what you lose: LOSE <area> <tokens>, <area> CITY, <area> REDUCE ...")
    return LoseUnits(player_of(actor), tuple(items))


def _give(state: GameState, actor: Actor, rest: str, notes: list[str]) -> GiveLosses:
    shares = []
    for part in (p.strip() for p in re.split(r"[,;]", rest)):
        if not part:
            continue
        bits = part.rsplit(None, 1)
        if len(bits) != 2:
            raise LineError(f"'{part}': write '<nation> <unit points>'")
        shares.append((name(bits[0], state.nations, "nation", notes), count(bits[1], "number of unit points")))
    if not shares:
        raise LineError("say who loses how much: GIVE <nation> <points>, <nation> <points> ...")
    return GiveLosses(player_of(actor), tuple(shares))


def _write_lose(command: LoseUnits) -> str:
    return write_losses(command.items)


def _convert(state: GameState, actor: Actor, rest: str, notes: list[str]) -> Convert:
    if rest.strip().upper() in ("NONE", "NOTHING", "NO"):
        return Convert(player_of(actor), None)
    return Convert(player_of(actor), area(state, rest.strip(), notes))


_ON = ("", "on", "yes", "y", "1", "true")
_OFF = ("off", "no", "n", "0", "false", "none")


def _volunteer(state: GameState, actor: Actor, rest: str, notes: list[str]) -> Volunteer:
    word = rest.strip().lower()
    if word not in _ON + _OFF:
        raise LineError("write VOLUNTEER (roll for calamities even when exempt) or VOLUNTEER OFF", ["VOLUNTEER", "VOLUNTEER OFF"])
    return Volunteer(player_of(actor), word in _ON)


def _water(state: GameState, actor: Actor, rest: str, notes: list[str]) -> SetAsideWater:
    return SetAsideWater(player_of(actor), count(rest.strip() or "", "number of Water cards"))


VERBS: dict[str, tuple[Parser, str]] = {
    "CONVERT": (_convert, "CONVERT <area> (or CONVERT NONE)"),
    "PICK": (_pick, "PICK <area>, <area> ..."),
    "LOSE": (_lose, "LOSE <area> <tokens>, <area> <n> TOWNS, <area> CITY, <area> REDUCE ..."),
    "GIVE": (_give, "GIVE <nation> <points>, <nation> <points> ..."),
    "WATER": (_water, "WATER <n> (No-Trading: Water cards set aside against a Famine, with Pottery)"),
    "VOLUNTEER": (_volunteer, "VOLUNTEER [OFF] (No-Trading: roll for calamities even when exempt)"),
}
CANONICAL = {
    Convert: lambda c: f"CONVERT {c.area or 'NONE'}",
    PickCities: lambda c: "PICK " + ", ".join(c.areas),
    LoseUnits: _write_lose,
    GiveLosses: lambda c: "GIVE " + ", ".join(f"{n} {k}" for n, k in c.shares),
    Volunteer: lambda c: "VOLUNTEER" if c.on else "VOLUNTEER OFF",
    SetAsideWater: lambda c: f"WATER {c.count}",
}

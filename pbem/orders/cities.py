"""Orders of phase 5 (seed 001: 5A-5C, §25.3): BUILD, DONE and REDUCE.

``BUILD Thebes, Memphis`` builds two cities; name them all on one line, the
line is your whole answer. ``BUILD Buhen TREASURY 2`` (Architecture) takes 2
of the city's tokens from treasury; ``TREASURY`` alone takes as many as
needed. ``DONE`` builds nothing. ``REDUCE Thebes`` reduces that city when
your cities are not supported.

Small Cities: ``TOWN Memphis 2, Thebes`` makes 2 towns in Memphis and as many
as the tokens make in Thebes; ``TOWN Memphis 2 TREASURY 2`` adds two more from
treasury (Architecture). ``REDUCE Memphis`` turns a town above the limit back
into a token when your towns are not supported; ``REDUCE Sinai 3, Gaza 2``
names the towns a calamity's reduction turns into tokens (SC-10).
"""

from __future__ import annotations

import re

from pbem.rules.board.support import ReduceCity
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.reductions import FlipTowns, write_flips
from pbem.rules.phases.cities.construction import AS_NEEDED, BuildCities, FinishOrders
from pbem.rules.phases.cities.towns import AS_MANY, BuildTowns, town_line

from .grammar import Actor, LineError, Parser, area, areas, player_of

#: "<area> TREASURY [n]". Each run of blanks after the lazily read place is taken whole from its start (the
#: look-behind, the possessive): "(.*?)\s+" read a long run again from each of its blanks.
_TREASURY = re.compile(r"^(?P<place>.*?)(?<!\s)\s++(?:treasury|treas|tre|t)\b\s*+(?P<n>\d++)?\s*+$", re.IGNORECASE)


def _build(state: GameState, actor: Actor, rest: str, notes: list[str]) -> BuildCities:
    builds: list[tuple[str, int]] = []
    for part in (p.strip() for p in re.split(r"[,;]", rest)):
        if not part:
            continue
        match = _TREASURY.match(part)
        if match and match.group("place").strip():
            amount = int(match.group("n")) if match.group("n") else AS_NEEDED
            builds.append((area(state, match.group("place").strip(), notes), amount))
        else:
            builds.extend((a, 0) for a in areas(state, part, notes))
    if not builds:
        raise LineError("say where: BUILD <area>, <area> ... (or DONE to build nothing)")
    return BuildCities(player_of(actor), tuple(builds))


_TOWN = re.compile(
    r"^(?P<place>.*?)(?:(?<!\s)\s++(?P<n>\d++))?(?:(?<!\s)\s++(?:treasury|treas|tre|t)\b\s*+(?P<m>\d++)?)?(?:(?<!\s)\s++)?$",
    re.IGNORECASE,
)


def _town(state: GameState, actor: Actor, rest: str, notes: list[str]) -> BuildTowns:
    towns: list[tuple[str, int, int]] = []
    for part in (p.strip() for p in re.split(r"[,;]", rest)):
        if not part:
            continue
        match = _TOWN.match(part)
        if not match or not match.group("place").strip():
            raise LineError(f"'{part}': write TOWN <area> <n> [TREASURY <m>]")
        count = int(match.group("n")) if match.group("n") else AS_MANY
        said_treasury = part[len(match.group("place")):].strip(" 0123456789")
        if said_treasury and not match.group("m"):
            raise LineError(f"'{part}': say how many towns come from treasury, e.g. TOWN {match.group('place')} 2 TREASURY 2")
        towns.append((area(state, match.group("place").strip(), notes), count, int(match.group("m") or 0)))
    if not towns:
        raise LineError("say where: TOWN <area> <n>, <area> <n> ... (or DONE)")
    return BuildTowns(player_of(actor), tuple(towns))


def _done(state: GameState, actor: Actor, rest: str, notes: list[str]) -> FinishOrders:
    if rest:
        raise LineError("DONE takes nothing after it")
    return FinishOrders(player_of(actor))


_FLIP = re.compile(r"^(?P<place>.*?)(?<!\s)\s++(?P<n>\d++)$")


def _reduce(state: GameState, actor: Actor, rest: str, notes: list[str]) -> ReduceCity | FlipTowns:
    """REDUCE <area>: one support step; REDUCE <area> <n>, ...: towns a calamity turns into tokens (SC-10)."""
    parts = [p.strip() for p in re.split(r"[,;]", rest) if p.strip()]
    if not parts:
        raise LineError("say where: REDUCE <area> (or, for towns, REDUCE <area> <n>, <area> <n> ...)")
    if len(parts) == 1 and not _FLIP.match(parts[0]):
        return ReduceCity(player_of(actor), area(state, rest, notes))
    flips = []
    for part in parts:
        match = _FLIP.match(part)
        if not match:
            raise LineError(f"'{part}': write '<area> <towns>' for each area, e.g. REDUCE Sinai 3, Gaza 2")
        flips.append((area(state, match.group("place"), notes), int(match.group("n"))))
    return FlipTowns(player_of(actor), tuple(flips))


def _write_build(command: BuildCities) -> str:
    parts = []
    for place, treasury in command.builds:
        if treasury == AS_NEEDED:
            parts.append(f"{place} TREASURY")
        elif treasury:
            parts.append(f"{place} TREASURY {treasury}")
        else:
            parts.append(place)
    return "BUILD " + ", ".join(parts)


VERBS: dict[str, tuple[Parser, str]] = {
    "BUILD": (_build, "BUILD <area>, <area> [TREASURY <n>] ..."),
    "TOWN": (_town, "TOWN <area> [<n>] [TREASURY <m>], ... (Small Cities)"),
    "DONE": (_done, "DONE"),
    "REDUCE": (_reduce, "REDUCE <area> | REDUCE <area> <towns>, ... (Small Cities, calamities)"),
}
CANONICAL = {
    BuildCities: _write_build,
    BuildTowns: lambda c: town_line(list(c.towns)),
    FinishOrders: lambda c: "DONE",
    ReduceCity: lambda c: f"REDUCE {c.area}",
    FlipTowns: lambda c: write_flips(c.flips),
}

"""Orders of phase 4, conflict (seed 002: 4b; seed 001: [city-attack steps 1, 3, 4]; D-3, D-4).

ORDER <city>, <city> ...   a defender's order of his attacked cities (the rest follow by area name)
DEFER <area> | DEFER no    a short defender has his own attack in <area> resolved first, or not
DRAW yes | DRAW no         the attacker of a taken city draws a card from the defender's hand, or not
PILLAGE <n>                the attacker moves n (0-3) tokens from stock to treasury
SPOILS <yes|no> <n>        both at once, e.g. SPOILS yes 3
"""

from __future__ import annotations

from pbem.rules.core.state import GameState
from pbem.rules.phases.conflict.attacks import (
    ChooseCityOrder,
    ChooseDeferral,
    ChooseSpoils,
)

from .grammar import Actor, LineError, Parser, area, areas, count, player_of

YES = ("yes", "y", "draw", "take", "1", "true", "ok")
NO = ("no", "n", "none", "nothing", "skip", "0", "false", "not", "nodraw")


def _yes_no(word: str, what: str) -> bool:
    w = word.strip().lower().rstrip(".!")
    if w in YES:
        return True
    if w in NO:
        return False
    raise LineError(f"'{word}': say yes or no ({what})")


def _order(state: GameState, actor: Actor, rest: str, notes: list[str]) -> ChooseCityOrder:
    if not rest:
        raise LineError("name your attacked cities in the order you want them resolved: ORDER <city>, <city> ...")
    return ChooseCityOrder(player_of(actor), areas(state, rest, notes))


def _defer(state: GameState, actor: Actor, rest: str, notes: list[str]) -> ChooseDeferral:
    if rest.strip().lower().rstrip(".!") in NO:
        return ChooseDeferral(player_of(actor), None)
    return ChooseDeferral(player_of(actor), area(state, rest, notes))


def _draw(state: GameState, actor: Actor, rest: str, notes: list[str]) -> ChooseSpoils:
    return ChooseSpoils(player_of(actor), draw=_yes_no(rest or "yes", "draw a card?"))


def _pillage(state: GameState, actor: Actor, rest: str, notes: list[str]) -> ChooseSpoils:
    return ChooseSpoils(player_of(actor), pillage=count(rest.strip(), "number of tokens to pillage (0 to 3)"))


def _spoils(state: GameState, actor: Actor, rest: str, notes: list[str]) -> ChooseSpoils:
    words = rest.replace(",", " ").split()
    if len(words) != 2:
        raise LineError("write SPOILS <yes|no> <tokens to pillage>, e.g. SPOILS yes 3")
    return ChooseSpoils(player_of(actor), _yes_no(words[0], "draw a card?"), count(words[1], "number of tokens to pillage"))


VERBS: dict[str, tuple[Parser, str]] = {
    "ORDER": (_order, "ORDER <city>, <city> ..."),
    "DEFER": (_defer, "DEFER <area> | DEFER no"),
    "DRAW": (_draw, "DRAW yes|no"),
    "PILLAGE": (_pillage, "PILLAGE <0-3>"),
    "SPOILS": (_spoils, "SPOILS <yes|no> <0-3>"),
}


def _canonical_spoils(c: ChooseSpoils) -> str:
    if c.draw is not None and c.pillage is not None:
        return f"SPOILS {'yes' if c.draw else 'no'} {c.pillage}"
    if c.draw is not None:
        return f"DRAW {'yes' if c.draw else 'no'}"
    return f"PILLAGE {c.pillage}"


CANONICAL = {
    ChooseCityOrder: lambda c: "ORDER " + ", ".join(c.areas),
    ChooseDeferral: lambda c: f"DEFER {c.area or 'no'}",
    ChooseSpoils: _canonical_spoils,
}

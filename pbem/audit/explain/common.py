"""What every explanation shares: the event being explained, the states around it, and safe ways to tell them.

An explainer of one kind of event (a conflict, a purchase, a calamity...)
reads a `Case` and returns `Told`: the numbers it relied on before the event
and the steps of its arithmetic. The numbers a viewer may not know (another
nation's hand) are never read from the state directly here: nation and area
lines are built from `pbem.rules.view.view`, the one place that decides what
each viewer sees, so a new explainer cannot leak a hand by accident.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState
from pbem.rules.view import view

#: A line longer than this is wrapped, so the answer reads on a phone.
WIDTH = 100
PRIVILEGED = ("moderator", "auditor")


@dataclass(frozen=True)
class Told:
    """What one explainer adds: the numbers read before the event, and the arithmetic step by step."""

    before: tuple[str, ...] = ()
    how: tuple[str, ...] = ()


@dataclass
class Case:
    """One event to explain, with everything an explainer may read.

    ``log`` holds the events before this one (the explainers of a revolt look
    back for the tax that caused it). Views are computed once, on first use.
    """

    game_id: str
    version: int
    viewer: str
    event: Event
    before: GameState
    after: GameState
    log: Sequence[Event] = field(default_factory=tuple)

    @cached_property
    def seen_before(self) -> dict[str, Any]:
        return view(self.before, viewing(self.before, self.viewer))

    @cached_property
    def seen_after(self) -> dict[str, Any]:
        return view(self.after, viewing(self.after, self.viewer))

    def sees_hand(self, nation: str) -> bool:
        """The viewer may read this nation's hand and its secret orders (the same rule as the engine's sentences)."""
        return self.viewer in PRIVILEGED or self.viewer == f"player:{nation.lower()}"

    def party(self, *nations: str | None) -> bool:
        """The viewer is the moderator, an auditor, or the player of one of these nations."""
        return self.viewer in PRIVILEGED or any(n and self.viewer == f"player:{n.lower()}" for n in nations)


Explainer = Callable[[Case], Told]


def viewing(state: GameState, viewer: str) -> str:
    """The viewer to build a view with: a nation not chosen yet (early in setup) sees what an observer sees."""
    if viewer.startswith("player:") and not any(n.lower() == viewer[7:] for n in state.nations):
        return "observer"
    return viewer


def wrap(lines: Iterable[str], indent: str = "") -> list[str]:
    """Lines no wider than WIDTH, a wrapped line's continuation indented two more spaces."""
    out: list[str] = []
    for line in lines:
        body = line.lstrip(" ")
        lead = indent + line[: len(line) - len(body)]
        out.extend(textwrap.wrap(body, WIDTH, initial_indent=lead, subsequent_indent=lead + "  ", break_on_hyphens=False)
                   or [lead.rstrip()])
    return out


def plural(count: int, word: str, many: str | None = None) -> str:
    """'1 city', '3 cities': ``many`` for a plural not made with an s."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def counts_text(counts: Mapping[str, int]) -> str:
    """'Italy 7, Assyria 6' (in the order given)."""
    return ", ".join(f"{who} {n}" for who, n in counts.items()) or "none"


def cards_text(cards: Iterable[str]) -> str:
    """'Grain, Hides x2' for a hand or a payment."""
    counted = Counter(cards)
    return ", ".join(f"{c} x{n}" if n > 1 else c for c, n in sorted(counted.items())) or "none"


def nation_line(seen: Mapping[str, Any], nation: str) -> str:
    """One nation's numbers as the viewer sees them (from `view`)."""
    n = seen["nations"].get(nation.lower())
    if n is None:
        return f"{nation}: not in the game yet"
    parts = [f"stock {n['stock']}", f"treasury {n['treasury']}", f"{n['tokens_on_board']} tokens",
             plural(n["cities_on_board"], "city", "cities")]
    if n.get("towns_on_board"):
        parts.append(plural(n["towns_on_board"], "town"))
    if n.get("ships"):
        parts.append(plural(n["ships"], "ship"))
    parts.append(f"A.S.T. {n['ast_position']}")
    parts.append("civilization cards: " + (", ".join(n["civ_cards"]) or "none"))
    if "hand" in n:
        parts.append("hand: " + cards_text(n["hand"]))
    elif n.get("hand_count") is not None:
        parts.append(plural(n["hand_count"], "trade card"))
    return f"{nation}: " + ", ".join(parts)


def area_line(seen: Mapping[str, Any], area: str, limit: int | None = None) -> str:
    """One area's units as the viewer sees them (from `view`); ``limit`` adds the printed population limit."""
    a = seen["areas"].get(area, {"tokens": {}, "city": None})
    units = [f"{who} {n}" for who, n in a["tokens"].items()]
    units += [f"{who} {n} towns" for who, n in a.get("towns", {}).items()]
    head = f"In {area}" + (f" (limit {limit})" if limit is not None else "")  # an area may bear a nation's name
    text = f"{head}: tokens {', '.join(units) or 'none'}"
    return text + (f"; city of {a['city']}" if a["city"] else "; no city")


#: Keys under which an event's data names areas: a name that is a nation's and an area's (Assyria) is taken for
#: an area only there.
AREA_KEYS = frozenset({"area", "areas", "from", "to", "picked", "builds", "placements", "plain", "site", "sites", "city_area"})


#: Keys whose values an explanation never reads for names: who traded a calamity is not everyone's to know.
SECRET_KEYS = frozenset({"giver"})


def named(event: Event, words: Iterable[str], under: frozenset[str] | None = None) -> list[str]:
    """The words (nation or area names) the event's data names, in the order first named.

    With ``under``, only those named beneath one of these keys count; names under SECRET_KEYS never do.
    """
    wanted = set(words)
    found: list[str] = []

    def walk(value: Any, key: str | None) -> None:
        if key in SECRET_KEYS:
            return
        if isinstance(value, str):
            if value in wanted and value not in found and (under is None or key in under):
                found.append(value)
        elif isinstance(value, Mapping):
            for name, item in value.items():
                walk(name, key)
                walk(item, name if isinstance(name, str) else key)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item, key)

    walk(dict(event.data), None)
    return found


def named_areas(event: Event, areas: Iterable[str], nations: Iterable[str]) -> list[str]:
    """The areas the event's data names; a nation's name counts only where the data names an area."""
    areas = list(areas)
    nations = set(nations)
    keyed = set(named(event, areas, AREA_KEYS))
    return [a for a in named(event, areas) if a not in nations or a in keyed]


def mismatch(what: str, recomputed: Any, logged: Any) -> list[str]:
    """A line when the recomputation and the log disagree: the audit's finding, said plainly."""
    if recomputed == logged:
        return []
    return [f"NOTE: recomputed {what} is {recomputed}, but the log records {logged}."]

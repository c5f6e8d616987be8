"""What changed between two versions of a game, as one viewer may know it, in sentences (`pbem diff`).

Both ends are views (`pbem.rules.view.view`), so a diff can never tell more
than the viewer's own `pbem state` would: another nation's hand shows only as
the count that viewer is allowed, and a hidden move shows only by its public
effects. The same sentences tell a player what a rollback changed for him.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from pbem.rules.branches import fold_log
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState
from pbem.rules.view import check_viewer, view

#: The numbers of a nation that a diff tells, with their words, in the order told.
_COUNTS = (
    ("stock", "stock"),
    ("treasury", "treasury"),
    ("tokens_on_board", "tokens on the board"),
    ("towns_on_board", "towns on the board"),
    ("cities_on_board", "cities"),
    ("ships", "ships"),
    ("hand_count", "cards in hand"),
    ("ast_position", "A.S.T. space"),
    ("census", "census rank"),
)


def state_at(game_id: str, events: Sequence[Event], version: int) -> GameState:
    """The game after ``version`` events, following any rollback among them (the one place a diff folds)."""
    return fold_log(game_id, list(events[:version]))


def view_at(state: GameState, viewer: str) -> dict[str, Any]:
    """``viewer``'s view of ``state``; a nation not chosen yet at that version sees what an observer sees.

    The viewer is checked against the game as it stands now; before its
    nation was chosen it had nothing of its own to hide.
    """
    try:
        return view(state, viewer)
    except ValueError:
        if not viewer.startswith("player:"):
            raise
        return view(state, "observer")


class Views(NamedTuple):
    """The two ends of a diff, and the viewer as the game knows him (``player:<nation>``, ``observer``, ...)."""

    viewer: str
    before: dict[str, Any]
    after: dict[str, Any]


def views_between(game_id: str, events: Sequence[Event], a: int, b: int, viewer: str) -> Views:
    """The two views a diff compares; ValueError for a version outside the log or a viewer the game lacks."""
    head = len(events)
    for version in (a, b):
        if not 1 <= version <= head:
            raise ValueError(f"version {version} is outside the log of {game_id}: versions 1 to {head}")
    viewer = check_viewer(state_at(game_id, events, head), viewer)
    return Views(viewer, view_at(state_at(game_id, events, a), viewer), view_at(state_at(game_id, events, b), viewer))


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


def _change(word: str, old: Any, new: Any) -> str:
    """``stock 20 to 17 (-3)``; without the difference when either side is not a number."""
    shown_old = "none" if old is None else old
    shown_new = "none" if new is None else new
    if isinstance(old, int) and isinstance(new, int):
        return f"{word} {shown_old} to {shown_new} ({_signed(new - old)})"
    return f"{word} {shown_old} to {shown_new}"


def _cards(counter: Counter) -> str:
    return ", ".join(f"{n} {card}" if n > 1 else card for card, n in sorted(counter.items()))


def _gained_lost(word: str, old: Sequence[str], new: Sequence[str]) -> list[str]:
    gained = Counter(new) - Counter(old)
    lost = Counter(old) - Counter(new)
    out = []
    if gained:
        out.append(f"{word} gained: {_cards(gained)}")
    if lost:
        out.append(f"{word} lost: {_cards(lost)}")
    return out


def _proper(views: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Lower-case nation keys of the views to the nations' own spelling."""
    names: dict[str, str] = {}
    for v in views:
        for p in v.get("players", ()):
            if p.get("nation"):
                names[p["nation"].lower()] = p["nation"]
    return names


def _hand(old: Mapping[str, Any], new: Mapping[str, Any], joined: bool) -> list[str]:
    """The cards a hand gained and lost, only when the viewer sees that hand at both ends; money cards by type."""
    parts = []
    if "hand" in new and ("hand" in old or joined):
        parts += _gained_lost("hand", old.get("hand", ()), new["hand"])
    if "money_types" in new and old.get("money_types", {}) != new["money_types"]:
        before = Counter(old.get("money_types", {}))
        after = Counter(new["money_types"])
        parts += [f"{t} money cards {before[t]} to {after[t]} ({_signed(after[t] - before[t])})"
                  for t in sorted(set(before) | set(after)) if before[t] != after[t]]
    return parts


def _nation(name: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> str | None:
    """One sentence for a nation: each number that moved, cards gained and lost, what its player may see."""
    if new is None:
        return f"{name} is no longer in the game."
    joined = old is None
    old = old or {}
    parts = []
    if old.get("player") is not None and new.get("player") != old.get("player"):
        parts.append(f"played by {new.get('player')} instead of {old.get('player')}")
    for key, word in _COUNTS:
        if key == "hand_count":  # the cards first, then the hand: its count, and the cards if the viewer sees them
            parts += _gained_lost("civilization cards", old.get("civ_cards", ()), new.get("civ_cards", ()))
        before, after = old.get(key), new.get(key)
        if key in new and before != after and not (joined and not after):
            parts.append(f"{word} {after}" if joined else _change(word, before, after))
        if key == "hand_count":
            parts += _hand(old, new, joined)
    if new.get("volunteers") is not None and old.get("volunteers") is not None and new["volunteers"] != old["volunteers"]:
        parts.append("now volunteers to roll for calamities" if new["volunteers"] else "no longer volunteers")
    if joined:
        return f"{name} joined the game, played by {new.get('player')}" + (f": {'; '.join(parts)}." if parts else ".")
    return f"{name}: {'; '.join(parts)}." if parts else None


def _units(old: Mapping[str, int], new: Mapping[str, int], noun: str) -> list[str]:
    return [
        _change(f"{nation} {noun}", old.get(nation, 0), new.get(nation, 0))
        for nation in sorted(set(old) | set(new))
        if old.get(nation, 0) != new.get(nation, 0)
    ]


def _area(name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """One sentence for an area: tokens and towns by nation, and who holds its city.

    It opens with "In": an area may bear a nation's name (Thrace, Crete, ...).
    """
    parts = _units(old.get("tokens", {}), new.get("tokens", {}), "tokens")
    parts += _units(old.get("towns", {}), new.get("towns", {}), "towns")
    if old.get("city") != new.get("city"):
        if new.get("city") is None:
            parts.append(f"{old['city']}'s city is gone")
        elif old.get("city") is None:
            parts.append(f"a city of {new['city']} stands")
        else:
            parts.append(f"the city is now {new['city']}'s, no longer {old['city']}'s")
    return f"In {name}: {'; '.join(parts)}." if parts else None


def _when(v: Mapping[str, Any]) -> str:
    return f"turn {v.get('turn')}, {v.get('phase')}"


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The differences between two views of one game, as sentences; [] when the viewer can see none.

    Order: the turn and phase, the end of the game, then each nation and each
    area (alphabetical). Numbers are told as ``old to new (change)``.
    """
    out: list[str] = []
    if (before.get("turn"), before.get("phase")) != (after.get("turn"), after.get("phase")):
        out.append(f"The game moved from {_when(before)} to {_when(after)}.")
    if bool(before.get("finished")) != bool(after.get("finished")):
        if after.get("finished"):
            scores = "; ".join(f"{s['place']}. {s['nation']} {s['total']}" for s in after.get("scores") or ())
            out.append("The game has ended" + (f": {scores}." if scores else "."))
        else:
            out.append("The game is no longer over.")
    names = _proper((before, after))
    old_nations, new_nations = before.get("nations", {}), after.get("nations", {})
    for key in sorted(set(old_nations) | set(new_nations)):
        sentence = _nation(names.get(key, key.title()), old_nations.get(key), new_nations.get(key))
        if sentence:
            out.append(sentence)
    old_areas, new_areas = before.get("areas", {}), after.get("areas", {})
    for name in sorted(set(old_areas) | set(new_areas)):
        sentence = _area(name, old_areas.get(name, {}), new_areas.get(name, {}))
        if sentence:
            out.append(sentence)
    return out


def diff_versions(game_id: str, events: Sequence[Event], a: int, b: int, viewer: str) -> list[str]:
    """What changed for ``viewer`` from version ``a`` to version ``b`` (either order) of a game's log."""
    ends = views_between(game_id, events, a, b, viewer)
    return diff(ends.before, ends.after)

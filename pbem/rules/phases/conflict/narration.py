"""Phase 4 told: token conflicts round by round, city attacks, replacements and spoils.

The card an attacker draws is named only to him, the defender and the
moderator or auditor.
"""

from __future__ import annotations

from pbem.rules.board.battle import (
    PIRATES,
)
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{p} {n}" for p, n in counts.items())


def tell_fight(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    where = f"In {d['area']} (limit {d['limit']}{', with a city' if d['city'] else ''})"
    removed = ", ".join(f"{p} {n}" for p, n in d["removed"].items() if n)
    text = f"{where} tokens fought: {_counts(d['before'])} became {_counts(d['after'])} (removed to stock: {removed or 'none'})."
    if d.get("towns"):
        lost = d.get("towns_lost", {})
        text += " Towns fought with their owners' tokens: " + ", ".join(
            f"{p} {n} (lost {lost.get(p, 0)})" for p, n in d["towns"].items()) + " (SC-15)."
    return text


def tell_split(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    how = " (by default: tokens first)" if d.get("by_default") else ""
    return f"{d['nation']} will lose {d['towns']} towns in {d['area']}, the rest of its losses there in tokens{how}."


def tell_restored(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    return (f"{d['towns']} of {d['defender']}'s towns still stand in {d['area']}: they go to stock and its city "
            "stands again (SC-16).")


def tell_found(state: GameState, event: Event, viewer: str) -> str:
    parts = [
        f"{area} ({attacker} against {'the pirate city' if defender == PIRATES else defender})"
        for area, attacker, defender in event.data["attacks"]
    ]
    return "City attacks, in the order they are resolved: " + "; ".join(parts) + "."


def _whose(defender: str) -> str:
    return "the pirate city" if defender == PIRATES else f"{defender}'s city"


def tell_failed(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    return (f"{d['attacker']}'s attack on {_whose(d['defender'])} in {d['area']} failed ({d['tokens']} tokens, "
            f"{d['needed']} needed): its {d['tokens']} tokens there are removed.")


def tell_succeeded(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    if "SC-16" in event.cites:
        return (f"{d['attacker']} attacks {_whose(d['defender'])} in {d['area']} with {d['tokens']} tokens: under "
                "Small Cities any attack breaks a city into towns.")
    return (f"{d['attacker']} attacks {_whose(d['defender'])} in {d['area']} with {d['tokens']} tokens "
            f"({d['needed']} needed): the attack succeeds.")


def tell_replaced(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    if d["defender"] == PIRATES:
        return f"The pirate city in {d['area']} is replaced by {d['placed']} Barbarian tokens."
    short = f" (of {d['due']} due; his stock was short)" if d["placed"] < d["due"] else ""
    what = "towns" if d.get("towns") else "tokens"
    return f"{d['defender']}'s city in {d['area']} is replaced by {d['placed']} of its {what}{short}."


def tell_deferral(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    if d["area"] is None:
        return f"{d['defender']} does not defer: its city in {d['city']} is replaced now."
    return f"{d['defender']}, short of stock, has its own attack in {d['area']} resolved before its city in {d['city']} is replaced."


def tell_resolved_first(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    return f"Before its city in {d['city']} is replaced, {d['defender']}'s own attacks are resolved first: {', '.join(d['areas'])}."


def tell_spoils_chosen(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    parts = []
    if d.get("draw") is not None:
        parts.append("to draw a card" if d["draw"] else "not to draw a card")
    if d.get("pillage") is not None:
        parts.append(f"to pillage {d['pillage']}")
    return f"{d['attacker']} chose, for the city taken in {d['area']}, " + " and ".join(parts) + "."


def _sees_card(viewer: str, attacker: str, defender: str) -> bool:
    return viewer in ("moderator", "auditor") or viewer in (f"player:{attacker.lower()}", f"player:{defender.lower()}")


def tell_spoils(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    parts = []
    if d["card"] is not None:
        named = f" ({d['card']})" if _sees_card(viewer, d["attacker"], d["defender"]) else ""
        parts.append(f"took a trade card{named} at random from {d['defender']}'s hand")
    if d["pillage"]:
        parts.append(f"pillaged {d['pillage']} (stock to treasury)")
    if "towns" in d:
        what = f"the city in {d['area']} and its {d['towns']} towns lost" if d.get("city") else f"{d['towns']} towns destroyed in {d['area']}"
        return f"{d['attacker']} " + (" and ".join(parts) or "took no plunder") + f" for {what} (SC-17)."
    return f"{d['attacker']} " + (" and ".join(parts) or "took no spoils") + f" for the city in {d['area']}."

"""Barbarian Hordes told: where they appear, each move and clash, where they halt, and ties chosen."""

from __future__ import annotations

from typing import Any

from pbem.rules.board.ranking import BARBARIANS
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{p} {n}" for p, n in counts.items()) or "nobody"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def tell_clash(fight: dict[str, Any]) -> str:
    """The conflict in one area, as a sentence: fights, the city attack, and who lost what."""
    parts = []
    attack = fight["attack"]
    if fight["fight"]:
        parts.append(f"tokens fought, {_counts(fight['fight']['before'])} became {_counts(fight['fight']['after'])}")
    if attack:
        owner = attack["owner"]
        if attack["succeeded"]:
            short = f" ({attack['due']} due, stock short)" if attack["placed"] < attack["due"] else ""
            parts.append(f"the Barbarians attack {owner}'s city with {attack['tokens']} ({attack['needed']} needed) and take it: "
                         f"it becomes {plural(attack['placed'], owner + ' token')}{short}, no trade card, no pillage")
        else:
            parts.append(f"the Barbarians attack {owner}'s city with {attack['tokens']} ({attack['needed']} needed) and fail: "
                         "they are removed")
    if fight["fight2"]:
        parts.append(f"then tokens fought, {_counts(fight['fight2']['before'])} became {_counts(fight['fight2']['after'])}")
    if not parts:
        here = fight["before"].get(BARBARIANS, 0)
        joined = f", {here} Barbarians there now" if here != fight["arriving"] else ""
        parts.append(f"no conflict{joined}" if len(fight["before"]) < 2 else "they co-exist within the limit")
    losses = []
    for nation, lost in fight["lost"].items():
        what = []
        if lost["city"]:
            what.append("its city")
        gone = lost["tokens"] - lost["left"]
        if gone > 0:
            what.append(plural(gone, "token"))
        if lost["city"] and lost["left"]:
            what.append(f"{lost['left']} left where the city stood")
        losses.append(f"{nation} loses {plural(lost['points'], 'unit point')} ({', '.join(what)})")
    barbarians = fight["before"].get(BARBARIANS, 0) - fight["after"].get(BARBARIANS, 0)
    if barbarians:
        losses.append(f"{plural(barbarians, 'Barbarian')} {'falls' if barbarians == 1 else 'fall'}")
    if fight.get("towns"):  # Small Cities: the counts above hold towns and tokens together (SC-9)
        kept = fight.get("towns_after", {})
        losses.append("towns counted with tokens, tokens lost first: " + ", ".join(
            f"{n} {k} towns, {kept.get(n, 0)} stand" for n, k in fight["towns"].items()))
    return "; ".join(parts) + (". " + "; ".join(losses) if losses else "") + "."


def _how(d: dict[str, Any]) -> str:
    if d.get("chooser"):
        return f", chosen by {d['chooser']} among the tied {' and '.join(d['options'])}"
    return ""


_PLACED = {
    "damage": "the start area where they do {victim} the most damage",
    "empty": "{victim} has no units in its start areas: one free of other players' units",
    "third-parties": "{victim} has no units in its start areas and none is free of other players' units",
}


def tell_appear(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    short = f" (the supply holds only {d['count']} of the {d['wanted']})" if d.get("short") else ""
    why = _PLACED[d["reason"]].format(victim=d["victim"])
    return (f"Barbarian Hordes ({d['victim']}): {plural(d['count'], 'Barbarian token')} appear in {d['area']}{short}, "
            f"{why}{_how(d)}. In {d['area']} (limit {d['clash']['limit']}): {tell_clash(d['clash'])}")


def tell_move(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    if d["reason"] == "damage":
        why = f"the neighbouring area where they do {d['victim']} the most damage ({plural(d['clash']['damage'], 'unit point')})"
    else:
        why = (f"no neighbouring area lets them hurt {d['victim']}: towards its nearest units they can hurt, "
               f"{plural(d['distance'], 'step')} away")
    verb = "moves" if d["count"] == 1 else "move"
    water = " across the water" if d.get("water") else ""
    return (f"Barbarian Hordes ({d['victim']}): {plural(d['count'], 'Barbarian')} above the limit {verb} from {d['from']}"
            f"{water} to {d['area']}, {why}{_how(d)}. In {d['area']} (limit {d['clash']['limit']}): {tell_clash(d['clash'])}")


def tell_halt(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    total = f" {d['victim']} lost {plural(d['damage'], 'unit point')} to them in all."
    if d["reason"] == "no-surplus":
        stay = (f"{plural(d['left'], 'Barbarian')} {'stays' if d['left'] == 1 else 'stay'} in {d['area']}, within its limit of {d['limit']}" if d["left"]
                else f"none is left in {d['area']}")
        return f"Barbarian Hordes ({d['victim']}): the Barbarians stop; {stay}.{total}"
    why = "have nowhere to go" if d["reason"] == "no-way" else "stop, having moved once for every area on the board,"
    return (f"Barbarian Hordes ({d['victim']}): the {plural(d['removed'], 'Barbarian')} above the limit of {d['area']} {why} "
            f"and are removed (§30.5232); {d['left']} {'stays' if d['left'] == 1 else 'stay'} there.{total}")


AVERTED = {
    "immune": "{victim} can never be the primary victim of Barbarian Hordes (§30.527); nothing happens",
    "no-start-area": "none of {victim}'s start areas is on the board in use; nothing happens",
    "no-supply": "no Barbarian tokens are left in the supply; nothing happens",
}


def tell_chosen(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    how = " (by default)" if d.get("by_default") else ""
    verb = "places the Barbarians in" if d["kind"] == "place" else "sends the Barbarians to"
    return f"Barbarian Hordes ({d['victim']}): {d['chooser']} {verb} {d['area']}{how} (tied: {', '.join(d['options'])})."

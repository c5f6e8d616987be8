"""How phase 9's city picks and unit-point losses read in the reports.

Kept apart from `resolution`, which plays the stages, so that each module
stays one thing a reader can hold in mind.
"""

from __future__ import annotations

from pbem.rules.board.battle import PIRATES
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities import nature
from pbem.rules.phases.calamities.preferences import tell_skips


def tell_struck(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    head = f"{d['calamity']} ({d['victim']}"
    head += ", secondary victims)" if d["role"] == "secondary" else ")"
    parts = []
    for c in d["cities"]:
        if c["effect"] == "reduce":
            short = f", stock short: {c['due']} due" if c["tokens"] < c["due"] else ""
            what = "eliminated (no tokens in stock)" if c["tokens"] == 0 else f"reduced to {c['tokens']} tokens{short}"
            parts.append(f"{c['owner']}'s {c['area']} {what}")
        elif c["effect"] == "erupt":
            parts.append(nature.tell_eruption(c))
        elif c["effect"] == "towns-reduction":
            parts.append(f"{c['owner']}'s {c['area']} is to be reduced under Small Cities (SC-10)")
        elif c["effect"] == "seize":
            to = "a Pirate city" if c["to"] == PIRATES else f"a city of {c['to']}"
            parts.append(f"{c['owner']}'s {c['area']} becomes {to}")
        else:
            parts.append(f"{c['owner']}'s {c['area']} is eliminated")
    how = f" (chosen by {d['chooser']}{', by default' if d.get('by_default') else ''})" if event.type == "CalamityCitiesChosen" else ""
    if event.type == "CalamityCitiesPreferred":
        how = f" (chosen by {d['chooser']}: the next of the cities it named in order of preference)"
    body = "; ".join(parts) if parts else "no city is affected"
    return f"{head}{d.get('note', '')}: {body}{how}.{tell_skips(d)}"


def tell_unused(state: GameState, event: Event, viewer: str) -> str:
    """Cities a player named in order of preference that no choice took, and why."""
    d = event.data
    named = ", ".join(d["areas"])
    if d["why"] == "not needed":
        return f"{d['calamity']}: {d['nation']}'s further cities named in order of preference were not needed: {named}."
    return (f"{d['calamity']}: of the cities {d['nation']} named in order of preference ({named}), fewer than the "
            f"{d['need']} now asked for can be chosen, so none is taken and {d['nation']} is asked.{tell_skips(d)}")


def tell_loss(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    parts = []
    for c in d["losses"]:
        if c["effect"] == "tokens":
            parts.append(f"{c['tokens']} token{'s' if c['tokens'] != 1 else ''} in {c['area']}")
        elif c["effect"] == "towns":
            parts.append(f"{c['towns']} town{'s' if c['towns'] != 1 else ''} in {c['area']}")
        else:
            what = "eliminated" if c["effect"] == "city" else "reduced"
            left = f", {c['placed']} token{'s' if c['placed'] != 1 else ''} left" if c["placed"] else ""
            parts.append(f"the city of {c['area']} {what}{left}")
    how = " (by default)" if d.get("by_default") else ""
    total = sum(c["points"] for c in d["losses"])
    return f"{d['calamity']} ({d['victim']}): {d['nation']} loses {total} unit points{how}: " + ("; ".join(parts) or "nothing") + "."


def tell_given(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    how = " (by default)" if d.get("by_default") else ""
    shares = ", ".join(f"{n} {k}" for n, k in d["shares"]) or "nobody"
    return f"{d['calamity']}: {d['victim']} gives unit points to lose{how}: {shares}."

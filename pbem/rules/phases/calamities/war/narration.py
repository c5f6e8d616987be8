"""Civil War told: the beneficiary, the factions chosen and split, the faction kept, the handover."""

from __future__ import annotations

from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState
from pbem.rules.phases.calamities.war.factions import faction_points

AVERTED_BECAUSE = {
    "victim-ranks-first": "the victim himself ranks first for beneficiary (§30.411)",
    "no-units": "the victim has no units on the board",
    "no-faction-2": "no units are left for a second faction",
    "no-faction-1": "no units were chosen for the first faction",
}


def units_text(units: list) -> str:
    return ", ".join(f"{a} {n}" if w == "tokens" else f"{a} {n} towns" if w == "towns" else f"{a} city"
                     for a, w, n in units) or "nothing"


def tell_units(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    how = " (by default)" if d.get("by_default") else ""
    return f"Civil War ({d['victim']}): {d['chooser']} puts {units_text(d['units'])} in faction 1{how}."


def tell_fought(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    parts = []
    for m in d["moves"]:
        noun = "town" if m["what"] == "towns" else "token"
        what = "the city" if m["what"] == "city" else f"{m['count']} {noun}{'s' if m['count'] != 1 else ''}"
        parts.append(f"{what} in {m['area']} " + (f"to {m['to']}" if m["to"] else "eliminated (no stock left)"))
    kept = f"{d['victim']} kept faction {d['kept']}; " if d.get("kept") else ""
    return f"Civil War ({d['victim']}) with beneficiary {d['beneficiary']}: {kept}" + ("; ".join(parts) or "nothing changes sides") + "."


def tell_split(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    one, two = d["factions"]
    lost = f" Military: {units_text(d['lost'])} lost first." if d["lost"] else ""
    return (f"Civil War ({d['victim']}):{lost} Faction 1 ({faction_points(one)} unit points): {units_text(one)}; "
            f"faction 2 ({faction_points(two)} unit points): {units_text(two)}.")


def tell_kept(state: GameState, event: Event, viewer: str) -> str:
    d = event.data
    how = " (by default)" if d.get("by_default") else ""
    return f"Civil War ({d['victim']}): {d['victim']} keeps faction {d['kept']}{how}."

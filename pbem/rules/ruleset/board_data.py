"""Reading the board: land areas, water areas, their links, name aliases and disputed values (docs/rules-data.md)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, Mapping

from pbem.rules.core.frozen import replace
from pbem.rules.ruleset.model import (
    CITY_SITES,
    DISPUTABLE,
    WATER_LINK_KINDS,
    Area,
    Water,
    WaterLink,
    frozen,
)
from pbem.rules.ruleset.source import Source, flag, parse_disputed

_AREA_COLUMNS = ("name", "board", "population_limit", "city_site", "flood_plain",
                 "flood_plain_group", "volcano", "coastal", "island", "start_nation",
                 "panel", "divider_side", "disputed")


def link_graph(nodes: Iterable[str], links: Iterable[WaterLink]) -> Mapping[str, frozenset[str]]:
    graph: dict[str, set[str]] = {n: set() for n in nodes}
    for link in links:
        graph.setdefault(link.a, set()).add(link.b)
        graph.setdefault(link.b, set()).add(link.a)
    return frozen({n: frozenset(v) for n, v in sorted(graph.items())})


def read_areas(src: Source) -> dict[str, Area]:
    areas: dict[str, Area] = {}
    for line, r in src.rows(_AREA_COLUMNS):
        name = r["name"]
        if not name:
            raise src.error(line, "area without a name")
        if name in areas:
            raise src.error(line, f"duplicate area {name!r}")
        if r["board"] not in ("main", "western"):
            raise src.error(line, f"{name}: board {r['board']!r} is not main or western")
        if r["city_site"] not in CITY_SITES:
            raise src.error(line, f"{name}: city_site {r['city_site']!r} is not one of "
                                  f"{', '.join(CITY_SITES)}")
        if r["panel"] not in ("1", "2-3", "4", "W"):
            raise src.error(line, f"{name}: panel {r['panel']!r} is not 1, 2-3, 4 or W")
        if r["divider_side"] not in ("W", "E"):
            raise src.error(line, f"{name}: divider_side {r['divider_side']!r} is not W or E")
        flood = flag(src, line, f"{name}: flood_plain", r["flood_plain"])
        if flood != bool(r["flood_plain_group"]):
            raise src.error(line, f"{name}: flood_plain and flood_plain_group disagree")
        if r["city_site"] == "white" and not flood:
            raise src.error(line, f"{name}: white city site outside a flood plain")
        areas[name] = Area(
            name=name, board=r["board"],
            population_limit=src.int_field(line, f"{name}: population_limit",
                                           r["population_limit"]),
            city_site=r["city_site"], flood_plain=flood,
            flood_plain_group=r["flood_plain_group"] or None,
            volcano=r["volcano"] or None,
            coastal=flag(src, line, f"{name}: coastal", r["coastal"]),
            island=r["island"] or None, start_nation=r["start_nation"] or None,
            panel=r["panel"], divider_side=r["divider_side"],
            disputed=frozen({f: frozen(v) for f, v in
                              parse_disputed(src, line, r["disputed"]).items()}),
        )
    if not areas:
        raise src.error(None, "no land areas")
    return areas


def read_waters(src: Source, reading: str) -> dict[str, Water]:
    waters: dict[str, Water] = {}
    for line, r in src.rows(("name", "board", "open_sea_vassal", "open_sea_literal")):
        name = r["name"]
        if name in waters:
            raise src.error(line, f"duplicate water area {name!r}")
        if r["board"] not in ("main", "western"):
            raise src.error(line, f"{name}: board {r['board']!r} is not main or western")
        vassal = flag(src, line, f"{name}: open_sea_vassal", r["open_sea_vassal"])
        literal = flag(src, line, f"{name}: open_sea_literal", r["open_sea_literal"])
        waters[name] = Water(name=name, board=r["board"],
                             open_sea=literal if reading == "literal" else vassal,
                             open_sea_vassal=vassal, open_sea_literal=literal,
                             note=r.get("note", ""))
    return waters


def read_links(src: Source, areas: Mapping[str, Area], waters: Mapping[str, Water],
                land: bool) -> list[WaterLink]:
    """Read an adjacency file.

    A border may be written once (either order) or in both directions; a file
    that writes any border both ways must write every border both ways.
    """
    columns = ("a", "b") if land else ("a", "b", "kind", "confidence")
    seen: dict[tuple[str, str], int] = {}
    out: list[WaterLink] = []
    for line, r in src.rows(columns):
        a, b = r["a"], r["b"]
        for end, other in ((a, b), (b, a)):
            if end in areas or (not land and end in waters):
                continue
            what = "water area" if end in waters else "area"
            raise src.error(line, f"unknown {'land area' if land else what} {end!r} "
                                  f"(neighbour of {other!r})")
        if a == b:
            raise src.error(line, f"self-link {a!r}")
        if (a, b) in seen:
            raise src.error(line, f"duplicate link {a} / {b} (first at line {seen[(a, b)]})")
        seen[(a, b)] = line
        if (b, a) in seen:
            continue   # the reverse of a border already read
        kind, confidence = "land", "confirmed"
        if not land:
            kind, confidence = r["kind"], r["confidence"]
            n_land = (a in areas) + (b in areas)
            want = {"coast-coast": 2, "coast-sea": 1, "sea-sea": 0}.get(kind)
            if want is None:
                raise src.error(line, f"{a} / {b}: kind {kind!r} is not one of "
                                      f"{', '.join(WATER_LINK_KINDS)}")
            if n_land != want:
                raise src.error(line, f"{a} / {b}: kind {kind} needs {want} land end(s), "
                                      f"has {n_land}")
            if confidence not in ("confirmed", "single-source"):
                raise src.error(line, f"{a} / {b}: confidence {confidence!r} is not "
                                      "confirmed or single-source")
            for end in (a, b):
                if end in areas and not areas[end].coastal:
                    raise src.error(line, f"{a} / {b}: {end} is not coastal in areas.csv")
        out.append(WaterLink(a=a, b=b, kind=kind, confidence=confidence))
    two_way = any((b, a) in seen for (a, b) in seen)
    if two_way:
        for (a, b), line in seen.items():
            if (b, a) not in seen:
                raise src.error(line, f"asymmetric link {a} -> {b}: the file lists borders "
                                      f"in both directions but not {b} -> {a}")
    return out


def read_aliases(folder: Path) -> dict[str, str]:
    """Optional aliases.csv: other spellings players may type (Rome -> Roma)."""
    if not (folder / "aliases.csv").exists():
        return {}
    src = Source(folder, "aliases.csv")
    return {r["alias"]: r["name"] for _, r in src.rows(("alias", "name"))}


def apply_disputed(areas: Mapping[str, Area], source: str) -> dict[str, Area]:
    """Replace disputed values by one source's reading (option ``disputed-areas``)."""
    if source == "majority":
        return dict(areas)
    out = {}
    for name, area in areas.items():
        changes: dict[str, Any] = {}
        for field, votes in area.disputed.items():
            if field not in DISPUTABLE:
                continue
            raw = next((v for k, v in votes.items() if k == source
                        or k.startswith(source + "-")), None)
            if raw is None:
                continue
            raw = re.sub(r"\(.*\)$", "", raw)
            if field == "population_limit" and raw.isdigit():
                changes[field] = int(raw)
            elif field == "city_site" and raw in CITY_SITES:
                changes[field] = raw
            elif field in ("coastal", "flood_plain") and raw in ("0", "1"):
                changes[field] = raw == "1"
        if "flood_plain" in changes:
            group = area.flood_plain_group or area.name
            changes["flood_plain_group"] = group if changes["flood_plain"] else None
        out[name] = replace(area, **changes) if changes else area
    return out

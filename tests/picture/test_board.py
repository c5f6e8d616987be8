"""The board picture (pbem.picture): real game states drawn as SVG, read back with xml.etree.

What a player must be able to trust: every area in play is drawn and the rest
is grey; each city, token, ship, town, Barbarian and pirate city stands in its
own area with its count and its nation's colour; the picture shows what the
viewer's view shows and nothing else; the PNG is a real image. The layout data
is checked too: every area has a region, its label point lies inside it, the
land adjacencies mostly touch, and layout.json is what the generator makes.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import struct
from dataclasses import replace
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rules.casefile import position

from pbem.picture import board_png, board_svg
from pbem.picture.board import LIMIT_SHADES, NOT_IN_PLAY
from pbem.picture.layout import LAYOUT_FILE, load_layout
from pbem.picture.pieces import nation_colour
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_for_options, ruleset_of
from pbem.rules.view import view

ROOT = Path(__file__).resolve().parents[2]
NS = {"svg": "http://www.w3.org/2000/svg"}
POSITIONS = ROOT / "pbem" / "picture" / "data" / "area_positions.csv"
RULES_DATA = ROOT / "pbem" / "rules" / "ruleset" / "data" / "advciv"

EAST = {
    "players": 4,
    "phase": "movement",
    "nations": {"Egypt": {"hand": ["Ochre", "Papyrus"]}, "Babylon": {}, "Assyria": {}, "Asia": {}},
    "areas": {
        "Thebes": {"tokens": {"Egypt": 3}},
        "Memphis": {"city": "Egypt", "tokens": {"Egypt": 1}, "ships": {"Egypt": 2}},
        "Babylon": {"city": "Babylon", "tokens": {"Babylon": 2, "Assyria": 1}},
        "Cyprus": {"tokens": {"Barbarians": 4}},
        "Sidon": {"city": "Pirates"},
        "Mikop": {"tokens": {"Asia": 5}, "ships": {"Asia": 1}},
    },
}


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode("utf-8"))


def markers(root: ET.Element, kind: str) -> dict[tuple[str, str], int]:
    """(area, nation) -> count of every marker group of one class."""
    return {(g.get("data-area"), g.get("data-nation")): int(g.get("data-count"))
            for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == kind}


def drawn_areas(root: ET.Element) -> dict[str, tuple[str, str]]:
    """area -> (status, fill) of every area drawn."""
    out = {}
    for use in root.iter("{http://www.w3.org/2000/svg}use"):
        cls = (use.get("class") or "").split()
        if cls and cls[0] == "area":
            out[use.get("data-area")] = (cls[1], use.get("fill"))
    return out


def rings(path: str) -> list[list[tuple[float, float]]]:
    """The rings of a layout path: M x y, then l with relative steps, closed by z."""
    out = []
    for ring in re.findall(r"M([^l z]+ [^l z]+)(?:l([^z]*))?z", path):
        nums = [float(v) for v in ring[0].split()]
        x, y = nums
        pts = [(x, y)]
        steps = [float(v) for v in ring[1].split()] if ring[1] else []
        for dx, dy in zip(steps[::2], steps[1::2]):
            x, y = x + dx, y + dy
            pts.append((x, y))
        out.append(pts)
    return out


def inside(point: tuple[float, float], path: str) -> bool:
    """Even-odd rule, as the picture fills areas."""
    px, py = point
    hit = False
    for ring in rings(path):
        for (x1, y1), (x2, y2) in zip(ring, ring[1:] + ring[:1]):
            if (y1 > py) != (y2 > py) and px < x1 + (py - y1) * (x2 - x1) / (y2 - y1):
                hit = not hit
    return hit


def centre(g: ET.Element) -> tuple[ET.Element, float]:
    """The coloured shape of a marker and the x of its centre (disc, square, ship's hull or house)."""
    circle, rect, paths = g.find("svg:circle", NS), g.find("svg:rect", NS), g.findall("svg:path", NS)
    if circle is not None:
        return circle, float(circle.get("cx"))
    if rect is not None:
        return rect, float(rect.get("x")) + float(rect.get("width")) / 2
    hull = paths[-1]
    first = float(re.match(r"M(-?[\d.]+)", hull.get("d")).group(1))
    return hull, first + (3.6 if "ships" in g.get("class") else 2.5)


def test_every_area_in_play_is_drawn_and_the_others_are_grey():
    state = position(EAST)
    in_play = set(view(state, "observer")["areas"])
    assert len(in_play) == len(ruleset_of(state).setup_for(4).areas_in_play) > 50
    drawn = drawn_areas(parse(board_svg(state)))
    assert set(drawn) == set(load_layout().areas)
    assert {a for a, (status, _) in drawn.items() if status == "in-play"} == in_play
    for area, (status, fill) in drawn.items():
        if status == "in-play":
            assert fill == LIMIT_SHADES[ruleset_of(state).areas[area].population_limit]
        else:
            assert fill == NOT_IN_PLAY, area


def test_the_whole_board_with_the_western_extension_is_in_play_for_eight():
    nations = ["Africa", "Iberia", "Illyria", "Thrace", "Crete", "Asia", "Assyria", "Babylon"]
    state = position({"players": 8, "phase": "movement", "options": {"western-extension": "on"},
                      "nations": {n: {} for n in nations}, "areas": {"Corduba": {"tokens": {"Iberia": 2}}}})
    svg = board_svg(state)
    drawn = drawn_areas(parse(svg))
    assert len(drawn) == 149 and all(status == "in-play" for status, _ in drawn.values())
    assert len(svg.encode("utf-8")) < 600_000
    assert markers(parse(svg), "tokens") == {("Corduba", "Iberia"): 2}


def test_pieces_stand_in_their_area_with_their_count_and_colour():
    state = position(EAST)
    root = parse(board_svg(state))
    ruleset = ruleset_of(state)
    assert markers(root, "tokens") == {("Thebes", "Egypt"): 3, ("Memphis", "Egypt"): 1, ("Babylon", "Babylon"): 2,
                                       ("Babylon", "Assyria"): 1, ("Mikop", "Asia"): 5}
    assert markers(root, "tokens barbarians") == {("Cyprus", "Barbarians"): 4}
    assert markers(root, "city") == {("Memphis", "Egypt"): 1, ("Babylon", "Babylon"): 1}
    assert markers(root, "city pirate") == {("Sidon", "Pirates"): 1}
    assert markers(root, "ships") == {("Memphis", "Egypt"): 2, ("Mikop", "Asia"): 1}
    layout = load_layout()
    for g in root.iter("{http://www.w3.org/2000/svg}g"):
        if g.get("data-count") is None:
            continue
        shape, x = centre(g)
        ax, _ = layout.areas[g.get("data-area")].anchor
        assert abs(x - ax) < 15, g.get("data-area")  # in the row under the area's own label
        assert shape.get("fill") == nation_colour(ruleset, g.get("data-nation"))
        assert all(t.text in ("P", g.get("data-count")) for t in g.findall("svg:text", NS))
        assert g.findall("svg:text", NS) or "city" in g.get("class")  # every stack shows its number
    assert nation_colour(ruleset, "Egypt") != nation_colour(ruleset, "Babylon")
    assert nation_colour(ruleset, "Barbarians") == "#1a1a1a"


def test_towns_of_small_cities_are_drawn():
    state = position({"players": 3, "phase": "movement", "options": {"variant-small-cities": "on"},
                      "nations": {"Italy": {}, "Crete": {}, "Thrace": {}},
                      "areas": {"Knossos": {"towns": {"Crete": 2}}, "Etruria": {"tokens": {"Italy": 1}}}})
    root = parse(board_svg(state))
    assert markers(root, "towns") == {("Knossos", "Crete"): 2}
    assert markers(root, "tokens") == {("Etruria", "Italy"): 1}


def test_the_picture_shows_only_what_the_view_shows():
    state = position({**EAST, "areas": {**EAST["areas"], "Etruria": {"tokens": {"Egypt": 2}}}})
    observer = board_svg(state, "observer")
    egypt = board_svg(state, "player:egypt")
    assert "Etruria" not in view(state, "observer")["areas"]  # west of the divider: not in a 4-player game
    assert ("Etruria", "Egypt") not in markers(parse(observer), "tokens")
    for svg in (observer, egypt, board_svg(state, "moderator")):
        assert "Ochre" not in svg and "Papyrus" not in svg  # hands are never drawn
    assert parse(observer).get("data-viewer") == "observer"
    assert parse(egypt).get("data-viewer") == "player:egypt"
    strip = lambda s: re.sub(r"(observer|player:egypt)", "", s)  # noqa: E731
    assert strip(observer) == strip(egypt)  # the board is public: only the caption differs
    with pytest.raises(ValueError):
        board_svg(state, "no such viewer")  # a nation not in the game is the caller's check (check_viewer)


def test_a_name_with_control_characters_is_drawn_escaped_and_the_picture_stays_readable():
    """XML cannot carry a control character: a name with ANSI escapes is shown written out, the PNG still drawn."""
    state = position(EAST)
    evil = replace(state.players[0], name="\x1b[2J\x1b[31mEVIL\x1b[0m\r\u202e")
    state = replace(state, players=(evil, *state.players[1:]))
    svg = board_svg(state, "observer")
    legend = "".join(parse(svg).find(".//svg:g[@id='legend']", NS).itertext())
    assert "Egypt (\\x1b[2J\\x1b[31mEVIL\\x1b[0m\\r\\u202e)" in legend
    assert board_png(state)[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_empty_game_draws_the_map_all_grey():
    drawn = drawn_areas(parse(board_svg(GameState(game_id="new"))))
    assert drawn and all(status == "not-in-play" for status, _ in drawn.values())


def test_the_png_is_an_image_of_sensible_size():
    png = board_png(position(EAST))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert 800 < width < 4000 and 600 < height < 4000
    assert 50_000 < len(png) < 4_000_000


def test_every_area_has_a_region_whose_label_point_lies_inside_it():
    layout = load_layout()
    assert set(layout.areas) == set(ruleset_for_options({"western-extension": "on"}).areas)
    for name, shape in layout.areas.items():
        assert shape.path.startswith("M") and rings(shape.path), name
        assert inside(shape.anchor, shape.path), f"{name}: anchor {shape.anchor} outside its region"
        for other, o in layout.areas.items():
            x0, y0, x1, y1 = o.bbox
            if other != name and x0 <= shape.anchor[0] <= x1 and y0 <= shape.anchor[1] <= y1:
                assert not inside(shape.anchor, o.path), f"{name}: anchor inside {other}"


def test_most_land_adjacencies_touch_on_the_map():
    islands = {r["name"]: r["island"] for r in csv.DictReader((RULES_DATA / "areas.csv").open(encoding="utf-8"))}
    pairs = [tuple(sorted((r["a"], r["b"]))) for r in csv.DictReader((RULES_DATA / "land_adjacency.csv").open(encoding="utf-8"))]
    same = [p for p in pairs if islands[p[0]] == islands[p[1]]]
    touching = load_layout().touching
    assert sum(p in touching for p in same) / len(same) >= 0.9


def test_every_area_has_a_real_place_in_the_positions_file():
    rows = list(csv.DictReader(POSITIONS.open(encoding="utf-8")))
    waters = {r["name"] for r in csv.DictReader((RULES_DATA / "water.csv").open(encoding="utf-8"))}
    names = [r["name"] for r in rows]
    assert len(names) == len(set(names))
    assert set(names) == set(ruleset_for_options({"western-extension": "on"}).areas) | waters
    for r in rows:
        assert -11 < float(r["lon"]) < 56 and 20 < float(r["lat"]) < 56 and r["place"], r["name"]


def _generator():
    pytest.importorskip("numpy")
    pytest.importorskip("global_land_mask")
    spec = importlib.util.spec_from_file_location("board_layout", ROOT / "tools" / "board_layout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_layout_was_made_from_the_data_as_it_stands():
    assert json.loads(LAYOUT_FILE.read_text(encoding="utf-8"))["inputs_sha256"] == _generator().inputs_digest()


def test_the_generator_makes_the_shipped_layout():
    """Slow (about 15 s): the whole layout made again from the land mask and the positions."""
    gen = _generator()
    assert gen.render(gen.build()) == LAYOUT_FILE.read_text(encoding="utf-8")

"""The board as a palette PNG for letters (pbem.picture.raster), read back with Pillow.

What a reader of a letter must be able to trust: the picture is small (a
64-colour PNG of at most 100 kB on a board full of pieces), each piece stands
where its area is in its nation's exact colour, a changed board gives a
changed picture and the same board the same bytes; a prompt's crop shows the
areas it names, outlined, at the letter's width, and never blows one small
area up to the whole picture.
"""

from __future__ import annotations

import io
import random

import pytest
from PIL import Image
from rules.casefile import position

from pbem.picture import board_png, raster
from pbem.picture.layout import crop, load_layout, rings
from pbem.picture.pieces import nation_colour
from pbem.picture.raster import HIGHLIGHT, MIN_CROP, board_image, focus_box
from pbem.rules.ruleset.rulebook import ruleset_of
from pbem.rules.view import view
from pbem.service.pictures import MAIL_WIDTH

from .test_board import EAST

SIX = ["Africa", "Crete", "Thrace", "Assyria", "Illyria", "Asia"]


def busy_case(seed: int = 31) -> dict:
    """Six nations with pieces in every area in play: tokens of one or two nations, a city on a quarter of
    the city sites, ships on a fifth of the coasts (more than a real game has at once: the worst case)."""
    rng = random.Random(seed)
    bare = position({"players": 6, "phase": "movement", "nations": {n: {} for n in SIX}})
    ruleset = ruleset_of(bare)
    areas = {}
    for name in sorted(view(bare, "observer")["areas"]):
        area = ruleset.areas[name]
        owners = rng.sample(SIX, 2 if rng.random() < 0.3 else 1)
        spec: dict = {"tokens": {n: rng.randint(1, area.population_limit) for n in owners}}
        if area.has_city_site and rng.random() < 0.25:
            spec["city"] = owners[0]
            spec["tokens"].pop(owners[0])
        if area.coastal and rng.random() < 0.2:
            spec["ships"] = {owners[0]: rng.randint(1, 3)}
        areas[name] = spec
    return {"players": 6, "phase": "movement", "turn": 9, "nations": {n: {"stock": 0} for n in SIX}, "areas": areas}


@pytest.fixture(scope="module")
def busy():
    return position(busy_case())


def rgb(image: Image.Image, index: int) -> tuple[int, int, int]:
    palette = image.getpalette()
    return tuple(palette[3 * index:3 * index + 3])


def hex_rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def pixels_of(image: Image.Image, colour: str, box: tuple[int, int, int, int] | None = None) -> int:
    """How many pixels (within ``box``) are exactly ``colour``."""
    part = image.crop(box) if box else image
    want = hex_rgb(colour)
    return sum(n for n, index in part.getcolors(256) if rgb(image, index) == want)


def anchor_px(state, area: str, width: int = MAIL_WIDTH) -> tuple[float, float]:
    """Where the area's label point lies in the whole board's picture."""
    layout = load_layout()
    x0, y0, w, _ = crop(layout, set(view(state, "observer")["areas"]))
    ax, ay = layout.areas[area].anchor
    scale = width / w
    return (ax - x0) * scale, (ay - y0) * scale


def map_height(state, width: int = MAIL_WIDTH) -> int:
    """Where the map ends and the legend strip begins in the whole board's picture."""
    _, _, w, h = crop(load_layout(), set(view(state, "observer")["areas"]))
    return round(width * h / w)


def test_a_busy_board_is_a_64_colour_png_of_at_most_100_kb(busy):
    png = board_png(busy, width=MAIL_WIDTH)
    image = Image.open(io.BytesIO(png))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert image.format == "PNG" and image.mode == "P"
    assert image.width == MAIL_WIDTH
    assert len(image.getpalette()) // 3 <= 64
    assert len(png) <= 100_000, len(png)
    shown = view(busy, "observer")
    assert sum(len(a["tokens"]) for a in shown["areas"].values()) > 60  # it is busy


def test_every_nation_on_the_board_is_drawn_in_its_own_colour(busy):
    image = board_image(busy, width=MAIL_WIDTH)
    ruleset = ruleset_of(busy)
    strip = (0, map_height(busy), image.width, image.height)
    assert image.height - map_height(busy) > 100  # the legend lies under the map, hiding none of it
    for nation in SIX:
        assert pixels_of(image, nation_colour(ruleset, nation)) > 200, nation
        assert pixels_of(image, nation_colour(ruleset, nation), strip) > 50, nation  # and is named in the legend


TOWNS = {"players": 3, "phase": "movement", "options": {"variant-small-cities": "on"},
         "nations": {"Italy": {}, "Crete": {}, "Thrace": {}},
         "areas": {"Knossos": {"towns": {"Crete": 2}}, "Etruria": {"tokens": {"Italy": 1}}}}


@pytest.mark.parametrize("case, area, nation, kind", [
    (EAST, "Thebes", "Egypt", "tokens"), (EAST, "Memphis", "Egypt", "city"), (EAST, "Cyprus", "Barbarians", "tokens"),
    (EAST, "Mikop", "Asia", "ships"), (EAST, "Sidon", "Pirates", "city"), (TOWNS, "Knossos", "Crete", "towns"),
], ids=["tokens", "city", "barbarians", "ships", "pirate-city", "towns"])
def test_a_piece_is_drawn_under_its_area_in_its_nations_colour(case, area, nation, kind):
    """The picture with the piece and without it differ only near the area, and there in the nation's colour."""
    state = position(case)
    spec = dict(case["areas"][area])
    if kind == "city":
        spec.pop("city")
    else:
        spec[kind] = {k: v for k, v in spec[kind].items() if k != nation}
    without = position({**case, "areas": {**case["areas"], area: spec}})
    a, b = board_image(state, width=MAIL_WIDTH), board_image(without, width=MAIL_WIDTH)
    diff = _diff(a, b)
    assert diff, "the piece changed nothing"
    xs, ys = [p[0] for p in diff], [p[1] for p in diff]
    ax, ay = anchor_px(state, area)
    legend_top = map_height(state)  # the legend's counts change too; it lies under the map
    near = [(x, y) for x, y in diff if abs(x - ax) < 45 and ay - 5 < y < ay + 45]
    far = set(diff) - set(near) - {(x, y) for x, y in diff if y >= legend_top}
    assert near and not far, (ax, ay, min(xs), max(xs), min(ys), max(ys))
    colour = nation_colour(ruleset_of(state), nation)
    box = (min(x for x, _ in near), min(y for _, y in near), max(x for x, _ in near) + 1, max(y for _, y in near) + 1)
    assert pixels_of(a, colour, box) > 10
    assert pixels_of(a, colour, box) > pixels_of(b, colour, box)


def _diff(a: Image.Image, b: Image.Image) -> list[tuple[int, int]]:
    """Pixels whose colour differs between two pictures of the same size."""
    pa, pb = a.convert("RGB").tobytes(), b.convert("RGB").tobytes()
    width = a.width
    return [((i // 3) % width, (i // 3) // width) for i in range(0, len(pa), 3) if pa[i:i + 3] != pb[i:i + 3]]


def test_the_same_board_gives_the_same_bytes_and_a_changed_board_other_bytes(busy):
    first = board_png(busy, width=MAIL_WIDTH)
    assert board_png(busy, width=MAIL_WIDTH) == first
    raster.clear_map_cache()  # drawn again from nothing: still the same bytes
    assert board_png(busy, width=MAIL_WIDTH) == first
    case = busy_case()
    moved = {**case["areas"], "Thebes": {"tokens": {"Asia": 5}}}
    assert board_png(position({**case, "areas": moved}), width=MAIL_WIDTH) != first


def test_the_viewer_does_not_change_the_board(busy):
    """The board is public and the PNG's caption names no viewer: every reader's picture is the same."""
    assert board_png(busy, "player:asia") == board_png(busy, "observer")


def test_a_crop_shows_the_focus_areas_at_the_letter_width_with_the_highlighted_outlined(busy):
    focus = ["Thessaly", "Macedonia", "Thrace"]
    image = board_image(busy, width=MAIL_WIDTH, focus=focus, highlight=focus[:2])
    assert image.mode == "P" and image.width == MAIL_WIDTH
    layout = load_layout()
    x, y, w, h = focus_box(layout, set(focus))
    for name in focus:
        bx0, by0, bx1, by1 = layout.areas[name].bbox
        assert x <= bx0 and y <= by0 and bx1 <= x + w and by1 <= y + h, name
    whole = crop(layout, set(view(busy, "observer")["areas"]))
    assert w < whole[2] / 3  # the areas come out several times larger than on the whole board
    assert pixels_of(image, HIGHLIGHT) > 500
    assert pixels_of(board_image(busy, width=MAIL_WIDTH, focus=focus), HIGHLIGHT) == 0
    scale = MAIL_WIDTH / w
    want = hex_rgb(HIGHLIGHT)

    def outlined(name: str) -> float:
        """The share of the area's own outline points with the highlight colour within two pixels."""
        points = [((px - x) * scale, (py - y) * scale) for ring in rings(layout.areas[name].path) for px, py in ring]
        inside = [(round(px), round(py)) for px, py in points if 2 <= px < image.width - 2 and 2 <= py < image.height - 2]
        return sum(any(rgb(image, image.getpixel((px + dx, py + dy))) == want for dx in range(-2, 3) for dy in range(-2, 3))
                   for px, py in inside) / len(inside)

    assert outlined("Thessaly") > 0.8 and outlined("Macedonia") > 0.8
    assert outlined("Thrace") < 0.5  # in the focus, not named: not outlined
    png = board_png(busy, width=MAIL_WIDTH, focus=focus, highlight=focus[:2])
    assert len(png) <= 100_000 and Image.open(io.BytesIO(png)).mode == "P"


def test_a_single_small_area_is_shown_with_its_neighbours_not_blown_up():
    layout = load_layout()
    x, y, w, h = focus_box(layout, {"Lemnos"})
    assert w >= MIN_CROP[0] and h >= MIN_CROP[1]
    bx0, by0, bx1, by1 = layout.areas["Lemnos"].bbox
    assert x <= bx0 and bx1 <= x + w and y <= by0 and by1 <= y + h
    assert sum(1 for s in layout.areas.values() if x <= s.anchor[0] <= x + w and y <= s.anchor[1] <= y + h) > 10


def test_a_crop_at_the_edge_of_the_map_stays_on_the_map_and_keeps_a_phone_friendly_shape():
    layout = load_layout()
    mx, my, mw, mh = layout.view_box
    for names in ({"Lusitania"}, {"Sudeten"}, {"Nubia"}, {"Caucasus", "Susa"}, {"Etruria", "Buhen"}):
        x, y, w, h = focus_box(layout, names)
        assert mx <= x and my <= y and x + w <= mx + mw + 0.1 and y + h <= my + mh + 0.1, names
        assert h <= w * 1.01 or w >= mw - 0.1, names  # never a tall strip on a phone


def test_focus_on_no_known_area_draws_the_whole_board(busy):
    assert board_png(busy, focus=["Atlantis"]) == board_png(busy)

"""The board picture for letters (issue 31): cairosvg's PNG of the whole SVG against the palette PNG.

Run: .venv/bin/python bench/picture.py [--rounds 9] [--save FOLDER]

Both ways draw the same positions in the same run, so the ratio holds on a
shared machine whatever its load: the reference is today's way until issue 31
(`board_svg` rasterised by cairosvg at the letter's width), the new one is
`pbem.picture.board_png` (the map rasterised once per process and part of the
board shown, the pieces drawn on it with Pillow, a palette of 64 colours).

Positions: a bot game of 6 players after 4 turns (as bench/run.py draws it),
and the same game made busy (every area in play holding tokens of one or two
nations, a city on a quarter of the city sites, ships on a fifth of the
coasts: more pieces than a real game has at once, so the bytes are an upper
bound). The crop is the busy board round the three areas of one nation's
first cities, those highlighted, as a prompt about places carries it.

Each figure is the median of ``--rounds`` rounds, each drawing the old way
then the new, wall time and the process's CPU time (which another
process's load changes less). "first" is the new way's
first picture of a part of the board in a process (the map is rasterised
then, once); a server pays it once per game size and crop, and then the
median.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import cairosvg

from pbem.picture import board_png, board_svg, raster
from pbem.picture.layout import load_layout
from pbem.rules import engine as E
from pbem.rules.core.frozen import FrozenMap
from pbem.rules.core.state import AreaState, GameState
from pbem.rules.ruleset.rulebook import ruleset_of
from pbem.rules.view import view
from pbem.service.pictures import MAIL_WIDTH
from pbem.service.projector import to_event
from pbem.service.simulate import simulate
from pbem.store.database import make_engine
from pbem.store.unit_of_work import UnitOfWork


def bot_position(tmp: Path, players: int = 6, turns: int = 4) -> GameState:
    """The state at the end of a bot game (random bots, 20% of orders missed), replayed from its log."""
    url = f"sqlite:///{tmp / 'picture.sqlite'}"
    simulate(players, turns, "bench-picture", miss=0.2, db_url=url)
    db = make_engine(url)
    with UnitOfWork(db) as uow:
        game = uow.events.all_games()[0]
        events = [to_event(r) for r in uow.events.read(game)]
    db.dispose()
    return E.fold(E.new_game(game), events)


def busy(state: GameState, seed: int = 31) -> GameState:
    """``state`` with every area in play full of pieces of the game's nations (seeded, so every run draws the same)."""
    rng = random.Random(seed)
    ruleset = ruleset_of(state)
    nations = sorted(state.nations)
    for name in sorted(view(state, "observer")["areas"]):
        area = ruleset.areas[name]
        owners = rng.sample(nations, 2 if rng.random() < 0.3 else 1)
        tokens = {n: rng.randint(1, max(1, area.population_limit)) for n in owners}
        city = owners[0] if area.has_city_site and rng.random() < 0.25 else None
        if city:
            tokens.pop(city)
        ships = {owners[0]: rng.randint(1, 3)} if area.coastal and rng.random() < 0.2 else {}
        state = state.with_area(name, AreaState(tokens=FrozenMap(tokens), city=city, ships=FrozenMap(ships)))
    return state


def focus_of(state: GameState) -> list[str]:
    """Three areas a move could name: the first area with a city (by name) and two of its neighbours on the map."""
    seen = view(state, "observer")["areas"]
    start = sorted(n for n, a in seen.items() if a["city"])[0]
    touching = load_layout().touching
    neighbours = sorted({b for a, b in touching if a == start} | {a for a, b in touching if b == start})
    return [start] + [n for n in neighbours if n in seen][:2]


def old_png(state: GameState) -> bytes:
    """The reference: the whole SVG rasterised by cairosvg at the letter's width, as before issue 31."""
    return cairosvg.svg2png(bytestring=board_svg(state).encode("utf-8"), output_width=MAIL_WIDTH)


def timed(old: Callable[[], bytes], new: Callable[[], bytes], rounds: int) -> dict[str, float]:
    """Median wall and CPU seconds of each way over ``rounds`` rounds, the two taken in turn within a round so
    that both meet the same load on a shared machine; and the bytes of each way's picture."""
    out: dict[str, list[float]] = {"old": [], "new": [], "old_cpu": [], "new_cpu": []}
    sizes = {}
    for _ in range(rounds):
        for name, draw in (("old", old), ("new", new)):
            start, cpu = time.perf_counter(), time.process_time()
            sizes[name] = len(draw())
            out[name].append(time.perf_counter() - start)
            out[name + "_cpu"].append(time.process_time() - cpu)
    figures = {name: statistics.median(values) for name, values in out.items()}
    figures.update({name + "_bytes": float(size) for name, size in sizes.items()})
    return figures


def first(draw: Callable[[], bytes]) -> float:
    """Seconds of the new way's first picture in a process: the map's raster cache emptied before."""
    raster.clear_map_cache()
    start = time.perf_counter()
    draw()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--save", type=Path, help="a folder to write each new picture into, to look at")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        played = bot_position(Path(tmp))
    full = busy(played)
    focus = focus_of(full)
    cases: list[tuple[str, GameState, Callable[[], bytes], Callable[[], bytes]]] = [
        ("bot game, 6 players after 4 turns", played, lambda: old_png(played),
         lambda: board_png(played, width=MAIL_WIDTH)),
        ("the same game made busy", full, lambda: old_png(full), lambda: board_png(full, width=MAIL_WIDTH)),
        (f"busy, cropped round {', '.join(focus)} (highlighted)", full, lambda: old_png(full),
         lambda: board_png(full, width=MAIL_WIDTH, focus=focus, highlight=focus)),
    ]
    print(f"{MAIL_WIDTH} px wide, median of {args.rounds} rounds (old and new in turn); python {sys.version.split()[0]}")
    print("| position | cairosvg (reference) | palette PNG | ratio old/new (CPU) | new, first in a process |")
    print("|---|---|---|---|---|")
    for label, _, old, new in cases:
        if args.save:
            args.save.mkdir(parents=True, exist_ok=True)
            (args.save / (label.split(",")[0].replace(" ", "-") + ".png")).write_bytes(new())
        cold = first(new)
        f = timed(old, new, args.rounds)
        print(f"| {label} | {f['old'] * 1e3:.0f} ms, {f['old_bytes'] / 1000:.0f} kB "
              f"| {f['new'] * 1e3:.1f} ms (CPU {f['new_cpu'] * 1e3:.1f} ms), {f['new_bytes'] / 1000:.0f} kB "
              f"| {f['old'] / f['new']:.1f} ({f['old_cpu'] / f['new_cpu']:.1f}) | {cold * 1e3:.0f} ms |")


if __name__ == "__main__":
    main()

"""A game's page over HTTP on a 10,000-event game: the page now, history steps, boards, explanations.

Run: .venv/bin/python bench/pages.py [--cache bench/.cache] [--requests 200]

The long game is bench/service.py's (8 greedy bots, kept in ``--cache``; the
first run plays it, a few minutes), cut after its first 10,000 events as
that bench cuts it. The pages are served by the web application `pbem serve
--http` runs (pbem.web.app.WebPages on aiohttp), on loopback, and fetched
one at a time by a client in another thread, as a reader's browser would:

* ``page now``: the moderator's and a player's page at the head, again and again (a reader reloading);
* ``history step``: the page at a version one step from the last one shown, walking back from the head;
* ``history jump``: the page at versions spread over the whole game (the slider, the turn links);
* ``board``: the board SVG at those versions;
* ``explain``: an entry's explanation;
* ``first page``: the first page of the game a fresh process serves (the log read and its history told once);
* the reference: the stylesheet, a static file through the same server and client (HTTP alone).

Figures: median and 95th percentile in milliseconds, and each median as a
multiple of the reference's, measured in the same run.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, this file's folder comes first on the path: the bench's own modules are found by name.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.append(sys.path.pop(0))

import argparse  # noqa: E402
import asyncio  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import urllib.error  # noqa: E402
import urllib.request  # noqa: E402
from datetime import datetime, timezone  # noqa: E402

from service import big_game, ten_thousand_game  # noqa: E402

from pbem.mail.tokens import page_token  # noqa: E402
from pbem.service.links import link_generation  # noqa: E402
from pbem.service.projector import RECENT, load_state  # noqa: E402
from pbem.service.settings import Settings  # noqa: E402
from pbem.store.database import make_reader  # noqa: E402
from pbem.store.unit_of_work import UnitOfWork  # noqa: E402
from pbem.web.app import WebPages, bound_port, start_web  # noqa: E402


def _fetch(url: str) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as answer:
        answer.read()
        assert answer.status == 200, (url, answer.status)
    return (time.perf_counter() - start) * 1000


def _figures(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.95) - 1)]


async def _no_orders(raw: bytes, sender: str, recipients: list[str]) -> None:
    raise AssertionError("the bench sends no orders")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path(__file__).resolve().parent / ".cache")
    parser.add_argument("--requests", type=int, default=200, help="requests of each kind")
    args = parser.parse_args()
    url, game, _seed = big_game(args.cache)
    tmp = Path(tempfile.mkdtemp(prefix="pbem-pages-"))
    cut = ten_thousand_game(url, game, tmp)
    reader_db = make_reader(cut)
    with UnitOfWork(reader_db) as uow:
        state = load_state(uow, game)
        key = bytes.fromhex(uow.games.get(game).reply_secret)
    player = f"p{state.players[0].id}"
    links = {who: f"/g/{game}/{who}/{page_token(key, game, who, link_generation(state, who))}/"
             for who in ("moderator", player)}
    head = state.version

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    pages = WebPages(reader_db, Settings(), _no_orders, clock=lambda: datetime.now(timezone.utc),
                     per_link_a_minute=10**9)  # one reader fetching thousands of pages a minute, on purpose
    runner = asyncio.run_coroutine_threadsafe(start_web(pages, "127.0.0.1", 0), loop).result()
    base = f"http://127.0.0.1:{bound_port(runner)}"
    n = args.requests
    times: dict[str, list[float]] = {}
    RECENT.forget()
    times["first page"] = [_fetch(base + links["moderator"])]
    times["first page (player)"] = [_fetch(base + links[player])]
    times["reference: static file"] = [_fetch(base + "/static/web.css") for _ in range(n)]
    times["page now"] = [_fetch(base + links[who]) for _ in range(n // 2) for who in links]
    times["history step"] = [_fetch(base + links[player] + f"?v={head - i}") for i in range(1, n + 1)]
    spread = [max(1, head * k // n) for k in range(1, n + 1)]
    times["history jump"] = [_fetch(base + links["moderator"] + f"?v={v}") for v in spread]
    times["board"] = [_fetch(base + links[player] + f"board.svg?v={v}") for v in spread]
    entries = [v for v in spread if v > 1][: max(10, n // 10)]
    explained = []
    for v in entries:
        try:
            explained.append(_fetch(base + links["moderator"] + f"explain/{v}"))
        except urllib.error.HTTPError:  # an event the moderator is not told of has no entry to explain
            continue
    times["explain"] = explained
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result()
    loop.call_soon_threadsafe(loop.stop)
    reader_db.dispose()

    reference, _ = _figures(times["reference: static file"])
    print(f"# a {head}-event game ({game}), {n} requests of each kind, one at a time over loopback")
    print("| request | n | median (ms) | p95 (ms) | median / static file |")
    print("|---|---|---|---|---|")
    for kind, taken in times.items():
        median, p95 = _figures(taken)
        print(f"| {kind} | {len(taken)} | {median:.1f} | {p95:.1f} | {median / reference:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

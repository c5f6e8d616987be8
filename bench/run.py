"""Benchmarks of the hot paths: inbound mail handling, event appends, replay.

Run: .venv/bin/python bench/run.py [--rounds 5]
Prints medians over rounds (timings on shared machines are noisy: compare
ratios and medians, not single numbers). Figures go in docs/performance.md.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

from pbem.mail.tokens import reply_address
from pbem.picture import board_png, board_svg
from pbem.rules import engine as E
from pbem.rules.core.codec import state_from_json, state_to_json
from pbem.service.games import NewPlayer, create_game
from pbem.service.inbound import ingest
from pbem.service.pictures import MAIL_WIDTH
from pbem.service.projector import to_event
from pbem.service.settings import Settings
from pbem.service.simulate import simulate
from pbem.store.database import ensure_schema, make_engine
from pbem.store.events import NewEvent
from pbem.store.unit_of_work import UnitOfWork

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _fresh(tmp: Path, name: str):
    url = f"sqlite:///{tmp / (name + '.sqlite')}"
    db = make_engine(url)
    ensure_schema(db)
    return db, replace(Settings(), db_url=url, maildir=tmp / "mail", board_pictures=False)


def bench_append(tmp: Path, n: int) -> float:
    """Seconds per event appended, one event per transaction (the mail path's shape)."""
    db, _ = _fresh(tmp, f"append{time.monotonic_ns()}")
    start = time.perf_counter()
    for version in range(n):
        with UnitOfWork(db) as uow:
            uow.events.append("bench", version, [NewEvent("DeadlineSet", {"due": str(version)}, {"actor": "bench"})])
    took = (time.perf_counter() - start) / n
    db.dispose()
    return took


def bench_mail(tmp: Path, n: int, secret: bool = False) -> float:
    """Seconds per inbound message: parse, authenticate, read orders, acknowledge, commit.

    By default the message is a reply to the player's reply address (HMAC
    token); with ``secret`` it is a fresh mail with a SECRET line (one scrypt
    check, slow by design).
    """
    db, settings = _fresh(tmp, f"mail{time.monotonic_ns()}")
    people = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.org"), NewPlayer("Cy", "cy@example.org")]
    create_game(db, settings, "b1", people, seed="bench", now=NOW)
    with UnitOfWork(db) as uow:
        ann = uow.players.by_name("b1", "Ann")
        uow.players.set_secret(ann.id, "benchsecret")
        key = bytes.fromhex(uow.games.get("b1").reply_secret)
    to = f"pbem+b1@{settings.domain}" if secret else reply_address(key, "b1", ann.id, settings.domain)
    body = "SECRET benchsecret\n" if secret else ""
    messages = []
    for i in range(n):
        mail = EmailMessage()
        mail["From"] = "Ann <ann@example.org>"
        mail["To"] = to
        mail["Subject"] = f"question {i}"
        mail["Message-ID"] = make_msgid()
        mail.set_content(body + "HELP CARD Astronomy\n\n-- \nAnn\n")
        messages.append(mail.as_bytes())
    start = time.perf_counter()
    for i, raw in enumerate(messages):
        outcome = ingest(db, settings, raw, "ann@example.org", [to], NOW + timedelta(seconds=i))
        assert outcome.status == "done", outcome
    took = (time.perf_counter() - start) / n
    db.dispose()
    return took


VARIANTS = {
    "base": {},
    "No-Trading": {"variant-no-trading": "on"},
    "Small Cities": {"variant-small-cities": "on"},
    "both": {"variant-no-trading": "on", "variant-small-cities": "on"},
}


def bench_variant_replay(tmp: Path, repeats: int) -> dict[str, float]:
    """Seconds per event to fold, from zero, a 6-player 8-turn bot game of each variant (the base game included)."""
    out = {}
    for name, options in VARIANTS.items():
        url = f"sqlite:///{tmp / f'variant{time.monotonic_ns()}.sqlite'}"
        simulate(6, 8, "bench-variant", options={**options, "last-turn": "8"}, miss=0.2, db_url=url, strategy="greedy")
        db = make_engine(url)
        with UnitOfWork(db) as uow:
            game = uow.events.all_games()[0]
            events = [to_event(r) for r in uow.events.read(game)]
        db.dispose()
        start = time.perf_counter()
        for _ in range(repeats):
            E.fold(E.new_game(game), events)
        out[name] = (time.perf_counter() - start) / repeats / len(events)
    return out


def _bot_game(tmp: Path, name: str, players: int, turns: int) -> tuple[str, list]:
    """A bot game played into a fresh database: its id and its events."""
    url = f"sqlite:///{tmp / f'{name}{time.monotonic_ns()}.sqlite'}"
    simulate(players, turns, f"bench-{name}", miss=0.2, db_url=url)
    db = make_engine(url)
    with UnitOfWork(db) as uow:
        game = uow.events.all_games()[0]
        events = [to_event(r) for r in uow.events.read(game)]
    db.dispose()
    return game, events


def bench_replay(tmp: Path, repeats: int) -> tuple[float, float, int]:
    """Seconds to fold a simulated game's log from zero, and to decode a snapshot of its end."""
    game, events = _bot_game(tmp, "replay", 8, 3)
    start = time.perf_counter()
    for _ in range(repeats):
        final = E.fold(E.new_game(game), events)
    fold = (time.perf_counter() - start) / repeats
    text = state_to_json(final)
    start = time.perf_counter()
    for _ in range(repeats):
        state_from_json(text)
    decode = (time.perf_counter() - start) / repeats
    return fold, decode, len(events)


def bench_picture(tmp: Path) -> tuple[float, float, float, int]:
    """The board of a 6-player game after 4 turns: its SVG, its PNG at a letter's width, and (the reference a
    phase end pays anyway) replaying the game's log from zero; each once. Also the PNG's size."""
    game, events = _bot_game(tmp, "picture", 6, 4)
    start = time.perf_counter()
    state = E.fold(E.new_game(game), events)
    replayed = time.perf_counter() - start
    start = time.perf_counter()
    board_svg(state)
    svg = time.perf_counter() - start
    start = time.perf_counter()
    png = board_png(state, width=MAIL_WIDTH)
    return svg, time.perf_counter() - start, replayed, len(png)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    appends, mails, secret_mails, folds, decodes = [], [], [], [], []
    pictures: list[tuple[float, float, float]] = []
    png_bytes = 0
    variants: dict[str, list[float]] = {name: [] for name in VARIANTS}
    n_events = 0
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            appends.append(bench_append(Path(tmp), 200))
            mails.append(bench_mail(Path(tmp), 50))
            secret_mails.append(bench_mail(Path(tmp), 20, secret=True))
            fold, decode, n_events = bench_replay(Path(tmp), 20)
            folds.append(fold)
            decodes.append(decode)
            for name, took in bench_variant_replay(Path(tmp), 5).items():
                variants[name].append(took)
            svg, png, replayed, png_bytes = bench_picture(Path(tmp))
            pictures.append((svg, png, replayed))
    med = statistics.median
    print(f"append, one event per transaction (SQLite, WAL, synchronous=FULL): median {med(appends) * 1e3:.2f} ms/event")
    print(f"inbound reply (token), stored to acknowledged (SQLite): median {med(mails) * 1e3:.1f} ms/message ({1 / med(mails):.0f} messages/s)")
    print(f"inbound fresh mail with SECRET (one scrypt check): median {med(secret_mails) * 1e3:.1f} ms/message (ratio to a reply {med(secret_mails) / med(mails):.1f})")
    print(f"replay from zero of a {n_events}-event simulated game: median {med(folds) * 1e3:.2f} ms ({n_events / med(folds):.0f} events/s)")
    print(f"snapshot decode of the same game's end state: median {med(decodes) * 1e3:.2f} ms (replay/snapshot ratio {med(folds) / med(decodes):.1f})")
    svg, png, replayed = (med(p[i] for p in pictures) for i in range(3))
    print(f"board picture, 6 players after 4 turns: SVG median {svg * 1e3:.1f} ms, PNG {png * 1e3:.0f} ms at "
          f"{MAIL_WIDTH} px ({png_bytes // 1000} kB); ratio PNG/replay of the game {png / replayed:.1f}")
    base = med(variants["base"])
    for name, times in variants.items():
        print(f"replay per event, 6 players, 8 turns, {name}: median {med(times) * 1e6:.1f} us (ratio to the base game {med(times) / base:.2f})")


if __name__ == "__main__":
    main()

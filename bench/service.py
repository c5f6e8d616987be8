"""The service at the limits issue 17 sets: inbound mail, `pbem ingest`'s start-up, replay, verify, a bot game;
and a past version of the long game as `pbem state --at` loads it (issue 30: at most 0.3 s).

Run: .venv/bin/python bench/service.py [--rounds 5] [--only inbound,bot,outbox]   (`make bench` runs it after bench/store.py)

Each figure is the median of ``--rounds`` rounds on the same machine, with a
reference measured in the same run where one makes sense (an interpreter
that does nothing, for start-up; the fold alone, for replay from the store).
The past versions (``--only past``) are timed against the replay from zero of the
same versions. The 10,000-event game is played once, by greedy bots (8 players), into a
SQLite file that is kept in ``--cache`` (default ``bench/.cache``) for the
next run; delete it after changing the rules.

Neither inbound mail nor the bot game delivers the letters it queues (they stay in the outbox): the outbox part
delivers a backlog of letters as `pbem flush` does, one letter at a time under its lease, into a Maildir and, to
show the outbox's own cost alone, into memory.

Inbound mail, the bot game and the outbox wait for the disk at every commit (SQLite in
WAL mode with ``synchronous=FULL``), so each round also times the same
durable commit with the bare driver (one small row, ``BEGIN IMMEDIATE``):
the floor that commit puts under them on this disk, whatever the code does.
Both also report the CPU time they took, which the disk does not change.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from pathlib import Path

from sqlalchemy import text
from store import disk_commit

from pbem.audit.rederive import rederive
from pbem.mail.outbound import MaildirDelivery, MemoryTransport
from pbem.mail.tokens import reply_address
from pbem.rules import engine as E
from pbem.rules.engine import is_input
from pbem.service.games import NewPlayer, create_game
from pbem.service.inbound import ingest
from pbem.service.outbound import flush_all
from pbem.service.projector import (
    RECENT,
    SNAPSHOT_EVERY,
    check_log,
    checked_log,
    load_state,
    readable,
    replay,
    replay_stored,
    to_event,
)
from pbem.service.settings import Settings
from pbem.service.simulate import simulate
from pbem.service.standing import standings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork
from pbem.store.verify import verify_chain

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
#: The `pbem` command as installed (its launcher takes the fast path for `pbem ingest`).
PBEM = str(Path(sys.executable).parent / "pbem")
BIG_GAME_EVENTS = 10_000
PEOPLE = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.org"), NewPlayer("Cy", "cy@example.org")]


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]


# -- inbound mail -------------------------------------------------------------------------------


def _mail_world(tmp: Path):
    url = f"sqlite:///{tmp / f'mail{time.monotonic_ns()}.sqlite'}"
    db = make_engine(url)
    ensure_schema(db)
    settings = replace(Settings(), db_url=url, maildir=tmp / "mail", board_pictures=False)
    create_game(db, settings, "b1", PEOPLE, seed="bench", now=NOW)
    with UnitOfWork(db) as uow:
        key = bytes.fromhex(uow.games.get("b1").reply_secret)
        players = {p.name: p.id for p in uow.players.list("b1")}
    return db, settings, key, players


def _ordinary(i: int, sender: NewPlayer, to: str) -> bytes:
    """A player's ordinary mail: a reply to the server's letter with a press message or a question in it."""
    mail = EmailMessage()
    mail["From"] = f"{sender.name} <{sender.email}>"
    mail["To"] = to
    mail["Subject"] = "Re: [b1] your turn"
    mail["Message-ID"] = f"<bench-{i}-{time.monotonic_ns()}@example.org>"
    body = f"PRESS TO ALL: round {i}, who will trade Ochre?\n" if i % 2 else "HELP CARD Astronomy\n"
    mail.set_content(body + "\n-- \n" + sender.name + "\n")
    return mail.as_bytes()


def durable_commit(tmp: Path, n: int = 200) -> float:
    """Median seconds of one durable commit of one small row with the bare driver, as pbem's store commits
    (WAL, ``synchronous=FULL``, ``BEGIN IMMEDIATE``): the disk's floor under every unit of work."""
    return disk_commit(tmp / f"commit{time.monotonic_ns()}.sqlite", n)


def inbound(tmp: Path, n: int) -> tuple[float, list[float], float]:
    """Messages per second through store -> authenticate -> read orders -> record -> acknowledge -> commit,
    each message's latency, and the CPU seconds per message."""
    db, settings, key, players = _mail_world(tmp)
    messages = []
    for i in range(n):
        sender = PEOPLE[i % len(PEOPLE)]
        to = reply_address(key, "b1", players[sender.name], settings.domain)
        messages.append((_ordinary(i, sender, to), sender.email, to))
    latencies = []
    start, cpu = time.perf_counter(), time.process_time()
    for i, (raw, sender, to) in enumerate(messages):
        began = time.perf_counter()
        outcome = ingest(db, settings, raw, sender, [to], NOW + timedelta(seconds=i))
        latencies.append(time.perf_counter() - began)
        assert outcome.status == "done", outcome
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    db.dispose()
    return n / took, latencies, cpu / n


# -- the outbox ---------------------------------------------------------------------------------------


def outbox(tmp: Path, n: int, into_maildir: bool) -> tuple[float, float]:
    """Letters per second delivered by `flush_all` (what `pbem flush` runs) from a backlog of ``n`` (SQLite; each
    letter claimed under its lease, delivered, marked sent), and CPU s a letter: into a Maildir (each letter
    written and flushed to disk), or into memory (the outbox's own work alone)."""
    url = f"sqlite:///{tmp / f'outbox{time.monotonic_ns()}.sqlite'}"
    db = make_engine(url)
    ensure_schema(db)
    settings = replace(Settings(), db_url=url, maildir=tmp / f"outbox-mail{time.monotonic_ns()}")
    with UnitOfWork(db) as uow:
        for i in range(n):
            recipient = PEOPLE[i % len(PEOPLE)].email
            uow.outbox.enqueue(message_id=f"<bench-out-{i}@example.org>", recipient=recipient, kind="ack",
                               game_id=None, now=NOW,
                               raw=f"Message-ID: <bench-out-{i}@example.org>\r\nTo: {recipient}\r\n\r\nA letter.\r\n".encode())
    transport = MaildirDelivery(settings.maildir) if into_maildir else MemoryTransport()
    start, cpu = time.perf_counter(), time.process_time()
    sent = asyncio.run(flush_all(db, transport, settings.sender, lambda: NOW, settings=settings))
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert sent == n, sent
    db.dispose()
    return n / took, cpu / n


# -- pbem ingest's start-up ------------------------------------------------------------------------


def _wall(argv: list[str], stdin: bytes = b"", env: dict | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, input=stdin, capture_output=True, env=env, check=True)
    return time.perf_counter() - start


def _serve(env: dict, cwd: Path) -> subprocess.Popen:
    """A real `pbem serve` on the database of ``env``, once it listens."""
    proc = subprocess.Popen([PBEM, "serve", "--listen", "127.0.0.1:0"], env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if "listening for" in line:
            return proc
    raise SystemExit("pbem serve did not start: " + (proc.stderr.read() or ""))


def ingest_start_up(tmp: Path) -> dict[str, float]:
    """Wall time of `pbem ingest` of one ordinary mail with a server running (it spools) and without one (it
    does the whole job); and of the interpreter doing nothing and of `pbem --help`, for reference."""
    db, settings, key, players = _mail_world(tmp)
    db.dispose()
    to = reply_address(key, "b1", players["Ann"], settings.domain)
    env = {**os.environ, "PBEM_DATABASE_URL": settings.db_url, "PBEM_MAILDIR": str(tmp / "mail"),
           "PBEM_BOARD_PICTURES": "0"}
    ingest_one = [PBEM, "ingest", "--from", "ann@example.org", "--to", to]
    out = {
        "python doing nothing": _wall([sys.executable, "-c", "pass"]),
        "pbem --help": _wall([PBEM, "--help"], env=env),
        "pbem ingest, no server (the whole job)": _wall(ingest_one, _ordinary(1, PEOPLE[0], to), env),
    }
    server = _serve(env, tmp)
    try:
        out["pbem ingest, a server running (spooled)"] = _wall(ingest_one, _ordinary(2, PEOPLE[0], to), env)
    finally:
        server.terminate()
        server.wait(60)
    return out


# -- the long game: replay and verify --------------------------------------------------------------


def big_game(cache: Path) -> tuple[str, str, str]:
    """A bot game of at least 10,000 events (played once, then kept): its URL, id and secret seed."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / "game-10k.sqlite"
    url = f"sqlite:///{path}"
    if not path.exists():
        print(f"playing the {BIG_GAME_EVENTS}-event game once into {path} (8 greedy bots; a few minutes)", flush=True)
        simulate(8, 200, "bench-10k", options={"last-turn": "200"}, miss=0.2, db_url=url, strategy="greedy")
    db = make_engine(url)
    with UnitOfWork(db) as uow:
        game = uow.events.all_games()[0]
        count = uow.events.count(game)
        seed = uow.games.get(game).secret_seed
    db.dispose()
    if count < BIG_GAME_EVENTS:
        raise SystemExit(f"{path} holds {count} events, fewer than {BIG_GAME_EVENTS}: delete it and run again")
    return url, game, seed


def _ten_thousand(recorded: list) -> int:
    """The version the first 10,000 events end at, moved back to the end of a batch (a log cut where one
    could have been): the events after it start with a player's or the clock's input."""
    events = readable(recorded)
    cut = min(BIG_GAME_EVENTS, len(events))
    while cut < len(events) and not is_input(events[cut]):
        cut -= 1
    return cut


def replay_and_verify(url: str, game: str, seed: str) -> dict[str, float]:
    """Seconds to read the game's first 10,000 events (whole rows, decoded into events), to fold them from zero
    (events in memory), to read and fold them from the store with no snapshot or remembered state (as
    `load_state` does: the columns a fold needs; and, for comparison, whole rows), and to verify them as
    `pbem verify` does (hash chain, then re-derivation)."""
    db = make_engine(url)
    RECENT.forget()
    with UnitOfWork(db) as uow:
        upto = _ten_thousand(uow.events.read(game))
    start = time.perf_counter()
    with UnitOfWork(db) as uow:
        recorded = uow.events.read(game, upto=upto)
    events = readable(recorded)
    read = time.perf_counter() - start
    start = time.perf_counter()
    E.fold(E.new_game(game), events)
    fold = time.perf_counter() - start
    start = time.perf_counter()
    with UnitOfWork(db) as uow:
        replay(game, uow.events.read(game, upto=upto))
    whole_rows = time.perf_counter() - start
    start = time.perf_counter()
    with UnitOfWork(db) as uow:
        state, _ = replay_stored(uow, game, upto=upto)  # what load_state does from no snapshot
    from_store = time.perf_counter() - start
    assert state.version == upto
    start = time.perf_counter()
    with UnitOfWork(db) as uow:
        recorded = uow.events.read(game, upto=upto)
    assert verify_chain(recorded).ok
    result = rederive(game, [to_event(r) for r in recorded], seed)
    assert result.ok, result
    verify = time.perf_counter() - start
    db.dispose()
    return {"events": len(events), "read": read, "fold": fold, "read and fold": from_store,
            "read whole rows and fold": whole_rows, "verify": verify}


def _count(url: str, game: str) -> int:
    db = make_engine(url)
    with UnitOfWork(db) as uow:
        count = uow.events.count(game)
    db.dispose()
    return count


def verify_command(url: str, game: str) -> float:
    """Wall time of the command itself, `pbem verify GAME`, start-up included, on the whole game (all its events)."""
    return _wall([sys.executable, "-m", "pbem.cli", "--db", url, "verify", game])


# -- a past version of the long game: `pbem state --at` ------------------------------------------------

#: How many versions of the 10,000-event game `past_versions` loads, spread evenly, each the last one before a
#: snapshot (the longest fold after one: the worst case of the snapshot interval).
PAST_VERSIONS = 10


def ten_thousand_game(url: str, game: str, tmp: Path) -> str:
    """A copy of the long game cut after its first 10,000 events (at a batch's end, `_ten_thousand`), with its
    snapshots up to there: a game of 10,000 events as the service left it, for the commands that read a
    whole log (`pbem state` checks the whole chain). Its URL."""
    db = make_engine(url)
    with UnitOfWork(db) as uow:
        cut = _ten_thousand(uow.events.read(game))
    db.dispose()
    path = tmp / "game-10k-cut.sqlite"
    if path.exists():
        path.unlink()
    shutil.copyfile(url.removeprefix("sqlite:///"), path)
    copy = f"sqlite:///{path}"
    db = make_engine(copy)
    with db.begin() as conn:
        conn.execute(text("DELETE FROM events WHERE game_id = :g AND version > :v"), {"g": game, "v": cut})
        conn.execute(text("DELETE FROM snapshots WHERE game_id = :g AND version > :v"), {"g": game, "v": cut})
    db.dispose()
    return copy


def past_versions(url: str, game: str) -> dict[str, list[float]]:
    """Seconds to load versions spread over a 10,000-event game as `pbem state GAME --at V` does, in a cold
    process (no remembered state): the whole chain checked from the stored texts (`check_log`, the "check"),
    then the current state for the viewer's check and version V, each from its nearest snapshot with the
    events after it folded (the "load"); as the command did before issue 30 (the whole log read, decoded and
    its chain checked, then the same loads); and, the reference, the replay from zero of each version (no
    snapshot: `replay_stored` from version 0, what a game without snapshots costs). Also `pbem game list`'s
    standing of the game, cold."""
    db = make_engine(url)
    head = _count(url, game)
    every = SNAPSHOT_EVERY
    versions = [max(1, (head * k // PAST_VERSIONS) // every * every - 1) for k in range(1, PAST_VERSIONS + 1)]
    times: dict[str, list[float]] = {"check": [], "load": [], "before": [], "zero": [], "list": []}
    for version in versions:
        RECENT.forget()
        start = time.perf_counter()
        with UnitOfWork(db) as uow:
            (listed,) = standings(uow)
        times["list"].append(time.perf_counter() - start)
        assert listed.version == head
        RECENT.forget()
        start = time.perf_counter()
        with UnitOfWork(db) as uow:
            check_log(uow, game)
            checked = time.perf_counter()
            load_state(uow, game)
            past = load_state(uow, game, upto=version)
        times["check"].append(checked - start)
        times["load"].append(time.perf_counter() - checked)
        RECENT.forget()
        start = time.perf_counter()
        with UnitOfWork(db) as uow:
            checked_log(uow, game)
            load_state(uow, game)
            load_state(uow, game, upto=version)
        times["before"].append(time.perf_counter() - start)
        start = time.perf_counter()
        with UnitOfWork(db) as uow:
            zero, _ = replay_stored(uow, game, upto=version)
        times["zero"].append(time.perf_counter() - start)
        assert past == zero and past.version == version, version
    RECENT.forget()
    db.dispose()
    return times


def state_at_command(url: str, game: str) -> tuple[float, float]:
    """Wall time of `pbem state GAME --at V --json` (V the middle version) and of `pbem --help`, the start-up
    alone, in the same run."""
    command = _wall([PBEM, "--db", url, "state", game, "--at", str(_count(url, game) // 2), "--as", "moderator",
                     "--json"])
    return command, _wall([PBEM, "--help"])


# -- a bot game ----------------------------------------------------------------------------------------


def bot_game(tmp: Path) -> tuple[float, float, int]:
    """Seconds for 8 planner bots to play 20 turns through the service layer (SQLite, letters written), the CPU
    seconds of it, and its durable commits (the game's creation, then one per order and per deadline passed)."""
    url = f"sqlite:///{tmp / f'bots{time.monotonic_ns()}.sqlite'}"
    start, cpu = time.perf_counter(), time.process_time()
    summary = simulate(8, 20, "bench-bots", strategy="planner", db_url=url)
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    return took, cpu, 1 + summary.orders_sent + summary.deadlines_missed + summary.deadlines_waited


PARTS = ("inbound", "start-up", "replay", "past", "bot", "outbox")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--mails", type=int, default=600)
    parser.add_argument("--letters", type=int, default=1000, help="the outbox's backlog")
    parser.add_argument("--cache", type=Path, default=Path(__file__).parent / ".cache")
    parser.add_argument("--skip-bot-game", action="store_true")
    parser.add_argument("--only", default=",".join(PARTS),
                        help="the parts to run, of " + ", ".join(PARTS) + " (default: all); the bot game runs "
                             "in every other round")
    args = parser.parse_args()
    parts = {p.strip() for p in args.only.split(",") if p.strip()}
    if parts - set(PARTS):
        parser.error(f"unknown part(s): {', '.join(sorted(parts - set(PARTS)))}; the parts are {', '.join(PARTS)}")
    if args.skip_bot_game:
        parts.discard("bot")
    if parts & {"replay", "past"}:
        url, game, seed = big_game(args.cache)
        total = _count(url, game)
    pasts: list[dict[str, list[float]]] = []
    cut_url, cut_events = "", 0
    commands: list[tuple[float, float]] = []
    rates, latencies, cpus, starts, replays, verifies, bots, commits = [], [], [], [], [], [], [], []
    outboxes: dict[str, list[tuple[float, float]]] = {"a Maildir": [], "memory": []}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            if parts & {"inbound", "bot", "outbox"}:
                commits.append(durable_commit(Path(tmp)))
            if "inbound" in parts:
                rate, lat, cpu = inbound(Path(tmp), args.mails)
                rates.append(rate)
                latencies.extend(lat)
                cpus.append(cpu)
            if "start-up" in parts:
                starts.append(ingest_start_up(Path(tmp)))
            if "replay" in parts:
                replays.append(replay_and_verify(url, game, seed))
                verifies.append(verify_command(url, game))
            if "past" in parts:
                if not cut_url:
                    cut_url = ten_thousand_game(url, game, Path(tmp))
                    cut_events = _count(cut_url, game)
                pasts.append(past_versions(cut_url, game))
                commands.append(state_at_command(cut_url, game))
            if "bot" in parts and (round_ % 2 == 0 or args.rounds == 1):
                bots.append(bot_game(Path(tmp)))
            if "outbox" in parts:
                outboxes["a Maildir"].append(outbox(Path(tmp), args.letters, into_maildir=True))
                outboxes["memory"].append(outbox(Path(tmp), args.letters, into_maildir=False))
    if commits:
        print(f"one durable commit with the bare driver (WAL, synchronous=FULL), the disk's floor: median "
              f"{_median(commits) * 1e3:.2f} ms")
    if rates:
        print(f"inbound ordinary mail (SQLite, in process): median {_median(rates):.0f} mails/s; latency median "
              f"{_median(latencies) * 1e3:.1f} ms, p99 {_p99(latencies) * 1e3:.1f} ms, max {max(latencies) * 1e3:.1f} ms "
              f"({len(latencies)} mails); CPU median {_median(cpus) * 1e3:.2f} ms a mail; two durable commits a mail")
    for key in (starts[0] if starts else ()):
        print(f"start-up, {key}: median {_median([s[key] for s in starts]) * 1e3:.0f} ms")
    if replays:
        print(f"the {replays[0]['events']}-event game:")
        for key in ("read", "fold", "read and fold", "read whole rows and fold", "verify"):
            print(f"  {key}: median {_median([r[key] for r in replays]) * 1e3:.0f} ms")
        print(f"  `pbem verify` as a command on the whole game ({total} events), start-up included: median "
              f"{_median(verifies):.2f} s")
    if pasts:
        check, load, before, zero, listed = ([t for p in pasts for t in p[key]]
                                             for key in ("check", "load", "before", "zero", "list"))
        now = [c + lo for c, lo in zip(check, load)]
        print(f"a past version of a {cut_events}-event game (the long game cut there), {PAST_VERSIONS} "
              f"versions spread over it, each the last before a snapshot ({len(now)} loads, cold):")
        print(f"  as `pbem state --at` loads it: median {_median(now) * 1e3:.0f} ms, max {max(now) * 1e3:.0f} ms; of "
              f"which the whole chain checked from the stored texts {_median(check) * 1e3:.0f} ms, the current state "
              f"and V from their snapshots {_median(load) * 1e3:.1f} ms (medians)")
        print(f"  as it did before issue 30 (the whole log read, decoded and checked first): median "
              f"{_median(before) * 1e3:.0f} ms, max {max(before) * 1e3:.0f} ms")
        print(f"  the replay from zero (the reference): median {_median(zero) * 1e3:.0f} ms, max {max(zero) * 1e3:.0f} ms; "
              f"ratios of medians to it: the command's load {_median(now) / _median(zero):.2f}, before "
              f"{_median(before) / _median(zero):.2f}, the snapshot load alone {_median(load) / _median(zero):.3f}")
        print(f"  `pbem game list`'s standing of the game (its state now, cold): median {_median(listed) * 1e3:.1f} ms a game")
        print(f"  `pbem state GAME --at V --json` as a command: median {_median([c[0] for c in commands]):.2f} s, "
              f"`pbem --help` (start-up alone) {_median([c[1] for c in commands]):.2f} s")
    for into, runs in outboxes.items():
        if runs:
            print(f"the outbox, {args.letters} letters into {into} (SQLite): median {_median([o[0] for o in runs]):.0f} "
                  f"letters/s; CPU median {_median([o[1] for o in runs]) * 1e3:.2f} ms a letter")
    if bots:
        print(f"8 planner bots, 20 turns, through the service layer: median {_median([b[0] for b in bots]):.1f} s "
              f"({len(bots)} games); CPU median {_median([b[1] for b in bots]):.1f} s; {bots[0][2]} durable commits")


if __name__ == "__main__":
    main()

"""Throughput of 1, 2 and 4 `pbem serve` workers sharing one PostgreSQL database.

Run: .venv/bin/python bench/workers.py [--rounds 3] [--mails 240] [--games 20] [--workers 1,2,4]

Starts a real PostgreSQL server (the tests' throwaway server,
tests/postgres_server.py) and, for each run, a fresh database with
``--games`` games of three players, N real `pbem serve` processes and a
sink SMTP relay on loopback (tests/hostile/processes.py). Then every player
sends his share of ``--mails`` press orders by SMTP, all players at once,
each his own one after another, each to the next worker in turn; and the
clock says when the last was accepted (answered 250), processed (no message
left waiting) and its letters delivered (the outbox empty, every letter at
the relay). Rates are mails per second from the first send to each of the
three moments. Runs of 1, 2 and 4 workers are interleaved round by round
(the order turned each round), so a machine busy for a while slows all of
them alike; the figures are medians over the rounds, with the ratio to one
worker. Figures go in docs/performance.md ("Several workers on PostgreSQL").
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from email.policy import default as default_policy
from pathlib import Path

from sqlalchemy import Engine, text

# The tests' harness is plain code, no pytest: a throwaway PostgreSQL server, `pbem serve` as a process, a sink relay.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pbem.service.games import NewPlayer, create_game  # noqa: E402
from pbem.service.server import utc_now  # noqa: E402
from pbem.service.settings import Settings  # noqa: E402
from pbem.store.database import ensure_schema, make_engine  # noqa: E402
from tests.hostile.processes import (  # noqa: E402
    UNPROCESSED,
    UNSENT,
    Server,
    SinkRelay,
    press_message,
    send_until_taken,
)
from tests.postgres_server import ThrowawayPostgres, create_database, drop_database  # noqa: E402

POLL = 0.05  # seconds between two looks at the queues


@dataclass(frozen=True)
class Run:
    workers: int
    mails: int
    letters: int
    accepted: float  # seconds from the first send to the last 250
    processed: float  # ... to no message left waiting
    delivered: float  # ... to the outbox empty
    cpu: dict[str, float]  # CPU seconds spent from the first send to the outbox empty: workers, postgres, bench
    cpu_processing: float  # CPU seconds of all three from the first send to no message left waiting
    lock_waits: float  # sessions waiting for a game's lock (advisory), on average over the same span
    row_waits: float  # sessions waiting for a row's lock (a message another worker handles), on average


_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()  # the fields after the command's name


def _cpu_of(pid: int, children: bool = False) -> float:
    """CPU seconds of one process (Linux /proc), and of its children already waited for if ``children``."""
    fields = _stat(pid)
    ticks = int(fields[11]) + int(fields[12]) + ((int(fields[13]) + int(fields[14])) if children else 0)
    return ticks / _TICK


def _postgres_cpu(server: ThrowawayPostgres) -> float:
    """CPU seconds of the whole PostgreSQL server: the postmaster, its backends gone and its backends running."""
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    total = _cpu_of(postmaster, children=True)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int(_stat(int(entry.name))[1]) == postmaster:
                    total += _cpu_of(int(entry.name))
            except (OSError, IndexError, ValueError):  # gone meanwhile: its time is in the postmaster's children's
                continue
    return total


def _cpu(servers: list[Server], postgres: ThrowawayPostgres) -> dict[str, float]:
    return {"workers": sum(_cpu_of(s.proc.pid) for s in servers), "postgres": _postgres_cpu(postgres),
            "bench": time.process_time()}


def _players(game: str) -> list[NewPlayer]:
    return [NewPlayer(name, f"{name.lower()}.{game}@players.example") for name in ("Ann", "Ben", "Cy")]


def _press(game: str, player: NewPlayer, number: int, to: str) -> EmailMessage:
    return press_message(player, to, f"bench-{game}-{player.name.lower()}-{number}", f"{game} {player.name} {number}")


def _count(db: Engine, query: str) -> int:
    with db.connect() as conn:
        return conn.execute(text(query)).scalar()


def _wait(db: Engine, query: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while _count(db, query):
        if time.monotonic() > deadline:
            raise TimeoutError(f"still {_count(db, query)} after {timeout:.0f} s: {query}")
        time.sleep(POLL)


def one_run(postgres: ThrowawayPostgres, admin_url: str, workers: int, games: int, mails: int, tmp: Path) -> Run:
    """A fresh database, ``games`` games, ``workers`` servers and a relay; ``mails`` press orders pushed through."""
    tmp.mkdir(parents=True, exist_ok=True)
    url = create_database(admin_url, "pbem_bench")
    db = make_engine(url)
    relay = SinkRelay(delay=0.0)
    servers: list[Server] = []
    try:
        ensure_schema(db)
        settings = Settings(db_url=url, maildir=tmp / "mail", board_pictures=False)
        names = [f"b{n:02d}" for n in range(1, games + 1)]
        for game in names:
            create_game(db, settings, game, _players(game), seed=game, now=utc_now())
        relay.start()
        env = {"PBEM_DATABASE_URL": url, "PBEM_SMTP_RELAY": f"smtp://127.0.0.1:{relay.port}",
               "PBEM_BOARD_PICTURES": "0", "PBEM_DEADLINE_HOURS": "1000"}
        servers = [Server({**os.environ, **env}, tmp) for _ in range(workers)]
        with ThreadPoolExecutor(max_workers=workers) as pool:  # started side by side; a failure to start is raised
            list(pool.map(Server.start, servers))
        _wait(db, UNSENT)  # the game-start letters: not part of the measure
        before = len(relay.received)
        reply_to = {}
        for raw in relay.received:
            headers = BytesHeaderParser(policy=default_policy).parsebytes(raw)
            if headers["Reply-To"]:
                reply_to[str(headers["To"]).strip()] = str(headers["Reply-To"]).strip()
        people = [(game, player) for game in names for player in _players(game)]
        orders: dict[int, list[EmailMessage]] = {k: [] for k in range(len(people))}
        for i in range(mails):
            game, player = people[i % len(people)]
            orders[i % len(people)].append(_press(game, player, i // len(people), reply_to[player.email]))

        def play(k: int) -> None:
            _, player = people[k]
            for turn, message in enumerate(orders[k]):
                send_until_taken(servers[(k + turn) % workers].port, message, player.email, reply_to[player.email])

        senders = [threading.Thread(target=play, args=(k,)) for k in orders]
        waits: list[tuple[int, int]] = []
        done_processing = threading.Event()

        def sample_lock_waits() -> None:
            while not done_processing.wait(POLL):
                with db.connect() as conn:
                    waits.append(conn.execute(text(
                        "SELECT count(*) FILTER (WHERE locktype = 'advisory'), count(*) FILTER (WHERE locktype <> "
                        "'advisory') FROM pg_locks WHERE NOT granted")).one())

        sampler = threading.Thread(target=sample_lock_waits)
        cpu = _cpu(servers, postgres)
        started = time.perf_counter()
        sampler.start()
        for thread in senders:
            thread.start()
        for thread in senders:
            thread.join()
        accepted = time.perf_counter() - started
        _wait(db, UNPROCESSED)
        processed = time.perf_counter() - started
        cpu_processing = sum(_cpu(servers, postgres).values()) - sum(cpu.values())
        done_processing.set()
        sampler.join()
        _wait(db, UNSENT)
        delivered = time.perf_counter() - started
        cpu = {part: spent - cpu[part] for part, spent in _cpu(servers, postgres).items()}
        with db.connect() as conn:
            done = conn.execute(text("SELECT count(*) FROM inbox WHERE status = 'done'")).scalar()
            outbox = [m.strip("<>") for (m,) in conn.execute(text("SELECT message_id FROM outbox"))]
        if done != mails or Counter(relay.message_ids()) != Counter(outbox):  # figures of a broken run mean nothing
            raise RuntimeError(f"{workers} workers: {done} of {mails} orders done, {len(relay.received)} letters at "
                               f"the relay for {len(outbox)} in the outbox")
        return Run(workers, mails, len(outbox) - before, accepted, processed, delivered, cpu, cpu_processing,
                   statistics.mean(w[0] for w in waits) if waits else 0.0,
                   statistics.mean(w[1] for w in waits) if waits else 0.0)
    finally:
        for server in servers:
            server.stop()
        relay.stop()
        db.dispose()
        drop_database(admin_url, url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mails", type=int, default=240, help="press orders per run")
    parser.add_argument("--games", type=int, default=20, help="games (three players each) per run")
    parser.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    runs: dict[int, list[Run]] = {n: [] for n in counts}
    server = ThrowawayPostgres()
    try:
        admin_url = server.start()
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.rounds):
                order = counts[r % len(counts):] + counts[:r % len(counts)]  # a different count first each round
                for n in order:
                    run = one_run(server, admin_url, n, args.games, args.mails, Path(tmp) / f"r{r}w{n}")
                    runs[n].append(run)
                    print(f"round {r + 1}, {n} worker(s): {run.mails} mails, {run.letters} letters; accepted "
                          f"{run.accepted:.1f} s, processed {run.processed:.1f} s, delivered {run.delivered:.1f} s; "
                          f"CPU s: " + ", ".join(f"{part} {spent:.1f}" for part, spent in run.cpu.items()) +
                          f" ({run.cpu_processing:.1f} until processed); sessions waiting until processed, on "
                          f"average: {run.lock_waits:.1f} for a game's lock, {run.row_waits:.1f} for a row's; "
                          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        server.stop()
    med = statistics.median
    rate = {n: {stage: med(r.mails / getattr(r, stage) for r in runs[n]) for stage in ("accepted", "processed",
                                                                                          "delivered")}
            for n in counts}
    letters = {n: med(r.letters / r.delivered for r in runs[n]) for n in counts}
    base = counts[0]
    print(f"\n{args.games} games, {args.mails} press orders per run, medians of {args.rounds} interleaved rounds\n")
    print("| workers | accepted mails/s | processed mails/s | delivered mails/s (letters/s) | processed, ratio to "
          f"{base} | delivered, ratio to {base} |")
    print("|---|---|---|---|---|---|")
    for n in counts:
        print(f"| {n} | {rate[n]['accepted']:.1f} | {rate[n]['processed']:.1f} | {rate[n]['delivered']:.1f} "
              f"({letters[n]:.0f}) | {rate[n]['processed'] / rate[base]['processed']:.2f} | "
              f"{rate[n]['delivered'] / rate[base]['delivered']:.2f} |")
    print(f"\nCPU per mail from the first send to the outbox empty, cores kept busy by all three, sessions waiting "
          f"for a lock until processed (medians; the machine has {os.cpu_count()} cores)\n")
    print("| workers | pbem serve | PostgreSQL | bench (senders, relay) | cores busy until processed | until delivered "
          "| sessions waiting for a game's lock, a row's |")
    print("|---|---|---|---|---|---|---|")
    for n in counts:
        per_mail = {part: med(r.cpu[part] / r.mails for r in runs[n]) * 1000 for part in ("workers", "postgres", "bench")}
        busy = med(sum(r.cpu.values()) / r.delivered for r in runs[n])
        busy_processing = med(r.cpu_processing / r.processed for r in runs[n])
        print(f"| {n} | {per_mail['workers']:.0f} ms | {per_mail['postgres']:.0f} ms | {per_mail['bench']:.0f} ms | "
              f"{busy_processing:.2f} | {busy:.2f} | {med(r.lock_waits for r in runs[n]):.1f}, "
              f"{med(r.row_waits for r in runs[n]):.1f} |")


if __name__ == "__main__":
    main()

"""The store at the limit the disk sets: pbem's appends against raw sqlite3 and the eventsourcing library.

Run: .venv/bin/python bench/store.py [--rounds 5]   (or `make bench`, which installs the `bench` extra)

Every contender writes to its own new SQLite file in WAL mode with
``synchronous=FULL`` (each commit waits for the disk), and the rounds are
interleaved (raw, eventsourcing, pbem, raw, ...) so that a noisy neighbour
hurts all three alike. Reported: the median time per event over the rounds,
and pbem's rate as a ratio of each reference's (1.0 = as fast; higher is
better). Each round also times 30 bare commits of one row in a file of their
own (``the disk's commit``): on a shared virtual disk a durable commit may
take 0.2 ms one minute and 4 ms the next, and pbem's own CPU, which waiting
hides, shows only in the fast rounds (docs/performance.md).

* **raw sqlite3**: the least a durable append can do. One connection;
  ``BEGIN IMMEDIATE``, one ``INSERT`` into a table shaped like pbem's
  ``events`` (the very table pbem's migrations create: its columns, its unique
  indexes on (game, version) and on the dedupe key, AUTOINCREMENT), ``COMMIT``. The row's hash is computed but not chained and
  nothing is read first.
* **eventsourcing**: the library's ``SQLiteApplicationRecorder`` (the recorder
  an event-sourced application uses, with a global notification id like
  pbem's position), on a connection whose ``synchronous`` is checked to be
  FULL.
* **pbem**: ``UnitOfWork`` + ``EventStore.append`` as the mail path uses them, on the engine's writer connection:
  the head read, the optimistic version check, the hash chain, the dedupe
  key, all through SQLAlchemy.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from pbem.store.database import ensure_schema, make_engine
from pbem.store.events import NewEvent
from pbem.store.unit_of_work import UnitOfWork

PAYLOAD = {"player": "p3", "orders": ["MOVE 2 Thebes Memphis", "BUILD Memphis"], "turn": 7}

_RAW_TABLE = """
CREATE TABLE events (
    position INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    game_id VARCHAR(100) NOT NULL,
    version INTEGER NOT NULL,
    type VARCHAR(100) NOT NULL,
    schema_version INTEGER NOT NULL,
    payload TEXT NOT NULL,
    metadata TEXT NOT NULL,
    dedupe_key VARCHAR(255),
    prev_hash VARCHAR(64) NOT NULL,
    hash VARCHAR(64) NOT NULL,
    superseded_by INTEGER,
    CONSTRAINT uq_events_game_id_version UNIQUE (game_id, version),
    CONSTRAINT uq_events_dedupe_key UNIQUE (dedupe_key),
    CONSTRAINT ck_events_version_positive CHECK (version >= 1)
)"""


RAW_INSERT = ("INSERT INTO events (game_id, version, type, schema_version, payload, metadata, dedupe_key,"
              " prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")


def durable_connection(path: Path, table: str) -> sqlite3.Connection:
    """A bare driver connection committing as pbem's store does (WAL, ``synchronous=FULL``), with ``table`` made."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute(table)
    return conn


def raw_row(version: int) -> tuple:
    """Raw sqlite3's event row: the payload encoded and hashed as an append does, the hash not chained."""
    text = json.dumps(PAYLOAD, sort_keys=True, separators=(",", ":"))
    return ("g", version, "OrdersGiven", 1, text, "{}", f"k{version}", "0" * 64,
            hashlib.sha256(text.encode()).hexdigest())


def _raw(path: Path, batches: int, size: int) -> float:
    conn = durable_connection(path, _RAW_TABLE)
    version = 0
    start = time.perf_counter()
    for _ in range(batches):
        rows = []
        for _ in range(size):
            version += 1
            rows.append(raw_row(version))
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(RAW_INSERT, rows)
        conn.execute("COMMIT")
    took = time.perf_counter() - start
    conn.close()
    return took / (batches * size)


def _eventsourcing(path: Path, batches: int, size: int) -> float:
    from eventsourcing.persistence import StoredEvent
    from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore

    store = SQLiteDatastore(str(path))
    recorder = SQLiteApplicationRecorder(store)
    recorder.create_table()
    with store.transaction(commit=False) as cursor:
        cursor.execute("PRAGMA synchronous")
        assert cursor.fetchone()[0] == 2, "the eventsourcing connection is not synchronous=FULL"
    aggregate = uuid.uuid4()
    version = 0
    start = time.perf_counter()
    for _ in range(batches):
        rows = []
        for _ in range(size):
            version += 1
            state = json.dumps(PAYLOAD, sort_keys=True, separators=(",", ":")).encode()
            rows.append(StoredEvent(originator_id=aggregate, originator_version=version, topic="OrdersGiven",
                                    state=state))
        recorder.insert_events(rows)
    took = time.perf_counter() - start
    store.close()
    return took / (batches * size)


def _pbem(path: Path, batches: int, size: int) -> float:
    db = make_engine(f"sqlite:///{path}")
    ensure_schema(db)
    version = 0
    start = time.perf_counter()
    for _ in range(batches):
        batch = []
        for i in range(size):
            batch.append(NewEvent("OrdersGiven", PAYLOAD, {"actor": "p3"}, dedupe_key=f"k{version + i + 1}"))
        with UnitOfWork(db) as uow:
            uow.events.append("g", version, batch)
        version += size
    took = time.perf_counter() - start
    db.dispose()
    return took / (batches * size)


def disk_commit(path: Path, commits: int = 30) -> float:
    """Median seconds of a bare durable commit (one small row, WAL, synchronous=FULL) on this disk now."""
    conn = durable_connection(path, "CREATE TABLE probe (n INTEGER)")
    took = []
    for n in range(commits):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO probe VALUES (?)", (n,))
        start = time.perf_counter()
        conn.execute("COMMIT")
        took.append(time.perf_counter() - start)
    conn.close()
    return statistics.median(took)


CONTENDERS: dict[str, Callable[[Path, int, int], float]] = {
    "raw sqlite3": _raw, "eventsourcing": _eventsourcing, "pbem": _pbem,
}


def appends(tmp: Path, rounds: int, batches: int, size: int) -> tuple[dict[str, float], list[float]]:
    """Median seconds per event for each contender, rounds interleaved; and the disk's commit in each round."""
    times: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    disk = []
    for round_ in range(rounds):
        disk.append(disk_commit(tmp / f"probe-{size}-{round_}.sqlite"))
        for name, run in CONTENDERS.items():
            times[name].append(run(tmp / f"{name.replace(' ', '-')}-{size}-{round_}.sqlite", batches, size))
    return {name: statistics.median(values) for name, values in times.items()}, disk


def _report(title: str, measured: tuple[dict[str, float], list[float]]) -> None:
    medians, disk = measured
    print(title)
    for name, seconds in medians.items():
        print(f"  {name:<14} {seconds * 1e6:8.1f} us/event  ({1 / seconds:8.0f} events/s)")
    for name in ("raw sqlite3", "eventsourcing"):
        print(f"  pbem / {name}: {medians[name] / medians['pbem']:.2f}x the rate")
    print("  the disk's commit by round: " + ", ".join(f"{seconds * 1e6:.0f}" for seconds in disk) + " us")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        _report("one event per transaction (300 transactions a round)", appends(Path(tmp), args.rounds, 300, 1))
        _report("100 events per transaction (20 transactions a round)", appends(Path(tmp), args.rounds, 20, 100))


if __name__ == "__main__":
    main()

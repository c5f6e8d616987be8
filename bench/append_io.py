"""What a one-event durable append asks of the disk: raw sqlite3 against pbem, as bench/store.py runs them.

Run: .venv/bin/python bench/append_io.py [--appends 1000] [--dir DIR]
With the system calls counted (fsyncs, and a WAL frame is two pwrite64: its header, then its page):
  strace -f -c -e trace=fdatasync,fsync,pwrite64 .venv/bin/python bench/append_io.py --only pbem
Where the time of an append goes, phase by phase (rounds interleaved, medians):
  .venv/bin/python bench/append_io.py --phases 5

bench/store.py measures time, which on this machine's shared disk depends on
the minute it runs in; this counts what does not: the WAL frames each commit
writes (read from the WAL index's ``mxFrame`` in the ``-shm`` file after
every commit) and, under strace, the fsyncs. Both contenders do what
bench/store.py's do: raw sqlite3 one ``BEGIN IMMEDIATE``, ``INSERT``,
``COMMIT`` on the same table; pbem ``UnitOfWork`` + ``EventStore.append``.
The two write the same pages (the table's leaf, one leaf of each unique
index, and ``sqlite_sequence`` for AUTOINCREMENT) and sync once a commit,
so what pbem costs beyond raw sqlite3 is its own CPU (docs/performance.md).

``--phases`` times each step of 300 appends a round with ``perf_counter``:
raw sqlite3's BEGIN, INSERT (with its JSON and hash) and COMMIT; pbem's
entering the unit of work (its writer's connection and BEGIN), the append,
and leaving it (the commit and handing the connection back).
"""

from __future__ import annotations

import argparse
import statistics
import struct
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from store import _RAW_TABLE, PAYLOAD, RAW_INSERT, durable_connection, raw_row

from pbem.store.database import ensure_schema, make_engine
from pbem.store.events import NewEvent
from pbem.store.unit_of_work import UnitOfWork


def wal_frames(path: Path) -> int:
    """``mxFrame`` of the WAL index: frames in the WAL that commits have made valid (0 after a restart)."""
    with open(f"{path}-shm", "rb") as shm:
        return struct.unpack_from("=I", shm.read(20), 16)[0]  # native byte order, at offset 16 of the header


def _raw(path: Path, appends: int) -> Iterator[None]:
    conn = durable_connection(path, _RAW_TABLE)
    yield
    for version in range(1, appends + 1):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(RAW_INSERT, raw_row(version))
        conn.execute("COMMIT")
        yield
    conn.close()


def _pbem(path: Path, appends: int) -> Iterator[None]:
    db = make_engine(f"sqlite:///{path}")
    ensure_schema(db)
    yield
    for version in range(appends):
        with UnitOfWork(db) as uow:
            uow.events.append("g", version, [NewEvent("OrdersGiven", PAYLOAD, {"actor": "p3"},
                                                      dedupe_key=f"k{version + 1}")])
        yield
    db.dispose()


CONTENDERS: dict[str, Callable[[Path, int], Iterator[None]]] = {"raw sqlite3": _raw, "pbem": _pbem}


def frames_per_commit(path: Path, contender: Callable[[Path, int], Iterator[None]], appends: int) -> list[int]:
    """The frames each commit added to the WAL (commits that restarted the WAL after a checkpoint left out)."""
    steps = contender(path, appends)
    next(steps)  # set up
    before = wal_frames(path)
    added = []
    for _ in steps:
        after = wal_frames(path)
        if after > before:
            added.append(after - before)
        before = after
    return added


PHASES = ("begin", "append", "commit")


def _raw_phases(path: Path, appends: int) -> list[tuple[float, ...]]:
    """Per append, the time at the start and after each of PHASES."""
    conn = durable_connection(path, _RAW_TABLE)
    marks = []
    for version in range(1, appends + 1):
        start = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        begun = time.perf_counter()
        conn.execute(RAW_INSERT, raw_row(version))
        appended = time.perf_counter()
        conn.execute("COMMIT")
        committed = time.perf_counter()
        marks.append((start, begun, appended, committed))
    conn.close()
    return marks


def _pbem_phases(path: Path, appends: int) -> list[tuple[float, ...]]:
    """UnitOfWork's steps as the mail path takes them: entering it (the writer's connection, then the driver's
    BEGIN IMMEDIATE), the append, and leaving it (the commit, then the connection handed back)."""
    db = make_engine(f"sqlite:///{path}")
    ensure_schema(db)
    marks = []
    for version in range(appends):
        start = time.perf_counter()
        uow = UnitOfWork(db).__enter__()
        begun = time.perf_counter()
        uow.events.append("g", version, [NewEvent("OrdersGiven", PAYLOAD, {"actor": "p3"},
                                                  dedupe_key=f"k{version + 1}")])
        appended = time.perf_counter()
        uow.__exit__(None, None, None)
        committed = time.perf_counter()
        marks.append((start, begun, appended, committed))
    db.dispose()
    return marks


def phases(tmp: Path, rounds: int, appends: int = 300) -> None:
    """Print each contender's median time in each phase and its mean time an append, rounds interleaved."""
    contenders = {"raw sqlite3": _raw_phases, "pbem": _pbem_phases}
    per_round: dict[str, dict[str, list[float]]] = {
        name: {phase: [] for phase in (*PHASES, "in all")} for name in contenders}
    for round_ in range(rounds):
        for name, run in contenders.items():
            marks = run(tmp / f"phases-{name.replace(' ', '-')}-{round_}.sqlite", appends)
            for i, phase in enumerate(PHASES):
                per_round[name][phase].append(statistics.median(m[i + 1] - m[i] for m in marks))
            per_round[name]["in all"].append((marks[-1][-1] - marks[0][0]) / appends)
    print(f"us an append, median of {rounds} rounds of {appends} (phases: the round's median; in all: its mean)")
    for name, times in per_round.items():
        print(f"  {name:<12} " + "  ".join(f"{phase} {statistics.median(values) * 1e6:6.1f}"
                                          for phase, values in times.items()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--appends", type=int, default=1000)
    parser.add_argument("--only", choices=["raw", "pbem"])
    parser.add_argument("--dir", help="where the databases go (default: a new folder in the system's temp dir)")
    parser.add_argument("--phases", type=int, metavar="ROUNDS", help="time each phase of an append instead")
    args = parser.parse_args()
    if args.phases:
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            phases(Path(tmp), args.phases)
        return
    names = [name for name in CONTENDERS if args.only is None or name.startswith(args.only)]
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for name in names:
            added = frames_per_commit(Path(tmp) / f"{name.replace(' ', '-')}.sqlite", CONTENDERS[name], args.appends)
            if not added:
                print(f"{name:<12} no commit counted")
                continue
            print(f"{name:<12} {args.appends} one-event appends: WAL frames a commit median {statistics.median(added)},"
                  f" min {min(added)}, max {max(added)} ({len(added)} commits counted)")


if __name__ == "__main__":
    main()

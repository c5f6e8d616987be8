"""Games recorded by an earlier engine, kept so that `pbem verify` is checked against old logs.

Each file in ``recorded/`` is one whole game as the store held it: the game's
row (seed, options) and every event with its payload, metadata and hashes,
gzipped JSON lines. The metadata names the engine version that ruled each
event. A later engine must re-derive these logs unchanged, or say why not.

``python -m tests.audit.recorded_games`` writes a new set with the engine of
the working tree; it never overwrites a file that exists (an old log is the
point).
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pbem.service.simulate import simulate
from pbem.store.database import ensure_schema, make_engine
from pbem.store.events import NewEvent
from pbem.store.unit_of_work import UnitOfWork

HERE = Path(__file__).resolve().parent / "recorded"

#: (file stem, players, turns, seed, strategy, miss, options)
GAMES = (
    ("planner-3p-to-the-end", 3, 10, "golden-a", "planner", 0.0, {"last-turn": "10"}),
    ("random-6p-1991-options", 6, 8, "golden-b", "random", 0.2, {
        "beneficiary-rule": "1991", "tax-shortfall-payment": "1991", "city-defender-deferral": "1991",
        "city-capture-spoils": "1991", "pirate-city-attack": "1991", "support-reduction-order": "1991",
        "post-calamity-surplus": "1991", "slave-revolt-recovery": "1991"}),
    ("greedy-4p", 4, 8, "golden-c", "greedy", 0.1, {}),
    ("planner-5p-20-turns", 5, 20, "g1", "planner", 0.1, {}),
)


@dataclass(frozen=True)
class RecordedGame:
    game: dict
    events: list[dict]


def read(path: Path) -> RecordedGame:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    return RecordedGame(lines[0], lines[1:])


def load_into(db, recorded: RecordedGame) -> str:
    """Store a recorded game in an empty database as it was; returns its id."""
    game = recorded.game
    with UnitOfWork(db) as uow:
        uow.games.create(
            game["game_id"], ruleset=game["ruleset"], moderator_email=game["moderator_email"],
            now=datetime.fromisoformat(game["created_at"]), options=game["options"],
            secret_seed=game["secret_seed"], status=game["status"])
        new = [NewEvent(e["type"], e["payload"], e["metadata"], dedupe_key=e["dedupe_key"]) for e in recorded.events]
        uow.events.append(game["game_id"], 0, new)
    return game["game_id"]


def _write(path: Path, players: int, turns: int, seed: str, strategy: str, miss: float, options: dict) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/record.sqlite"
        summary = simulate(players, turns, seed, options=options, miss=miss, db_url=url, strategy=strategy)
        if summary.problems:
            raise SystemExit(f"{path.name}: {summary.problems}")
        db = make_engine(url)
        ensure_schema(db)
        with UnitOfWork(db) as uow:
            row = uow.games.get(summary.game)
            events = uow.events.read(summary.game)
        db.dispose()
    game = {
        "game_id": row.game_id, "ruleset": row.ruleset, "moderator_email": row.moderator_email,
        "created_at": row.created_at.isoformat(), "options": dict(row.options), "secret_seed": row.secret_seed,
        "status": row.status, "head": events[-1].hash, "events": len(events),
    }
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(json.dumps(game, sort_keys=True) + "\n")
        for e in events:
            f.write(json.dumps({"type": e.type, "payload": e.payload, "metadata": e.metadata,
                                "dedupe_key": e.dedupe_key, "hash": e.hash}, sort_keys=True) + "\n")
    print(f"{path.name}: {len(events)} events, turns {summary.turns_played}, winner {summary.winner}")


def main() -> None:
    HERE.mkdir(exist_ok=True)
    for stem, players, turns, seed, strategy, miss, options in GAMES:
        path = HERE / f"{stem}.jsonl.gz"
        if path.exists():
            print(f"{path.name}: kept (exists)")
            continue
        _write(path, players, turns, seed, strategy, miss, options)


if __name__ == "__main__":
    sys.exit(main())

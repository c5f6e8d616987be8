"""`pbem verify` re-derives games that an earlier engine recorded (issue: the rules package reshaped).

Each recorded game was played by bots and stored by the engine version its
metadata names. Loaded into a fresh database exactly as it was, its hash
chain must come out the same, and the engine of today must rule every input
the way the recorded one did.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pbem.rules.engine import ENGINE_VERSION
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from .recorded_games import HERE, load_into, read

RECORDED = sorted(HERE.glob("*.jsonl.gz"))


def test_the_recorded_games_were_ruled_by_an_earlier_engine():
    assert len(RECORDED) >= 4
    versions = {e["metadata"]["engine_version"] for path in RECORDED for e in read(path).events}
    assert versions == {"0.2.0"}
    assert ENGINE_VERSION != "0.2.0"


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name.split(".")[0])
def test_verify_rederives_a_recorded_game(path, sqlite_url, tmp_path):
    recorded = read(path)
    db = make_engine(sqlite_url)
    try:
        ensure_schema(db)
        game_id = load_into(db, recorded)
        with UnitOfWork(db) as uow:
            _, head = uow.events.head(game_id)
    finally:
        db.dispose()
    assert head == recorded.game["head"], "the recorded game was not stored as it was"

    env = {**os.environ, "PBEM_DATABASE_URL": sqlite_url}
    result = subprocess.run([sys.executable, "-m", "pbem.cli", "verify", game_id],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"hash chain ok: {recorded.game['events']} events" in result.stdout
    assert f"{recorded.game['events']} events match the engine" in result.stdout


def test_verify_notices_a_recorded_outcome_the_engine_would_not_rule(sqlite_url, tmp_path):
    """Guard against a vacuous pass: one altered outcome in an old log is found and named."""
    recorded = read(HERE / "greedy-4p.jsonl.gz")
    drawn = next(i for i, e in enumerate(recorded.events) if e["type"] == "PopulationExpanded")
    recorded.events[drawn]["payload"] = {**recorded.events[drawn]["payload"], "tampered": True}
    db = make_engine(sqlite_url)
    try:
        ensure_schema(db)
        game_id = load_into(db, recorded)
    finally:
        db.dispose()
    env = {**os.environ, "PBEM_DATABASE_URL": sqlite_url}
    result = subprocess.run([sys.executable, "-m", "pbem.cli", "verify", game_id],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert result.returncode == 1
    assert f"re-derivation FAILED at version {drawn + 1}" in result.stdout

"""`pbem rollback` on a game played by bots: the state after it, both branches in the log, verify, and play going on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from pbem.rules.branches import fold_log, superseded
from pbem.rules.core.events import Event
from pbem.rules.engine import is_input
from pbem.rules.view import view
from pbem.service.projector import load_state
from pbem.service.simulate import simulate
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from .recorded_games import HERE, load_into, read

PBEM = [sys.executable, "-m", "pbem.cli"]
GAME = "sim-rollback"


def pbem(db_url: str, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PBEM_DATABASE_URL": db_url, "PBEM_MAILDIR": str(cwd / "mail"), "PBEM_BOARD_PICTURES": "0"}
    return subprocess.run([*PBEM, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


@pytest.fixture
def played(tmp_path):
    """Two turns of three bots in a SQLite file (snapshots at versions 50 and 100)."""
    url = f"sqlite:///{tmp_path / 'game.sqlite'}"
    simulate(3, 2, "rollback", db_url=url)
    return url, tmp_path


def records(url: str):
    db = make_engine(url)
    try:
        with UnitOfWork(db) as uow:
            return uow.events.read(GAME), load_state(uow, GAME)
    finally:
        db.dispose()


def resting_versions(recorded) -> list[int]:
    events = [Event.from_payload(r.type, r.payload) for r in recorded]
    return [v for v in range(1, len(events)) if is_input(events[v]) and events[v - 1].type != "GameCreated"]


def test_rollback_takes_the_game_back_keeps_both_branches_and_play_goes_on(played):
    url, cwd = played
    recorded, before = records(url)
    head = len(recorded)
    target = [v for v in resting_versions(recorded) if 40 < v < head - 20][0]  # before the snapshot at 100
    out = pbem(url, cwd, "rollback", GAME, str(target), "--reason", "a move was misread")
    assert out.returncode == 0, out.stderr
    assert f"rolled {GAME} back to version {target}" in out.stdout

    recorded, now = records(url)
    at_target = fold_log(GAME, [Event.from_payload(r.type, r.payload) for r in recorded[:target]])
    assert view(now, "auditor")["nations"] == view(at_target, "auditor")["nations"]
    assert view(now, "auditor")["areas"] == view(at_target, "auditor")["areas"]
    assert now.version == len(recorded) and recorded[head].type == "RolledBack"
    # the store's marks agree with what the log itself says
    events = [Event.from_payload(r.type, r.payload) for r in recorded]
    assert {r.version: r.superseded_by for r in recorded if r.superseded_by} == superseded(events)
    assert set(superseded(events)) == set(range(target + 1, head + 1))
    # the projector (from snapshots) and a fold of the whole log agree
    assert now == fold_log(GAME, events)

    verify = pbem(url, cwd, "verify", GAME)
    assert verify.returncode == 0, verify.stdout
    assert f"rollbacks: 1, superseding {head - target} events; both branches are re-derived" in verify.stdout

    moderator = json.loads(pbem(url, cwd, "log", GAME, "--as", "moderator", "--json").stdout)
    player = json.loads(pbem(url, cwd, "log", GAME, "--as", sorted(now.nations)[0], "--json").stdout)
    assert sum(1 for e in moderator if e.get("superseded_by") == head + 1) > 10
    assert not any(e.get("superseded_by") for e in player)
    assert any(e["type"] == "RolledBack" and "a move was misread" in e["text"] for e in player)
    text_log = pbem(url, cwd, "log", GAME, "--as", "moderator").stdout
    assert f"(superseded by the rollback at version {head + 1})" in text_log

    # play goes on from the restored position: the moderator ends steps until the phase ends and is reported
    phase = (now.turn, now.phase)
    for _ in range(12):
        ended = pbem(url, cwd, "deadline", GAME, "--reason", "after the rollback")
        assert ended.returncode == 0, ended.stdout + ended.stderr
        if (records(url)[1].turn, records(url)[1].phase) != phase:
            break
    assert (records(url)[1].turn, records(url)[1].phase) != phase, "the phase after the rollback ended"
    verify = pbem(url, cwd, "verify", GAME)
    assert verify.returncode == 0 and "re-derivation ok" in verify.stdout, verify.stdout

    # the players' letters: each got one saying what changed for him
    flushed = pbem(url, cwd, "flush")
    assert flushed.returncode == 0
    for nation in before.nations:
        player_row = before.player(before.nations[nation].player_id)
        box = cwd / "mail" / f"{player_row.name.lower()}@sim.invalid" / "new"
        texts = [p.read_text() for p in box.iterdir()]
        assert len([t for t in texts if "X-Pbem-Topic: [sim-rollback] The game was rolled back" in t]) == 1, nation
        # the report of the phase the rollback fell in tells the rollback, not what it superseded
        reports = [t for t in texts if "rolled the game back" in t and "X-Pbem-Topic: [sim-rollback] The game was" not in t]
        assert reports, nation


def test_a_rollback_the_log_cannot_take_is_refused_in_one_line_and_nothing_is_recorded(played):
    url, cwd = played
    recorded, _ = records(url)
    head = len(recorded)
    busy = next(v for v in range(2, head) if not is_input(Event.from_payload(recorded[v].type, recorded[v].payload)))
    for version, reason, says in [
        (head, "x", f"version {head} is not before the head"),
        (0, "x", "version 0 is not before the head"),
        (busy, "x", "falls inside the outcomes of one order"),
        (resting_versions(recorded)[3], " ", "a rollback needs a reason"),
    ]:
        out = pbem(url, cwd, "rollback", GAME, str(version), "--reason", reason)
        assert out.returncode == 2 and says in out.stderr and "Traceback" not in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
    assert len(records(url)[0]) == head
    first = resting_versions(recorded)[-3]
    assert pbem(url, cwd, "rollback", GAME, str(first), "--reason", "one").returncode == 0
    undone = next(v for v in resting_versions(recorded) if v > first)
    out = pbem(url, cwd, "rollback", GAME, str(undone), "--reason", "two")
    assert out.returncode == 2 and f"version {undone} was itself undone by the rollback at version {head + 1}" in out.stderr


def test_verify_catches_superseded_marks_that_disagree_with_the_log(played):
    url, cwd = played
    recorded, _ = records(url)
    target = resting_versions(recorded)[-4]
    assert pbem(url, cwd, "rollback", GAME, str(target), "--reason", "undo").returncode == 0
    db = make_engine(url)
    with db.begin() as conn:  # someone "repairs" the table by hand: the superseded mark no longer matches the log
        conn.execute(text("UPDATE events SET superseded_by = NULL WHERE game_id = :g AND version = :v"),
                     {"g": GAME, "v": target + 1})
    db.dispose()
    out = pbem(url, cwd, "verify", GAME)
    assert out.returncode == 1 and f"superseded marks WRONG at version {target + 1}" in out.stdout


def test_rollback_and_verify_head_on_a_complete_recorded_game(tmp_path):
    """The walk-through of docs/audit.md on the recorded game greedy-4p: Ur lost on turn 4, the kept head checked,
    then the game taken back to before Assyria's BUILD, both branches re-derived."""
    url = f"sqlite:///{tmp_path / 'golden.sqlite'}"
    db = make_engine(url)
    ensure_schema(db)
    game = load_into(db, read(HERE / "greedy-4p.jsonl.gz"))
    db.dispose()
    reduced = pbem(url, tmp_path, "explain", game, "225", "--as", "assyria")
    assert reduced.returncode == 0 and "It has 0 tokens on the board: 0 < 2, short by 2." in reduced.stdout
    log = json.loads(pbem(url, tmp_path, "log", game, "--as", "assyria", "--json").stdout)
    kept = next(e["hash"] for e in log if e["version"] == 229)
    checked = pbem(url, tmp_path, "verify", game, "--head", kept[:16])  # as a letter shows it
    assert checked.returncode == 0 and "head ok: the hash you kept is version 229" in checked.stdout
    rolled = pbem(url, tmp_path, "rollback", game, "220", "--reason", "Ur was built by mistake")
    assert rolled.returncode == 0 and "rolled sim-goldenc back to version 220" in rolled.stdout, rolled.stderr
    state = json.loads(pbem(url, tmp_path, "state", game, "--as", "assyria", "--json").stdout)
    assert state["areas"]["Ur"] == {"city": None, "tokens": {"Assyria": 6}} and "assyria" in state["pending"]
    verified = pbem(url, tmp_path, "verify", game)
    assert verified.returncode == 0 and "rollbacks: 1, superseding 277 events" in verified.stdout, verified.stdout

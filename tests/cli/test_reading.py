"""The CLI tells the state of a game (issue 30): `pbem game list`, `pbem state` (now and `--at`), `pbem log`, the
auditor named as such, and the archive's players after REPLACE, each through the real `pbem` command."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from pbem.cli import main
from pbem.rules.branches import fold_log, superseded
from pbem.rules.core.events import Event
from pbem.rules.turn import phase_title
from pbem.rules.view import view
from pbem.service.projector import SNAPSHOT_EVERY, load_state
from pbem.service.simulate import simulate
from pbem.store.database import make_engine
from pbem.store.events import NewEvent
from pbem.store.unit_of_work import UnitOfWork

GAME = "sim-reading"


def pbem(url: str, *args: str, stdin: str = "", code: int = 0) -> str:
    result = CliRunner().invoke(main, ["--db", url, *args], input=stdin)
    assert result.exit_code == code, (args, result.output, result.exception)
    return result.stdout


def stored(url: str):
    """The game's recorded events and its state now, as the store holds them."""
    db = make_engine(url)
    try:
        with UnitOfWork(db) as uow:
            return uow.events.read(GAME), load_state(uow, GAME)
    finally:
        db.dispose()


@pytest.fixture
def played(tmp_path) -> str:
    """Two turns of three bots in a SQLite file, with the snapshots the service writes (every 50 versions)."""
    url = f"sqlite:///{tmp_path / 'game.sqlite'}"
    simulate(3, 2, "reading", db_url=url)
    return url


def test_game_list_tells_turn_phase_deadline_and_a_pause(played):
    _, now = stored(played)
    title = phase_title(now, now.phase)
    row = pbem(played, "game", "list").splitlines()
    assert row == [f"{GAME}\tturn {now.turn}, {title}\trunning\tdeadline {now.deadline}\tversion {now.version}"]

    pbem(played, "submit", GAME, "--as", "moderator", stdin="PAUSE the Easter holidays")
    _, paused = stored(played)
    game, when, condition, due, version = pbem(played, "game", "list").rstrip("\n").split("\t")
    assert (game, when, condition) == (GAME, f"turn {now.turn}, {title}", "paused: the Easter holidays")
    assert due.startswith(f"deadline {paused.deadline} (held") and version == f"version {paused.version}"

    shown = pbem(played, "state", GAME).splitlines()
    assert shown[1] == f"  turn {now.turn}, {title}: {due}"
    assert shown[2] == "  paused by the moderator: the Easter holidays"
    assert json.loads(pbem(played, "state", GAME, "--json"))["paused"] == "the Easter holidays"
    before = pbem(played, "state", GAME, "--at", str(now.version)).splitlines()
    assert before[1] == f"  turn {now.turn}, {title}: deadline {now.deadline}" and "paused" not in "".join(before)


def test_state_at_any_version_is_the_replay_from_zero_on_both_sides_of_a_rollback(played):
    """`--at V` starts from the nearest snapshot: a snapshot of the superseded branch serves the versions of that
    branch, and a version after the rollback folds through it; every one equals the fold of the log from zero."""
    recorded, now = stored(played)
    head = now.version
    events = [Event.from_payload(r.type, r.payload) for r in recorded]
    resting = [v for v in range(2, head) if recorded[v].metadata.get("actor") != recorded[v - 1].metadata.get("actor")]
    target = [v for v in resting if v < SNAPSHOT_EVERY * (head // SNAPSHOT_EVERY) - 10][-1]
    pbem(played, "rollback", GAME, str(target), "--reason", "a misread move")
    for _ in range(30):  # play on past the next snapshot
        if stored(played)[1].version > SNAPSHOT_EVERY * (head // SNAPSHOT_EVERY + 1) + 3:
            break
        pbem(played, "deadline", GAME, "--reason", "after the rollback")
    recorded, now = stored(played)
    events = [Event.from_payload(r.type, r.payload) for r in recorded]
    undone = superseded(events)
    assert set(undone) == set(range(target + 1, head + 1)) and now.version > SNAPSHOT_EVERY * (head // SNAPSHOT_EVERY + 1)
    snap = SNAPSHOT_EVERY * (head // SNAPSHOT_EVERY)  # taken on the branch the rollback superseded
    assert target < snap <= head
    versions = {1, 2, target - 1, target, target + 1, snap - 1, snap, snap + 1, head, head + 1, head + 2,
                now.version - 1, now.version, SNAPSHOT_EVERY * (head // SNAPSHOT_EVERY + 1) + 1}
    for version in sorted(versions):
        shown = json.loads(pbem(played, "state", GAME, "--at", str(version), "--as", "moderator", "--json"))
        expected = json.loads(json.dumps(view(fold_log(GAME, events[:version]), "moderator")))
        assert shown == expected, version


def test_the_log_gives_time_to_all_and_actor_and_source_to_the_moderator_alone(played):
    recorded, now = stored(played)
    stamp = re.compile(r"^ *(\d+)  (\d{4}-\d\d-\d\d \d\d:\d\d)  (.*)$")
    moderator = pbem(played, "log", GAME, "--as", "moderator").splitlines()
    by_version = {r.version: r for r in recorded}
    for line in moderator:
        version, when, rest = stamp.match(line).groups()
        meta = by_version[int(version)].metadata
        assert when == meta["recorded_at"][:16].replace("T", " ")
        assert rest.startswith(f"{meta['actor']} via {meta['source']}  "), line
    nation = sorted(now.nations)[0].lower()
    for viewer in (nation, "observer", "auditor"):  # the game is in play: an auditor reads what an observer reads
        lines = pbem(played, "log", GAME, "--as", viewer).splitlines()
        assert all(stamp.match(line) for line in lines) and not any(" via " in line for line in lines), viewer
        entries = json.loads(pbem(played, "log", GAME, "--as", viewer, "--json"))
        assert all("actor" not in e and "source" not in e and e["recorded_at"] for e in entries)
    assert all(e["actor"] and e["source"] for e in json.loads(pbem(played, "log", GAME, "--as", "moderator", "--json")))


def test_an_auditor_of_a_game_in_play_is_named_an_auditor(played):
    label = "as auditor (reading what an observer reads until the game ends)"
    assert pbem(played, "state", GAME, "--as", "auditor").splitlines()[0].endswith(label)
    assert pbem(played, "state", GAME, "--as", "moderator").splitlines()[0].endswith("as moderator")
    assert label in " ".join(pbem(played, "explain", GAME, "5", "--as", "auditor").split())
    assert f"{GAME}, {label}" in pbem(played, "diff", GAME, "5", "10", "--as", "auditor")
    assert json.loads(pbem(played, "state", GAME, "--as", "auditor", "--json"))["viewer"] == "observer"


def test_the_archive_lists_the_seat_holder_now_and_since_when(played, tmp_path):
    _, now = stored(played)
    nation = sorted(now.nations)[0]
    first = now.player(now.nations[nation].player_id).name
    pbem(played, "submit", GAME, "--as", "moderator", stdin=f"REPLACE {nation} WITH Eve eve@example.org {first} moved")
    pbem(played, "archive", GAME, "--out", str(tmp_path / "site"))
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td></tr>", index)
    assert (f'Eve <span class="quiet">(since turn {now.turn}, after {first})</span>', nation) in rows
    assert not any(cell.startswith(first) for cell, _ in rows)


def test_an_imported_game_gets_its_snapshots_and_its_past_versions_are_the_replay_from_zero(played, tmp_path):
    """`pbem import` writes the snapshots a game played here has, rollbacks followed, so `--at` does not replay
    an imported game from zero either."""
    recorded, now = stored(played)
    target = next(v for v in range(SNAPSHOT_EVERY - 15, 1, -1) if recorded[v].metadata.get("actor") == "clock")
    pbem(played, "rollback", GAME, str(target), "--reason", "a misread move")
    recorded, now = stored(played)
    (tmp_path / "game.jsonl").write_text(pbem(played, "export", GAME), encoding="utf-8")
    copy = f"sqlite:///{tmp_path / 'copy.sqlite'}"
    assert f"imported {GAME}" in pbem(copy, "import", str(tmp_path / "game.jsonl"))
    db = make_engine(copy)
    with UnitOfWork(db) as uow:
        kept = [uow.snapshots.latest(GAME, at_most=v) for v in range(SNAPSHOT_EVERY, now.version + 1, SNAPSHOT_EVERY)]
    db.dispose()
    assert [k[0] for k in kept] == list(range(SNAPSHOT_EVERY, now.version + 1, SNAPSHOT_EVERY))
    events = [Event.from_payload(r.type, r.payload) for r in recorded]
    for version in (target, SNAPSHOT_EVERY + 1, now.version - 1, now.version):
        shown = json.loads(pbem(copy, "state", GAME, "--at", str(version), "--as", "moderator", "--json"))
        assert shown == json.loads(json.dumps(view(fold_log(GAME, events[:version]), "moderator"))), version


def test_a_game_whose_log_this_engine_cannot_read_is_listed_as_damaged_and_the_others_still_are(played, tmp_path):
    """One unreadable log (an event type a newer engine wrote) is named in its row; it hides no other game."""
    simulate(3, 0, "second", db_url=played)
    db = make_engine(played)
    with UnitOfWork(db) as uow:
        version, _ = uow.events.head(GAME)
        uow.events.append(GAME, version, [NewEvent("CometStruck", {"area": "Crete"}, {"engine_version": "9.0.0"})])
    db.dispose()
    rows = {line.split("\t")[0]: line.split("\t") for line in pbem(played, "game", "list").splitlines()}
    assert rows[GAME][1] == "damaged" and "'CometStruck'" in rows[GAME][2] and rows[GAME][3] == f"version {version + 1}"
    assert rows["sim-second"][1].startswith(("setup, ", "turn ")) and rows["sim-second"][2] == "running"

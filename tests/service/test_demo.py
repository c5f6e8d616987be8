"""`make demo` runs `pbem demo`: the README's first command must keep working."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from email import message_from_bytes
from email.policy import default as default_policy

from pbem.rules.ruleset.loader import PACKAGED_DATA
from pbem.store.database import make_engine
from pbem.store.unit_of_work import UnitOfWork


def test_demo_plays_setup_through_smtp_and_lists_the_mailboxes(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "pbem.cli", "demo", "--out", str(tmp_path / "demo")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SMTP server listening on 127.0.0.1:" in result.stdout
    assert "turn 1, phase " in result.stdout and "phase setup" not in result.stdout
    for name in ("alice", "bruno", "chen"):
        assert f"{name}@players.example  (" in result.stdout
    assert result.stdout.count("A new game of Advanced Civilization") == 3
    # one acknowledgement per reply and one report per player; what one reply caused for one player is one
    # letter (pbem.service.combined): Bruno's acknowledgement and report, Alice's report and next prompt
    told = {name: [m.get_body(preferencelist=("plain",)).get_content() for m in
                   map(read, sorted((tmp_path / "demo" / "mail" / f"{name}@players.example" / "new").iterdir()))]
            for name in ("alice", "bruno", "chen")}
    assert sum("your orders are on file" in text for texts in told.values() for text in texts) == 3
    assert all(sum("Nations and start areas until turn 1" in text for text in texts) == 1 for texts in told.values())
    assert sum(len(texts) for texts in told.values()) == 11  # 14 letters before they travelled together


def read(path):
    return message_from_bytes(path.read_bytes(), policy=default_policy)


def test_several_turns_by_mail_then_verify_re_derives_every_ruling(tmp_path):
    """Issue 4: a scripted game through the real mail loop for several turns; the log re-derives."""
    out = tmp_path / "demo"
    played = subprocess.run(
        [sys.executable, "-m", "pbem.cli", "demo", "--out", str(out), "--players", "4", "--turns", "2"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert played.returncode == 0, played.stdout + played.stderr
    assert "turn 3, phase " in played.stdout
    verified = subprocess.run(
        [sys.executable, "-m", "pbem.cli", "--db", f"sqlite:///{out / 'pbem.sqlite'}", "verify", "demo"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "re-derivation ok" in verified.stdout


def test_demo_to_the_end_plays_on_until_a_nation_finishes_the_ast(tmp_path):
    """`--to-the-end` has no turn limit: the game ends by itself when a marker reaches the finish square (§34).

    A house A.S.T. six spaces long with no entry requirements lets a whole game end in a few turns; the demo
    loop, the mail and the end are those of a full game."""
    house = tmp_path / "house"
    shutil.copytree(PACKAGED_DATA, house)
    ast = json.loads((house / "ast.json").read_text())
    ast["finish_space"] = 6
    for epoch in ast["epochs"]:
        epoch.update(cities=0, civ_cards=0, groups=0)
    for track in ast["tracks"]:
        track.update(epoch_starts=[1, 2, 3, 4, 5], late_iron_points={})
        track.pop("alternatives", None)
    (house / "ast.json").write_text(json.dumps(ast))
    out = tmp_path / "game"
    played = subprocess.run(
        [sys.executable, "-m", "pbem.cli", "demo", "--out", str(out), "--players", "3", "--bots", "planner",
         "--to-the-end", "--option", f"ruleset-data={house}", "--seed", "end"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env={**os.environ, "PBEM_BOARD_PICTURES": "0"},
    )
    assert played.returncode == 0, played.stdout[-3000:] + played.stderr[-3000:]
    with UnitOfWork(make_engine(f"sqlite:///{out / 'pbem.sqlite'}")) as uow:
        (ended,) = [e for e in uow.events.read("demo") if e.type == "GameEnded"]
    assert ended.payload["finishers"] and "last_turn" not in ended.payload
    assert f"the game has ended: {ended.payload['winner']} wins" in played.stdout
    assert "earlier messages, then:" in played.stdout  # a whole game's mail is listed by its latest subjects


def test_a_house_rules_copy_that_does_not_load_is_refused_in_one_line(tmp_path):
    house = tmp_path / "house"
    shutil.copytree(PACKAGED_DATA, house)
    ast = json.loads((house / "ast.json").read_text())
    ast["finish_space"] = 4  # below where the epochs begin
    (house / "ast.json").write_text(json.dumps(ast))
    played = subprocess.run(
        [sys.executable, "-m", "pbem.cli", "demo", "--out", str(tmp_path / "game"), "--players", "3",
         "--option", f"ruleset-data={house}"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert played.returncode == 2, played.stdout + played.stderr
    assert played.stderr.strip().startswith("pbem: the rules data does not load: ast.json")
    assert "internal error" not in played.stderr and len(played.stderr.strip().splitlines()) == 1

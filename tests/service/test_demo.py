"""`make demo` runs `pbem demo`: the README's first command must keep working."""

from __future__ import annotations

import subprocess
import sys


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
    assert result.stdout.count("Orders received") == 3  # one acknowledgement per reply
    assert result.stdout.count("Report: Nations and start areas") == 3


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

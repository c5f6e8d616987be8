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
        assert f"{name}@players.example  (4 messages)" in result.stdout
    assert result.stdout.count("Orders received") == 3

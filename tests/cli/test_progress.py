"""Long commands (simulate, verify, demo) show a progress bar on a terminal, and stay quiet with --json or when
their output is not a terminal (docs/cli.md, "Progress")."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pbem.audit.rederive import rederive
from pbem.rules.core.events import Event
from pbem.service.simulate import simulate
from pbem.store.database import make_engine
from pbem.store.unit_of_work import UnitOfWork

PBEM = [sys.executable, "-m", "pbem.cli"]
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
ARGS = ("--players", "3", "--turns", "2", "--seed", "progress")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TTY_COMPATIBLE", "TTY_INTERACTIVE", "FORCE_COLOR")}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "120", **extra}


def on_terminal(*args: str, cwd: Path, timeout: float = 120, **env: str) -> tuple[int, bytes]:
    """Run `pbem ARGS` with stdin, stdout and stderr on a pseudo-terminal; (exit status, everything it wrote)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([*PBEM, *args], stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=_env(**env))
    os.close(slave)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if not ready:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        else:
            proc.kill()
            pytest.fail(f"pbem {' '.join(args)} did not end within {timeout} s")
    finally:
        os.close(master)
    return proc.wait(timeout=30), b"".join(chunks)


def text_of(raw: bytes) -> str:
    """What stays readable: the terminal's escape sequences out, its CR LF line ends as LF."""
    return ANSI.sub(b"", raw).decode().replace("\r\n", "\n")


def piped(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*PBEM, *args], capture_output=True, text=True, cwd=cwd, env=_env(), timeout=timeout,
                          check=False)


def summary_line(summary) -> str:
    """The line `pbem simulate` has always printed."""
    return (f"{summary.game}: {summary.turns_played} turns, {summary.events_appended} events, "
            f"{summary.orders_sent} orders, {summary.deadlines_missed} missed deadlines, "
            f"{summary.invariant_checks} invariant checks" + (f"; waiting at {summary.stopped_at}" if summary.stopped_at else ""))


@pytest.fixture(scope="module")
def expected():
    """The game the CLI plays with ARGS, played in-process without any progress callback."""
    return simulate(3, 2, "progress")


# -- simulate ------------------------------------------------------------------------------------------------


def test_simulate_on_a_terminal_shows_a_progress_bar_then_the_same_summary(tmp_path, expected):
    code, raw = on_terminal("simulate", *ARGS, cwd=tmp_path)
    assert code == 0, raw
    assert b"simulating turns" in raw
    assert b"2/2" in raw  # the bar reached the last turn
    assert text_of(raw).endswith(summary_line(expected) + "\n")


def test_simulate_piped_prints_exactly_what_it_printed_before(tmp_path, expected):
    result = piped("simulate", *ARGS, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout == summary_line(expected) + "\n"


def test_simulate_json_stays_quiet_piped_and_on_a_terminal(tmp_path, expected):
    result = piped("simulate", *ARGS, "--json", cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == ""
    assert json.loads(result.stdout) == expected.as_json()
    code, raw = on_terminal("simulate", *ARGS, "--json", cwd=tmp_path)
    assert code == 0, raw
    assert b"simulating" not in raw and b"\x1b" not in raw
    assert json.loads(raw.decode().replace("\r\n", "\n")) == expected.as_json()


def test_a_dumb_terminal_gets_no_bar(tmp_path, expected):
    code, raw = on_terminal("simulate", *ARGS, cwd=tmp_path, TERM="dumb")
    assert code == 0, raw
    assert raw.decode().replace("\r\n", "\n") == summary_line(expected) + "\n"


def test_the_progress_callback_changes_nothing_in_the_game(expected):
    calls = []
    summary = simulate(3, 2, "progress", progress=lambda *call: calls.append(call))
    assert summary.as_json() == expected.as_json()
    assert calls and all(total == 2 and 0 <= done <= 2 and phase for done, total, phase in calls)
    dones = [done for done, _, _ in calls]
    assert dones == sorted(dones) and dones[0] == 0 and dones[-1] == summary.turns_played == 2


# -- verify --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kept_game(tmp_path_factory):
    where = tmp_path_factory.mktemp("verify")
    url = f"sqlite:///{where / 'kept.sqlite'}"
    played = piped("--db", url, "simulate", *ARGS, cwd=where)
    assert played.returncode == 0, played.stdout + played.stderr
    return url, where


def test_verify_on_a_terminal_shows_progress(kept_game):
    url, where = kept_game
    code, raw = on_terminal("--db", url, "verify", "sim-progress", cwd=where)
    assert code == 0, raw
    assert b"re-deriving events" in raw
    lines = text_of(raw).splitlines()
    assert lines[0].startswith("hash chain ok: ") and lines[-1].startswith("re-derivation ok: ")


def test_verify_piped_prints_exactly_what_it_printed_before(kept_game):
    url, where = kept_game
    result = piped("--db", url, "verify", "sim-progress", cwd=where)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == ""
    db = make_engine(url)
    with UnitOfWork(db) as uow:
        recorded = uow.events.read("sim-progress")
        seed = uow.games.get("sim-progress").secret_seed
    db.dispose()
    checked = rederive("sim-progress", [Event.from_payload(r.type, r.payload) for r in recorded], seed)
    assert result.stdout == (f"hash chain ok: {len(recorded)} events, head {recorded[-1].hash}\n"
                             f"re-derivation ok: {checked.batches} inputs, {checked.events} events match the engine\n")


def test_the_rederive_callback_changes_nothing(kept_game):
    url, _ = kept_game
    db = make_engine(url)
    with UnitOfWork(db) as uow:
        events = [Event.from_payload(r.type, r.payload) for r in uow.events.read("sim-progress")]
        seed = uow.games.get("sim-progress").secret_seed
    db.dispose()
    calls = []
    assert rederive("sim-progress", events, seed, progress=lambda *call: calls.append(call)) == rederive(
        "sim-progress", events, seed)
    assert calls[-1][:2] == (len(events), len(events))
    assert [done for done, _, _ in calls] == sorted(done for done, _, _ in calls)


# -- demo ----------------------------------------------------------------------------------------------------


def test_demo_on_a_terminal_shows_progress_and_still_every_line(tmp_path):
    code, raw = on_terminal("demo", "--out", str(tmp_path / "demo"), cwd=tmp_path)
    assert code == 0, raw
    assert b"demo: playing by mail" in raw
    text = text_of(raw)
    assert "SMTP server listening on 127.0.0.1:" in text and "turn 1, phase " in text
    assert text.count("A new game of Advanced Civilization") == 3


def test_demo_piped_shows_no_progress(tmp_path):
    result = piped("demo", "--out", str(tmp_path / "demo"), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == "" and "\x1b" not in result.stdout and "playing by mail" not in result.stdout
    assert result.stdout.startswith("pbem demo: SMTP server listening on 127.0.0.1:")


# -- start-up ------------------------------------------------------------------------------------------------


def test_rich_is_loaded_only_when_a_bar_is_drawn():
    """`pbem ingest` behind an MTA must start fast: importing the command line, or a quiet bar, loads no rich."""
    probe = ("import sys, pbem.cli\n"
             "from pbem.cli.progress import progress_bar\n"
             "with progress_bar('x') as report:\n"
             "    assert report is None\n"
             "print(sorted(m for m in sys.modules if m == 'rich' or m.startswith('rich.')))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[]\n"

"""Every mistake an operator can make ends in one line on standard error and exit status 2, never a traceback.

Each case runs the real `pbem` command in a subprocess, as an operator types it.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pbem.service.settings import SETTINGS

PLAYERS = ["--player", "Ann:ann@example.org", "--player", "Ben:ben@example.net", "--player", "Cy:cy@example.com"]


def pbem(*args: str, cwd: Path, env: dict | None = None, stdin: bytes = b"", limit_file_size: int = 0) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    environment.update(env or {})

    def small_disk() -> None:  # a disk that fills up: writes past the limit fail, as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_size, limit_file_size))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    return subprocess.run([sys.executable, "-m", "pbem.cli", *args], cwd=cwd, env=environment, input=stdin,
                          capture_output=True, timeout=120, preexec_fn=small_disk if limit_file_size else None)


def one_line(done: subprocess.CompletedProcess, *words: str) -> str:
    err = done.stderr.decode()
    assert done.returncode == 2, (done.returncode, err[-2000:])
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("pbem: ")
    for word in words:
        assert word in err, err
    return err


@pytest.fixture
def made(tmp_path) -> str:
    url = f"sqlite:///{tmp_path / 'pbem.sqlite'}"
    done = pbem("--db", url, "game", "create", "g1", *PLAYERS, "--seed", "ops", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return url


@pytest.mark.parametrize(("args", "env", "words"), [
    (["--db", "nosuch://host/db", "game", "list"], {}, ["unsupported database URL"]),
    (["--db", "postgresql://nobody@127.0.0.1:1/nothing", "game", "list"], {}, ["cannot reach the database server"]),
    (["--db", "sqlite:////nonexistent/folder/pbem.sqlite", "game", "list"], {}, ["folder does not exist"]),
    (["--config", "/nonexistent/pbem.toml", "game", "list"], {}, ["/nonexistent/pbem.toml does not exist"]),
    (["game", "list"], {"PBEM_LISTEN_PORT": "eighty"}, ["PBEM_LISTEN_PORT must be a whole number"]),
    (["game", "list"], {"PBEM_DEADLINE_HOURS": "-3"}, ["PBEM_DEADLINE_HOURS must be between 1 and"]),
    (["game", "list"], {"PBEM_SMTP_RELAY": "ftp://mail.example.org"}, ["unsupported relay scheme 'ftp'"]),
    (["serve", "--listen", "127.0.0.1:99999"], {}, ["port from 0 to 65535"]),
    (["serve", "--listen", "localhost:smtp"], {}, ["port from 0 to 65535"]),
    (["serve", "--relay", "ftp://mail.example.org", "--listen", "127.0.0.1:0"], {}, ["unsupported relay scheme"]),
    (["deadline", "nosuchgame"], {}, ["there is no game called 'nosuchgame'"]),
    (["state", "g1", "--at", "9999"], {}, ["--at 9999 is outside the log of g1"]),
    (["state", "g1", "--at", "0"], {}, ["outside the log"]),
])
def test_a_mistake_is_one_line_and_exit_status_2(tmp_path, made, args, env, words):
    if "--db" not in args and "--config" not in args:
        args = ["--db", made, *args]
    one_line(pbem(*args, cwd=tmp_path, env=env), *words)


def test_a_bad_config_file_says_where(tmp_path):
    config = tmp_path / "pbem.toml"
    config.write_text('[mail]\ndomian = "civ.example.org"\n')
    one_line(pbem("--config", str(config), "game", "list", cwd=tmp_path), "unknown setting mail.domian", "domain")
    config.write_text("[listen]\nport = 99999\n")
    one_line(pbem("--config", str(config), "game", "list", cwd=tmp_path), "listen.port must be between 0 and 65535")
    config.write_text("[listen\nport = 1\n")
    one_line(pbem("--config", str(config), "game", "list", cwd=tmp_path), "is not valid TOML")


def test_a_corrupt_database_file_is_named_not_dumped(tmp_path):
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"this was never a database" * 100)
    one_line(pbem("--db", f"sqlite:///{broken}", "game", "list", cwd=tmp_path), "damaged or is not a pbem database")


def test_a_full_disk_writes_nothing_and_says_so(tmp_path):
    done = pbem("--db", f"sqlite:///{tmp_path / 'full.sqlite'}", "game", "create", "g1", *PLAYERS, cwd=tmp_path,
                limit_file_size=60_000)
    one_line(done, "full.sqlite is full or failing", "free some space")


def test_submit_beyond_the_message_size_limit_is_refused_like_ingest(tmp_path, made):
    big = b"HELP\n" * 250_000  # 1.25 MB, over the 1 MB a message may have
    one_line(pbem("--db", made, "submit", "g1", "--as", "moderator", cwd=tmp_path, stdin=big), "larger than 1000000 bytes")
    ingested = pbem("--db", made, "ingest", "--from", "ann@example.org", "--to", "pbem+g1@pbem.localhost", cwd=tmp_path,
                    stdin=b"From: ann@example.org\r\nTo: pbem+g1@pbem.localhost\r\nSubject: x\r\n\r\n" + big)
    assert ingested.returncode == 0 and b"rejected" in ingested.stdout  # stored, refused, answered: no traceback


def test_the_same_submission_twice_at_the_same_version_is_acknowledged_twice(tmp_path, made):
    for _ in range(2):
        done = pbem("--db", made, "submit", "g1", "--as", "moderator", cwd=tmp_path, stdin=b"HELP\nSTATUS\n")
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        assert b"STATUS: Setup" in done.stdout


def test_flush_delivers_every_letter_due_not_fifty(tmp_path):
    url = f"sqlite:///{tmp_path / 'many.sqlite'}"
    eight = [x for n in range(8) for x in ("--player", f"P{n}:p{n}@example.org")]
    for number in range(6):  # 8 start letters and a prompt a game: over 50 in all
        created = pbem("--db", url, "game", "create", f"g{number}", *eight, cwd=tmp_path, env={"PBEM_MAILDIR": "out"})
        assert created.returncode == 0, created.stderr
    first = pbem("--db", url, "flush", cwd=tmp_path, env={"PBEM_MAILDIR": "out"})
    delivered = int(first.stdout.split()[1])
    files = [p for p in (tmp_path / "out").glob("*/new/*") if p.is_file()]
    assert delivered > 50 and len(files) == delivered
    assert pbem("--db", url, "flush", cwd=tmp_path).stdout.startswith(b"delivered 0 letters")


def test_config_check_shows_what_is_in_force_and_masks_passwords(tmp_path):
    config = tmp_path / "pbem.toml"
    config.write_text(
        f'[database]\nurl = "sqlite:///{tmp_path / "c.sqlite"}"\n[mail]\ndomain = "civ.example.org"\n'
        'relay = "smtp+starttls://game:hunter2@smtp.example.org:587"\n[games]\ndeadline_hours = 72\n'
    )
    done = pbem("--config", str(config), "config", "check", cwd=tmp_path, env={"PBEM_DEADLINE_HOURS": "96"})
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr
    assert "hunter2" not in out and "smtp+starttls://game:***@smtp.example.org:587" in out
    assert f"mail.domain = civ.example.org    [{config}]" in out
    assert "games.deadline_hours = 96    [PBEM_DEADLINE_HOURS]" in out  # the environment wins over the file
    assert "listen.port = 8025    [default]" in out and out.rstrip().endswith("database: ok")
    example = pbem("config", "example", cwd=tmp_path).stdout.decode()
    (tmp_path / "example.toml").write_text(example)
    assert pbem("--config", str(tmp_path / "example.toml"), "config", "check", cwd=tmp_path).returncode == 0


def test_the_operations_guide_lists_every_setting():
    guide = (Path(__file__).parents[2] / "docs" / "operations.md").read_text()
    missing = [f"{s.section}.{s.key}" for s in SETTINGS if f"`{s.section}.{s.key}` | `{s.env}`" not in guide]
    assert not missing, f"docs/operations.md does not list {missing}"

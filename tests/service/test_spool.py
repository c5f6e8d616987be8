"""`pbem ingest` hands a message to a running `pbem serve` through the spool, and nothing is lost (pbem/spool.py).

Real processes throughout: `pbem serve` started and SIGKILLed, `python -m pbem ingest` fed a message on
standard input as an MTA's pipe transport does, the letters read from the Maildir the server delivers to.
"""

from __future__ import annotations

import email
import os
import subprocess
import sys
import time
from email.message import EmailMessage
from email.policy import default as default_policy
from pathlib import Path

import pytest
from hostile.processes import PLAYERS, Server, rows

from pbem.mail.tokens import reply_address
from pbem.service.games import create_game
from pbem.service.server import utc_now
from pbem.service.settings import Settings
from pbem.spool import Spool, spool_of
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

LAUNCHER = [sys.executable, "-m", "pbem"]


@pytest.fixture
def world(tmp_path):
    db_file, maildir = tmp_path / "pbem.sqlite", tmp_path / "mail"
    url = f"sqlite:///{db_file}"
    db = make_engine(url)
    ensure_schema(db)
    create_game(db, Settings(db_url=url, maildir=maildir, board_pictures=False), "g1", PLAYERS, seed="spool",
                now=utc_now())
    with UnitOfWork(db) as uow:  # Ann writes to her reply address, as a reply to the server's letter would
        ann = uow.players.by_name("g1", PLAYERS[0].name)
        address = reply_address(bytes.fromhex(uow.games.get("g1").reply_secret), "g1", ann.id, Settings().domain)
    db.dispose()
    env = {**os.environ, "PBEM_DATABASE_URL": url, "PBEM_MAILDIR": str(maildir), "PBEM_BOARD_PICTURES": "0",
           "PBEM_DEADLINE_HOURS": "1000"}
    return db_file, maildir, env, address


def _mail(i: int, to: str) -> bytes:
    message = EmailMessage(policy=default_policy)
    message["From"] = PLAYERS[0].email
    message["To"] = to
    message["Subject"] = "press"
    message["Message-ID"] = f"<spool-{i}@players.example>"
    message.set_content(f"PRESS TO ALL: spooled {i}\n")
    return message.as_bytes()


def _ingest(env: dict, cwd: Path, raw: bytes, to: str) -> subprocess.CompletedProcess:
    return subprocess.run([*LAUNCHER, "ingest", "--from", PLAYERS[0].email, "--to", to],
                          input=raw, capture_output=True, env=env, cwd=cwd, timeout=120)


def _answers(maildir: Path, i: int) -> int:
    """Letters in Ann's Maildir answering mail number ``i``."""
    folder = maildir / PLAYERS[0].email
    if not folder.is_dir():
        return 0
    found = 0
    for sub in ("new", "cur"):
        for path in (folder / sub).iterdir():
            letter = email.message_from_bytes(path.read_bytes(), policy=default_policy)
            if str(letter.get("In-Reply-To", "")) == f"<spool-{i}@players.example>":
                found += 1
    return found


def _until(condition, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout  # a hang guard only: the condition is what the test waits for
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.05)


def test_with_a_server_running_ingest_spools_and_the_server_answers(world, tmp_path):
    db_file, maildir, env, to = world
    server = Server(env, tmp_path)
    server.start()
    try:
        done = _ingest(env, tmp_path, _mail(1, to), to)
        assert done.returncode == 0, done.stderr
        assert done.stdout.decode().startswith("spooled"), done.stdout
        _until(lambda: _answers(maildir, 1) == 1, "the server's answer to the spooled mail")
        assert not list((spool_of(f"sqlite:///{db_file}").folder / "new").iterdir())
    finally:
        server.stop()
    assert rows(db_file, "SELECT status FROM inbox") == [("done",)]
    assert rows(db_file, "SELECT count(*) FROM events WHERE type = 'PressSent'") == [(1,)]


def test_without_a_server_ingest_does_the_whole_job(world, tmp_path):
    db_file, maildir, env, to = world
    done = _ingest(env, tmp_path, _mail(2, to), to)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().startswith("done"), done.stdout
    assert rows(db_file, "SELECT count(*) FROM events WHERE type = 'PressSent'") == [(1,)]


def test_a_killed_server_frees_ingest_and_what_it_left_in_the_spool_is_handled_once(world, tmp_path):
    db_file, maildir, env, to = world
    server = Server(env, tmp_path)
    server.start()
    spool = spool_of(f"sqlite:///{db_file}")
    assert spool is not None and spool.server_running()
    server.kill()
    assert not spool.server_running()  # the kernel dropped the dead server's lock
    spool.put(_mail(3, to), PLAYERS[0].email, [to])  # spooled as the server died
    done = _ingest(env, tmp_path, _mail(4, to), to)
    assert done.returncode == 0, done.stderr
    said = done.stdout.decode()
    assert said.startswith("done") and "also handled 1 message" in said, said
    assert rows(db_file, "SELECT count(*) FROM events WHERE type = 'PressSent'") == [(2,)]
    # The same message spooled again (a server killed after its inbox commit, before deleting the file): once.
    spool.put(_mail(3, to), PLAYERS[0].email, [to])
    server.start()
    try:
        _until(lambda: not list((spool.folder / "new").iterdir()), "the server to take in the spool")
    finally:
        server.stop()
    assert rows(db_file, "SELECT count(*) FROM events WHERE type = 'PressSent'") == [(2,)]
    assert rows(db_file, "SELECT count(*) FROM inbox") == [(2,)]


def test_a_spooled_message_is_on_disk_before_ingest_exits_and_leaves_no_draft(tmp_path):
    spool = Spool(tmp_path / "x.sqlite-spool")
    path = spool.put(b"Subject: hi\r\n\r\nbody\r\n", "", ["pbem+g1@x"])
    assert path.parent.name == "new" and not list((spool.folder / "tmp").iterdir())
    (waiting,) = spool.waiting()
    assert (waiting.raw, waiting.mail_from, waiting.rcpt_tos) == (b"Subject: hi\r\n\r\nbody\r\n", "", ["pbem+g1@x"])
    (spool.folder / "new" / "garbage").write_bytes(b"not a spooled message")
    assert [w.path for w in spool.waiting()] == [path]
    spool.done(waiting)
    assert [w.path.name for w in spool.waiting()] == []


def test_no_spool_for_postgresql_or_a_database_in_memory():
    assert spool_of("postgresql://u@h/db") is None
    assert spool_of("sqlite:///:memory:") is None
    assert spool_of("sqlite:////srv/pbem/pbem.sqlite").folder == Path("/srv/pbem/pbem.sqlite-spool")

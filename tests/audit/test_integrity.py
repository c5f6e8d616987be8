"""A log that does not hold is named, not served: a broken chain, an event type this engine does not know, a cut tail."""

from __future__ import annotations

import email
import json
import os
import signal
import subprocess
import sys
import time
from email import policy
from pathlib import Path

import pytest
from sqlalchemy import text

from pbem.rules.core.events import Event
from pbem.rules.engine import is_input
from pbem.service.simulate import simulate
from pbem.store.database import make_engine
from pbem.store.events import NewEvent
from pbem.store.unit_of_work import UnitOfWork

PBEM = [sys.executable, "-m", "pbem.cli"]
GAME = "sim-integrity"


def pbem(db_url: str, cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PBEM_DATABASE_URL": db_url, "PBEM_MAILDIR": str(cwd / "mail"), "PBEM_BOARD_PICTURES": "0"}
    return subprocess.run([*PBEM, *args], input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


@pytest.fixture
def played(tmp_path):
    url = f"sqlite:///{tmp_path / 'game.sqlite'}"
    simulate(3, 1, "integrity", db_url=url)
    return url, tmp_path


def execute(url: str, sql: str, **params) -> None:
    db = make_engine(url)
    with db.begin() as conn:
        conn.execute(text(sql), params)
    db.dispose()


def one_line_error(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


def test_a_tampered_event_is_named_by_state_log_and_verify(played):
    url, cwd = played
    assert pbem(url, cwd, "state", GAME).returncode == 0
    execute(url, "UPDATE events SET payload = replace(payload, 'Moved', 'Moved ') WHERE game_id = :g AND version = 12", g=GAME)
    execute(url, "UPDATE events SET payload = '{\"by\": \"forged\"}' WHERE game_id = :g AND version = 9", g=GAME)
    for command in (["state", GAME], ["state", GAME, "--at", "3"], ["log", GAME], ["map", GAME, "--out", "x.svg"],
                    ["explain", GAME, "20"], ["diff", GAME, "3", "20"], ["export", GAME],
                    ["archive", GAME, "--out", str(cwd / "site")]):
        one_line_error(pbem(url, cwd, *command), "damaged", "version 9")
    verify = pbem(url, cwd, "verify", GAME)
    assert verify.returncode == 1 and "hash chain BROKEN at version 9" in verify.stdout


def test_an_event_type_this_engine_does_not_know_is_one_line_and_mail_for_the_game_waits(played):
    url, cwd = played
    db = make_engine(url)
    with UnitOfWork(db) as uow:  # a newer engine wrote it: the chain holds, the type is unknown here
        version, _ = uow.events.head(GAME)
        uow.events.append(GAME, version, [NewEvent("CometStruck", {"area": "Crete"}, {"engine_version": "9.0.0"})])
    db.dispose()
    one_line_error(pbem(url, cwd, "state", GAME), "'CometStruck'", "9.0.0", f"version {version + 1}")
    one_line_error(pbem(url, cwd, "log", GAME, "--as", "moderator"), "'CometStruck'")
    # a player's mail to that game is kept, not played and not lost: the operator sees it waiting, and why
    db = make_engine(url)
    with db.begin() as conn:  # the reply address of the last letter the game sent this player
        raw = conn.execute(text("SELECT raw FROM outbox WHERE recipient = 'bot1@sim.invalid' ORDER BY id DESC")).first()[0]
    db.dispose()
    reply_to = email.message_from_bytes(raw, policy=policy.default)["Reply-To"]
    message = (
        f"From: Bot1 <bot1@sim.invalid>\r\nTo: {reply_to}\r\nSubject: Re: orders\r\n"
        "Message-ID: <comet-1@sim.invalid>\r\nDate: Wed, 25 Nov 2026 10:00:00 +0000\r\n\r\nSTATUS\r\n"
    )
    ingest = pbem(url, cwd, "ingest", "--from", "bot1@sim.invalid", "--to", str(reply_to), stdin=message)
    assert ingest.returncode == 75, ingest.stderr  # a temporary failure: the MTA keeps the message and tries again
    waiting = pbem(url, cwd, "queue")
    held = next(line for line in waiting.stdout.splitlines() if line.startswith("in:"))
    assert "bot1@sim.invalid" in held and "failed" in held and "CometStruck" in held, waiting.stdout


def test_the_server_names_a_damaged_game_when_it_starts(played):
    url, cwd = played
    execute(url, "UPDATE events SET payload = '{}' WHERE game_id = :g AND version = 5", g=GAME)
    env = {**os.environ, "PBEM_DATABASE_URL": url, "PBEM_MAILDIR": str(cwd / "mail"), "PBEM_BOARD_PICTURES": "0"}
    server = subprocess.Popen([*PBEM, "serve", "--listen", "127.0.0.1:0"], env=env, cwd=cwd,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = server.stderr.readline()
            lines.append(line)
            if "listening for" in line or not line:
                break
        said = "".join(lines)
        assert f"the log of game {GAME} is damaged: its hash chain breaks at version 5" in said, said
    finally:
        server.send_signal(signal.SIGINT)
        # The signal comes straight after "listening for": the server must have its handlers by then (it once
        # announced itself first and hung when SIGINT came in between). communicate drains what it logs meanwhile.
        server.communicate(timeout=30)


def test_verify_head_takes_the_chain_head_a_letter_shows_and_names_the_letter(played):
    """Issue 30: every letter ends "chain head <16 hex digits>", and verify --head called that head tampered."""
    url, cwd = played
    db = make_engine(url)
    with UnitOfWork(db) as uow:
        letters = uow.outbox.list(GAME)
    db.dispose()

    def text_of(row) -> str:
        return email.message_from_bytes(bytes(row.raw), policy=policy.default).get_body(preferencelist=("plain",)).get_content()

    def head_in(row) -> str | None:
        words = [part.split()[0] for part in text_of(row).split("chain head ")[1:] if part.split()]
        return next((w for w in words if len(w) == 16 and all(c in "0123456789abcdef" for c in w)), None)

    letter = next(row for row in reversed(letters) if head_in(row))
    shown = head_in(letter)
    assert len(shown) == 16
    kept = pbem(url, cwd, "verify", GAME, "--head", shown)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert "head ok: the hash you kept is version" in kept.stdout and "shown in " in kept.stdout
    assert f"to {letter.recipient}" in kept.stdout or "the first a " in kept.stdout
    one_line_error(pbem(url, cwd, "verify", GAME, "--head", shown[:8]), "16 hexadecimal digits")
    one_line_error(pbem(url, cwd, "verify", GAME, "--head", "zz" + shown[2:]), "16 hexadecimal digits")
    gone = pbem(url, cwd, "verify", GAME, "--head", "0" * 16 if not shown.startswith("0" * 16) else "f" * 16)
    assert gone.returncode == 1 and "head NOT FOUND" in gone.stdout  # unknown, not called tampering
    assert "no letter of this game showed it: check that it was copied whole" in gone.stdout


def test_verify_head_catches_a_log_cut_short_after_a_mail_showed_its_head(played):
    url, cwd = played
    entries = json.loads(pbem(url, cwd, "log", GAME, "--as", "moderator", "--json").stdout)
    head = entries[-1]["hash"]
    earlier = entries[10]
    kept = pbem(url, cwd, "verify", GAME, "--head", earlier["hash"])
    assert kept.returncode == 0 and f"head ok: the hash you kept is version {earlier['version']}" in kept.stdout
    db = make_engine(url)
    with UnitOfWork(db) as uow:
        events = [Event.from_payload(r.type, r.payload) for r in uow.events.read(GAME)]
    db.dispose()
    # cut where the game waited for an order, so what is left is a whole, sound log
    cut = max(v for v in range(1, len(events) - 2) if is_input(events[v]))
    execute(url, "DELETE FROM events WHERE game_id = :g AND version > :v", g=GAME, v=cut)
    execute(url, "DELETE FROM snapshots WHERE game_id = :g", g=GAME)
    plain = pbem(url, cwd, "verify", GAME)
    assert plain.returncode == 0 and "hash chain ok" in plain.stdout  # a cut tail is a sound chain: only a kept head shows it
    after = pbem(url, cwd, "verify", GAME, "--head", head)
    assert after.returncode == 1 and "head NOT FOUND" in after.stdout and "cut short or rewritten" in after.stdout
    assert "though a letter of this game showed it" in after.stdout

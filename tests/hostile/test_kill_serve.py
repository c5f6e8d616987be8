"""kill -9 of `pbem serve` at random moments while order mails arrive: nothing lost, nothing applied or sent twice.

A real server process (SQLite, Maildir delivery) takes order mails from a
real SMTP client, as a relay would hand them over; a killer SIGKILLs it at
seeded random moments and starts it again on the same port. The client does
what an MTA does: a message not answered with 250 is sent again, with the
same Message-ID, until it is. Each mail is a press order (PRESS TO ALL),
state-changing and unique, so "applied twice" shows in the log. When the
last mail is in, the server runs until its inbox and outbox are empty; then:

* every mail is in the inbox once, processed (``done``): none lost;
* each was applied once: one PressSent event per mail;
* each got exactly one acknowledgement, and no player's Maildir holds a
  letter twice (the outbox lease and idempotent Maildir delivery);
* no half-written file is left in any Maildir's ``tmp/``;
* ``pbem verify`` re-derives the game.

``make hostile-kill`` runs it with 1,000 mails (``PBEM_HOSTILE_MAILS``).
"""

from __future__ import annotations

import email
import json
import os
import random
import signal
import smtplib
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from email.message import EmailMessage
from email.policy import default as default_policy
from pathlib import Path

import pytest

from pbem.service.games import NewPlayer, create_game
from pbem.service.server import utc_now
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine

pytestmark = pytest.mark.hostile

MAILS = int(os.environ.get("PBEM_HOSTILE_MAILS", "1000"))
PLAYERS = [NewPlayer("Ann", "ann@players.example"), NewPlayer("Ben", "ben@players.example"),
           NewPlayer("Cy", "cy@players.example")]
PBEM = [sys.executable, "-m", "pbem.cli"]


class Server:
    """`pbem serve` as a process: started, killed with SIGKILL, started again on the same port."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env, self.cwd = env, cwd
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.proc: subprocess.Popen | None = None
        self.said: list[str] = []

    def start(self) -> None:
        self.proc = subprocess.Popen([*PBEM, "serve", "--listen", f"127.0.0.1:{self.port}"], env=self.env,
                                     cwd=self.cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        listening = threading.Event()

        def drain(stream) -> None:  # read all it says, so a full pipe never stalls it
            for line in stream:
                self.said.append(line)
                if "listening for" in line:
                    listening.set()
            listening.set()

        threading.Thread(target=drain, args=(self.proc.stderr,), daemon=True).start()
        assert listening.wait(120) and self.proc.poll() is None, "".join(self.said[-30:])

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=60)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            self.proc.wait(timeout=60)


def _order(i: int, sender: NewPlayer, to: str) -> EmailMessage:
    message = EmailMessage(policy=default_policy)
    message["From"] = sender.email
    message["To"] = to
    message["Subject"] = "press"
    message["Message-ID"] = f"<hostile-{i}@players.example>"
    message.set_content(f"PRESS TO ALL: hostile {i}\n")
    return message


def _send_until_taken(port: int, message: EmailMessage, sender: str, to: str) -> int:
    """Send as an MTA does: again and again until the server answers 250. Returns the tries it took."""
    tries = 0
    while True:
        tries += 1
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
                smtp.send_message(message, sender, [to])
            return tries
        except (OSError, smtplib.SMTPException):
            time.sleep(0.05)


def _rows(db_file: Path, query: str) -> list[tuple]:
    with sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=30) as conn:
        return conn.execute(query).fetchall()


def _letters(maildir: Path) -> dict[str, list[email.message.Message]]:
    out = {}
    for folder in sorted(p for p in maildir.iterdir() if p.is_dir()):
        out[folder.name] = [email.message_from_bytes(f.read_bytes(), policy=default_policy)
                            for sub in ("new", "cur") for f in sorted((folder / sub).iterdir())]
    return out


def test_kill_9_while_order_mails_arrive_loses_and_repeats_nothing(tmp_path):
    db_file, maildir = tmp_path / "pbem.sqlite", tmp_path / "mail"
    url = f"sqlite:///{db_file}"
    settings = Settings(db_url=url, maildir=maildir, board_pictures=False)
    db = make_engine(url)
    ensure_schema(db)
    create_game(db, settings, "g1", PLAYERS, seed="hostile", now=utc_now())
    db.dispose()
    env = {**os.environ, "PBEM_DATABASE_URL": url, "PBEM_MAILDIR": str(maildir), "PBEM_BOARD_PICTURES": "0",
           "PBEM_OUTBOX_LEASE": "2", "PBEM_DEADLINE_HOURS": "1000"}
    server = Server(env, tmp_path)
    server.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(_letters(maildir) if maildir.exists() else {}) < len(PLAYERS):
            time.sleep(0.1)
        reply_to = {p.email: str(_letters(maildir)[p.email][0]["Reply-To"]) for p in PLAYERS}

        tries: list[int] = []

        def send_all() -> None:
            for i in range(MAILS):
                sender = PLAYERS[i % len(PLAYERS)]
                tries.append(_send_until_taken(server.port, _order(i, sender, reply_to[sender.email]),
                                               sender.email, reply_to[sender.email]))

        sending = threading.Thread(target=send_all)
        sending.start()
        rng = random.Random("kill -9")
        kills = 0
        while sending.is_alive():
            sending.join(rng.uniform(0.05, 1.5))
            if sending.is_alive():
                server.kill()
                kills += 1
                server.start()
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            waiting = _rows(db_file, "SELECT count(*) FROM inbox WHERE status NOT IN ('done', 'rejected')")[0][0]
            unsent = _rows(db_file, "SELECT count(*) FROM outbox WHERE sent_at IS NULL")[0][0]
            if not waiting and not unsent:
                break
            time.sleep(0.2)
    finally:
        server.stop()
    print(f"{MAILS} mails, {kills} kills, {sum(tries) - MAILS} resent by the client")
    assert kills >= min(5, MAILS // 50)

    ours = {f"hostile-{i}@players.example" for i in range(MAILS)}
    inbox = [(m.strip("<>"), s) for m, s in _rows(db_file, "SELECT message_id, status FROM inbox") if m.strip("<>") in ours]
    assert Counter(m for m, _ in inbox) == Counter(ours)  # each once: none lost, none taken twice
    assert {s for _, s in inbox} == {"done"}

    pressed = Counter(json.loads(p)["text"] for (p,) in _rows(db_file, "SELECT payload FROM events WHERE type = 'PressSent'"))
    assert pressed == Counter(f"hostile {i}" for i in range(MAILS))  # each applied once

    letters = _letters(maildir)
    for address, box in letters.items():
        ids = Counter(str(m["Message-ID"]) for m in box)
        assert [i for i, n in ids.items() if n > 1] == [], f"{address} got a letter twice"
    answers = Counter(str(m["In-Reply-To"]).strip("<>") for box in letters.values() for m in box
                      if str(m["In-Reply-To"]).strip("<>") in ours)
    assert answers == Counter(ours)  # exactly one acknowledgement each
    assert [f for folder in maildir.iterdir() for f in (folder / "tmp").iterdir()] == []

    verified = subprocess.run([*PBEM, "--db", url, "verify", "g1"], capture_output=True, text=True, cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr

"""kill -9 of `pbem serve` at random moments while order mails arrive: nothing lost, nothing applied or sent twice.

A real server process (SQLite, Maildir delivery) takes order mails from a
real SMTP client, as a relay would hand them over; a killer SIGKILLs it at
seeded moments that follow the mail (every 5 to 40 mails taken) and starts it again on the same port. The client does
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
import subprocess
import threading
import time
from collections import Counter
from email.policy import default as default_policy
from pathlib import Path

import pytest

from pbem.service.games import create_game
from pbem.service.server import utc_now
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine

from .processes import (
    PBEM,
    PLAYERS,
    Server,
    press_order,
    rows,
    send_until_taken,
    wait_until_settled,
)

pytestmark = pytest.mark.hostile

MAILS = int(os.environ.get("PBEM_HOSTILE_MAILS", "1000"))


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
           "PBEM_OUTBOX_LEASE": "2", "PBEM_DEADLINE_HOURS": "1000",
           # Hundreds of orders a minute from three players, on purpose: the flood limit (make hostile-flood
           # tests it) would set most of them aside.
           "PBEM_FLOOD_LIMIT": "0"}
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
                tries.append(send_until_taken(server.port, press_order(i, sender, reply_to[sender.email]),
                                               sender.email, reply_to[sender.email]))

        sending = threading.Thread(target=send_all)
        sending.start()
        # The kills follow the mail, not the clock: after every 5 to 40 mails taken (seeded), and a random
        # moment of up to 0.3 s later, so they fall while a message is stored, handled or answered, and their
        # number does not depend on how fast this machine is.
        rng = random.Random("kill -9")
        kills = 0
        next_kill = rng.randint(5, 40)
        while sending.is_alive():
            sending.join(0.01)
            if sending.is_alive() and len(tries) >= next_kill:
                time.sleep(rng.uniform(0, 0.3))
                server.kill()
                kills += 1
                server.start()
                next_kill = len(tries) + rng.randint(5, 40)
        wait_until_settled(lambda query: rows(db_file, query)[0][0])
    finally:
        server.stop()
    print(f"{MAILS} mails, {kills} kills, {sum(tries) - MAILS} resent by the client")
    assert kills >= min(5, MAILS // 50)

    ours = {f"hostile-{i}@players.example" for i in range(MAILS)}
    inbox = [(m.strip("<>"), s) for m, s in rows(db_file, "SELECT message_id, status FROM inbox") if m.strip("<>") in ours]
    assert Counter(m for m, _ in inbox) == Counter(ours)  # each once: none lost, none taken twice
    assert {s for _, s in inbox} == {"done"}

    pressed = Counter(json.loads(p)["text"] for (p,) in rows(db_file, "SELECT payload FROM events WHERE type = 'PressSent'"))
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

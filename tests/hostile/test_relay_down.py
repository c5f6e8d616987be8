"""The SMTP relay down for a while, and `pbem serve` killed mid-delivery: every letter reaches the relay.

A real server sends through a real SMTP relay on loopback (a sink that
keeps what it is handed and answers 250 a little later, as a relay writing
to its queue does). While press orders arrive by SMTP, the relay goes down
for some seconds, and the server is SIGKILLed at four evenly spaced points
of the sending (after a seeded random wait), some of them between the relay
taking a letter and the server marking it sent. When the last order is in,
the server runs until its outbox is empty (letters that failed wait for
their next attempt, a minute later); then:

* every order was kept and applied once;
* every letter of the outbox is marked sent, and the relay holds every one;
* a letter reached the relay twice only when a kill fell between the
  relay's 250 and the server's mark (at most one letter per kill: delivery
  is one letter at a time). Through a relay that is the limit of any
  sender: Maildir delivery, which recognises a letter by its Message-ID,
  is exactly once (`test_kill_serve.py`).

``make hostile-relay`` runs it with 200 orders (``PBEM_HOSTILE_RELAY_MAILS``).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import threading
import time
from collections import Counter

import pytest

from pbem.service.games import create_game
from pbem.service.server import utc_now
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine

from .processes import (
    PBEM,
    PLAYERS,
    Server,
    SinkRelay,
    press_order,
    rows,
    send_until_taken,
    wait_until_settled,
)

pytestmark = pytest.mark.hostile

MAILS = int(os.environ.get("PBEM_HOSTILE_RELAY_MAILS", "200"))
DOWN_FOR = 4.0  # seconds the relay stays down
#: The server is killed (kill -9) at this many evenly spaced points of the sending, less one.
KILL_POINTS = 5


def test_relay_down_and_kill_9_mid_delivery_deliver_every_letter(tmp_path):
    db_file = tmp_path / "pbem.sqlite"
    url = f"sqlite:///{db_file}"
    relay = SinkRelay(delay=0.05)
    relay.start()
    settings = Settings(db_url=url, maildir=tmp_path / "mail", board_pictures=False)
    db = make_engine(url)
    ensure_schema(db)
    create_game(db, settings, "g1", PLAYERS, seed="relay", now=utc_now())
    db.dispose()
    env = {**os.environ, "PBEM_DATABASE_URL": url, "PBEM_SMTP_RELAY": f"smtp://127.0.0.1:{relay.port}",
           "PBEM_BOARD_PICTURES": "0", "PBEM_OUTBOX_LEASE": "2", "PBEM_DEADLINE_HOURS": "1000",
           # Hundreds of orders a minute from three players, on purpose: the flood limit (make hostile-flood
           # tests it) would set most of them aside.
           "PBEM_FLOOD_LIMIT": "0"}
    server = Server(env, tmp_path)
    server.start()
    kills = 0
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(relay.received) < len(PLAYERS):
            time.sleep(0.1)
        reply_to = {}
        for raw in relay.received:
            header = raw.split(b"\r\n\r\n", 1)[0].decode()
            to = next(line.split(":", 1)[1].strip() for line in header.splitlines() if line.startswith("To:"))
            reply_to[to] = next(line.split(":", 1)[1].strip() for line in header.splitlines() if line.startswith("Reply-To:"))

        sent = [0]
        # The kills come at fixed points of the sending, not after random waits: a sender faster than the
        # waits once left room for only two kills. At each point the sender waits until the server was
        # killed (its letters in flight with it) and started again.
        points = {MAILS * k // KILL_POINTS for k in range(1, KILL_POINTS)}
        reached, resumed = threading.Event(), threading.Event()

        def send_all() -> None:
            for i in range(MAILS):
                if i in points:
                    reached.set()
                    resumed.wait()
                    resumed.clear()
                sender = PLAYERS[i % len(PLAYERS)]
                send_until_taken(server.port, press_order(i, sender, reply_to[sender.email]), sender.email,
                                 reply_to[sender.email])
                sent[0] += 1

        sending = threading.Thread(target=send_all)
        sending.start()
        rng = random.Random("relay down")
        went_down = False
        while sending.is_alive():
            if not reached.wait(0.2):
                continue
            reached.clear()
            time.sleep(rng.uniform(0.05, 0.5))  # letters of the orders just sent are being delivered
            if not went_down and sent[0] > MAILS // 3:
                relay.stop()  # the relay goes down for a while; the server keeps taking orders
                time.sleep(DOWN_FOR)
                relay.start()
                went_down = True
            server.kill()
            kills += 1
            server.start()
            resumed.set()
        sending.join()
        wait_until_settled(lambda query: rows(db_file, query)[0][0])
    finally:
        server.stop()
        relay.stop()
    assert went_down and kills >= 3

    ours = {f"hostile-{i}@players.example" for i in range(MAILS)}
    inbox = [(m.strip("<>"), s) for m, s in rows(db_file, "SELECT message_id, status FROM inbox") if m.strip("<>") in ours]
    assert Counter(m for m, _ in inbox) == Counter(ours) and {s for _, s in inbox} == {"done"}
    pressed = Counter(json.loads(p)["text"] for (p,) in rows(db_file, "SELECT payload FROM events WHERE type = 'PressSent'"))
    assert pressed == Counter(f"hostile {i}" for i in range(MAILS))

    outbox = {m.strip("<>") for (m,) in rows(db_file, "SELECT message_id FROM outbox WHERE sent_at IS NOT NULL")}
    assert rows(db_file, "SELECT count(*) FROM outbox WHERE sent_at IS NULL")[0][0] == 0
    received = Counter(relay.message_ids())
    assert set(received) == outbox  # every letter reached the relay, and nothing else did
    repeated = sum(n - 1 for n in received.values())
    print(f"{MAILS} orders, {len(outbox)} letters, {kills} kills, relay down {DOWN_FOR:.0f} s; "
          f"{repeated} letters reached the relay twice")
    assert repeated <= kills

    verified = subprocess.run([*PBEM, "--db", url, "verify", "g1"], capture_output=True, text=True, cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr

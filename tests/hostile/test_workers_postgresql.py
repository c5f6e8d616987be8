"""Three `pbem serve` workers on one PostgreSQL database: every letter leaves once, every order is applied once.

Three games take press orders by SMTP, spread over three real server
processes that share one database and one relay. Before the outbox lease,
207 of 312 letters went out two or three times this way: each worker
locked the letters due only while it read them, then all delivered them.
Here the relay must receive every letter of the outbox exactly once, every
order must be applied once, and each game must re-derive (`pbem verify`).

``make hostile-workers`` runs it with 150 orders (``PBEM_HOSTILE_WORKER_MAILS``).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections import Counter

import pytest
from sqlalchemy import text

from pbem.service.games import NewPlayer, create_game
from pbem.service.server import utc_now
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine

from .processes import (
    PBEM,
    Server,
    SinkRelay,
    press_order,
    send_until_taken,
    wait_until_settled,
)

pytestmark = pytest.mark.hostile

MAILS = int(os.environ.get("PBEM_HOSTILE_WORKER_MAILS", "150"))
GAMES = ("g1", "g2", "g3")
WORKERS = 3


def _players(game: str) -> list[NewPlayer]:
    return [NewPlayer(name, f"{name.lower()}.{game}@players.example") for name in ("Ann", "Ben", "Cy")]


def test_three_workers_on_postgresql_send_each_letter_once(postgres_url, tmp_path):
    relay = SinkRelay(delay=0.0)
    relay.start()
    db = make_engine(postgres_url)
    ensure_schema(db)
    settings = Settings(db_url=postgres_url, maildir=tmp_path / "mail", board_pictures=False)
    for game in GAMES:
        create_game(db, settings, game, _players(game), seed=game, now=utc_now())
    env = {**os.environ, "PBEM_DATABASE_URL": postgres_url, "PBEM_SMTP_RELAY": f"smtp://127.0.0.1:{relay.port}",
           "PBEM_BOARD_PICTURES": "0", "PBEM_DEADLINE_HOURS": "1000"}
    workers = [Server(env, tmp_path) for _ in range(WORKERS)]
    for worker in workers:
        worker.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(relay.received) < 3 * len(GAMES):
            time.sleep(0.1)
        reply_to = {}
        for raw in relay.received:
            header = raw.split(b"\r\n\r\n", 1)[0].decode()
            fields = dict(line.split(":", 1) for line in header.splitlines() if ":" in line and not line[0].isspace())
            reply_to[fields["To"].strip()] = fields["Reply-To"].strip()
        people = [p for game in GAMES for p in _players(game)]

        def send(share: int) -> None:
            for i in range(share, MAILS, WORKERS):
                sender = people[i % len(people)]
                send_until_taken(workers[share].port, press_order(i, sender, reply_to[sender.email]),
                                 sender.email, reply_to[sender.email])

        started = time.monotonic()
        senders = [threading.Thread(target=send, args=(k,)) for k in range(WORKERS)]
        for thread in senders:
            thread.start()
        for thread in senders:
            thread.join()

        def count(query: str) -> int:
            with db.connect() as conn:
                return conn.execute(text(query)).scalar()

        wait_until_settled(count, timeout=300)
        took = time.monotonic() - started
    finally:
        for worker in workers:
            worker.stop()
        relay.stop()
    with db.connect() as conn:
        inbox = [(m.strip("<>"), s) for m, s in conn.execute(text("SELECT message_id, status FROM inbox"))]
        pressed = Counter(json.loads(p)["text"] if isinstance(p, str) else p["text"] for (p,) in
                          conn.execute(text("SELECT payload FROM events WHERE type = 'PressSent'")))
        outbox = [m.strip("<>") for (m,) in conn.execute(text("SELECT message_id FROM outbox"))]
        unsent = conn.execute(text("SELECT count(*) FROM outbox WHERE sent_at IS NULL")).scalar()
    db.dispose()

    ours = {f"hostile-{i}@players.example" for i in range(MAILS)}
    assert Counter(m for m, s in inbox if m in ours and s == "done") == Counter(ours)
    assert pressed == Counter(f"hostile {i}" for i in range(MAILS))
    assert unsent == 0
    received = Counter(relay.message_ids())
    print(f"{MAILS} orders, {len(outbox)} letters, {WORKERS} workers: {took:.1f} s; "
          f"{sum(n - 1 for n in received.values())} letters sent twice")
    assert received == Counter(outbox)  # each letter once, and nothing else
    for game in GAMES:
        verified = subprocess.run([*PBEM, "--db", postgres_url, "verify", game], capture_output=True, text=True)
        assert verified.returncode == 0, verified.stdout + verified.stderr

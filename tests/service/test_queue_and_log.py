"""`pbem queue` lists what waits and retries or drops one; the server logs one line per message in and out."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timezone

from pbem.service.demo import reply_to_prompt
from pbem.service.games import NewPlayer, create_game
from pbem.service.server import PostOffice
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import latest, send
from .test_operator_errors import PLAYERS, pbem

T0 = datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)


def test_queue_lists_waiting_mail_and_retries_or_drops_one(tmp_path):
    url = f"sqlite:///{tmp_path / 'q.sqlite'}"
    assert pbem("--db", url, "game", "create", "g1", *PLAYERS, cwd=tmp_path).returncode == 0
    listed = pbem("--db", url, "queue", cwd=tmp_path).stdout.decode()
    assert "out:1" in listed and "ann@example.org" in listed and "not tried yet" in listed

    # the relay is down: every letter fails once and waits, its error shown
    down = {"PBEM_SMTP_RELAY": "smtp://127.0.0.1:1"}
    assert pbem("--db", url, "flush", cwd=tmp_path, env=down).stdout.startswith(b"delivered 0")
    listed = pbem("--db", url, "queue", cwd=tmp_path).stdout.decode()
    assert "1 attempts, next" in listed and "(cannot reach relay 127.0.0.1:1" in listed
    dropped = pbem("--db", url, "queue", "drop", "out:1", cwd=tmp_path).stdout.decode()
    assert "out:1: dropped" in dropped
    assert "out:1 " not in pbem("--db", url, "queue", cwd=tmp_path).stdout.decode()
    assert "goes at the next flush" in pbem("--db", url, "queue", "retry", "out:2", cwd=tmp_path).stdout.decode()
    delivered = pbem("--db", url, "flush", cwd=tmp_path, env={"PBEM_MAILDIR": str(tmp_path / "mail")}).stdout.decode()
    assert delivered.startswith("delivered 1 ")  # only out:2 was due again

    # an inbound message that failed is handled again on request
    engine = make_engine(url)
    ensure_schema(engine)
    with UnitOfWork(engine) as uow:
        raw = b"From: ann@example.org\r\nTo: pbem+g1@pbem.localhost\r\nSubject: [g1]\r\nMessage-ID: <q1@x>\r\n\r\nHELP\r\n"
        number, _ = uow.inbox.store(raw, "q1@x", "ann@example.org", ["pbem+g1@pbem.localhost"], T0)
        uow.inbox.mark(number, "failed", error="RuntimeError: a fault of the server", now=T0)
    engine.dispose()
    listed = pbem("--db", url, "queue", cwd=tmp_path).stdout.decode()
    assert f"in:{number}" in listed and "RuntimeError: a fault of the server" in listed
    assert "`pbem queue retry in:<id>` once its cause is fixed" in listed  # it waits for the operator, and says so
    retried = pbem("--db", url, "queue", "retry", f"in:{number}", cwd=tmp_path).stdout.decode()
    assert retried.startswith(f"in:{number}: rejected") or retried.startswith(f"in:{number}: done")
    assert f"in:{number}" not in pbem("--db", url, "queue", cwd=tmp_path).stdout.decode()
    wrong = pbem("--db", url, "queue", "retry", "in:999", cwd=tmp_path)
    assert wrong.returncode == 2 and b"no waiting or failed message" in wrong.stderr


def test_the_server_logs_one_line_per_message_in_and_letter_out(db_url, tmp_path, caplog, world):
    db, settings = world

    async def scenario():
        office = PostOffice(db, settings, clock=lambda: T0, outbox_every=0.05, deadlines_every=3600)
        await office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", [NewPlayer(*p.split(":")) for p in PLAYERS[1::2]],
                                    seed="log", now=T0)
            await office.idle()
            prompt = latest(settings.maildir, "ann@example.org", "new game")
            send(office.port, reply_to_prompt(prompt, "ann@example.org", "STATUS"), "ann@example.org", [str(prompt["Reply-To"])])
            await office.idle()
        finally:
            await office.stop()

    with caplog.at_level(logging.INFO, logger="pbem.mail"):
        asyncio.run(scenario())
    lines = [r.getMessage() for r in caplog.records if r.name == "pbem.mail"]
    ins = [line for line in lines if line.startswith("in ")]
    outs = [line for line in lines if line.startswith("out ")]
    assert len(ins) == 1 and "game=g1" in ins[0] and "outcome=done" in ins[0] and " ms=" in ins[0]
    assert '"orders from player' in ins[0]
    assert len(outs) >= 4 and all("outcome=sent" in line and "game=g1" in line for line in outs)

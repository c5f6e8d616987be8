"""A Maildir this machine cannot write is our fault, not the letter's: retried every minute, never given up."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from pbem.mail.outbound import MaildirDelivery
from pbem.service.games import NewPlayer, create_game
from pbem.service.outbound import GIVE_UP_AFTER, LOCAL_RETRY, flush_all
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
T0 = datetime(2026, 11, 26, 8, 0, tzinfo=timezone.utc)


def test_letters_wait_out_a_maildir_that_cannot_be_written_however_long_and_go_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'pbem.sqlite'}"
    settings = replace(Settings(), gather_minutes=0, db_url=url, maildir=tmp_path / "mail", board_pictures=False)
    db = make_engine(url)
    ensure_schema(db)
    create_game(db, settings, "g1", PLAYERS, seed="spool", now=T0)
    spool = tmp_path / "spool"
    spool.write_text("a file where the Maildir should be: every write under it fails (ENOTDIR)")
    broken = MaildirDelivery(spool)
    now = T0
    for _ in range(GIVE_UP_AFTER + 5):  # more failures than a relay's letter is allowed
        assert asyncio.run(flush_all(db, broken, settings.sender, lambda: now, settings=settings)) == 0
        now += LOCAL_RETRY
    with UnitOfWork(db) as uow:
        letters = uow.outbox.list("g1")
    assert letters and all(r.sent_at is None and r.attempts >= GIVE_UP_AFTER for r in letters)
    assert all(not r.last_error.startswith("gave up") and r.next_attempt_at <= now for r in letters)

    spool.unlink()  # the operator frees the disk: the next minute's flush delivers each letter, once
    sent = asyncio.run(flush_all(db, MaildirDelivery(spool), settings.sender, lambda: now, settings=settings))
    assert sent == len(letters)
    assert asyncio.run(flush_all(db, MaildirDelivery(spool), settings.sender, lambda: now + timedelta(hours=1),
                                 settings=settings)) == 0
    assert sum(1 for f in spool.glob("*/new/*")) == len(letters)
    db.dispose()

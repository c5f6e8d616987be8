"""`pbem serve` while its SQLite database cannot grow: 452 to the SMTP client, nothing lost, all handled after.

SQLite itself answers SQLITE_FULL ("database or disk is full") here, through
its `max_page_count` limit set on every connection the server takes: the same
error a full disk gives, without a mount (the real full disk is in
tests/hostile/test_disk_faults.py, `make hostile-disk`). A real SMTP client
talks to the real server on loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import smtplib
import sqlite3
from dataclasses import replace
from email.message import EmailMessage

import pytest
from sqlalchemy import event, text

from pbem.mail.outbound import MaildirDelivery
from pbem.service.games import NewPlayer, create_game
from pbem.service.inbound import accept, ingest
from pbem.service.outbound import flush_all
from pbem.service.server import NO_SPACE, PostOffice, utc_now
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import latest

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
NO_LIMIT = 1_073_741_823


@pytest.fixture
def full_world(tmp_path):
    """(engine, settings, limit): a game g1 on SQLite; ``limit["full"] = True`` stops the file from growing."""
    url = f"sqlite:///{tmp_path / 'pbem.sqlite'}"
    settings = replace(Settings(), gather_minutes=0, db_url=url, maildir=tmp_path / "mail", listen_port=0, board_pictures=False)
    db = make_engine(url)
    ensure_schema(db)
    create_game(db, settings, "g1", PLAYERS, seed="full", now=utc_now())
    asyncio.run(flush_all(db, MaildirDelivery(settings.maildir), settings.sender, utc_now, settings=settings))
    db.dispose()
    with contextlib.closing(sqlite3.connect(tmp_path / "pbem.sqlite")) as conn:
        conn.execute("VACUUM")  # no free page left inside the file: any new row must grow it
    limit = _Limit(db)

    @event.listens_for(db, "checkout")
    def _limit(dbapi_connection, record, proxy):  # noqa: ARG001
        dbapi_connection.execute(limit.pragma())

    yield db, settings, limit
    db.dispose()


class _Limit(dict):
    """``limit["full"] = True`` caps the file at its size on every connection: the pool's, as they are lent,
    and the writer's that takes every write (pbem/store/writer.py), at once."""

    def __init__(self, db) -> None:
        super().__init__(full=False)
        self._db = db

    def pragma(self) -> str:
        # max_page_count never goes below the file's size: 1 means "as big as it is now"
        return f"PRAGMA max_page_count = {1 if self['full'] else NO_LIMIT}"

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        with UnitOfWork(self._db) as uow:
            uow.conn.exec_driver_sql(self.pragma())


def press(i: int, settings, sender: NewPlayer) -> tuple[EmailMessage, str]:
    reply_to = str(latest(settings.maildir, sender.email, "")["Reply-To"])
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender.email, reply_to, "press"
    message["Message-ID"] = f"<full-{i}@example.org>"
    # the quote (a player's mail client quoting our letter) makes the message larger than a page: storing it
    # must grow the file
    message.set_content(f"PRESS TO ALL: full {i}\n\n" + "> an earlier letter, quoted\n" * 400)
    return message, reply_to


def pressed(db) -> list[str]:
    with db.connect() as conn:
        return [json.loads(p)["text"] for (p,) in conn.execute(text("SELECT payload FROM events WHERE type = 'PressSent'"))]


def status_of(db, message_id: str) -> str | None:
    with UnitOfWork(db) as uow:
        row = uow.inbox.by_message_id(message_id)
        return row.status if row is not None else None


def test_a_full_database_answers_452_and_takes_the_retry(full_world):
    db, settings, limit = full_world

    async def scenario():
        office = PostOffice(db, settings, outbox_every=0.05, retry_every=0.1)
        await office.start()
        try:
            await office.idle()
            message, reply_to = press(1, settings, PLAYERS[0])
            limit["full"] = True

            def refused() -> smtplib.SMTPDataError:
                with smtplib.SMTP("127.0.0.1", office.port, timeout=30) as smtp:
                    with pytest.raises(smtplib.SMTPDataError) as info:
                        smtp.send_message(message, PLAYERS[0].email, [reply_to])
                    assert smtp.noop()[0] == 250  # the server still talks: not wedged
                return info.value

            error = await asyncio.to_thread(refused)
            assert f"{error.smtp_code} {error.smtp_error.decode()}" == NO_SPACE
            assert status_of(db, "full-1@example.org") is None  # not kept, so the relay keeps it
            limit["full"] = False

            def taken() -> None:
                with smtplib.SMTP("127.0.0.1", office.port, timeout=30) as smtp:
                    smtp.send_message(message, PLAYERS[0].email, [reply_to])

            await asyncio.to_thread(taken)
            await office.idle()
        finally:
            await office.stop()

    asyncio.run(scenario())
    assert status_of(db, "full-1@example.org") == "done"
    assert pressed(db) == ["full 1"]


def test_a_message_stored_before_the_disk_filled_waits_and_is_handled_when_it_can(full_world):
    """As after a crash: stored, not handled. The server starts on the full database, listens, keeps the message."""
    db, settings, limit = full_world
    message, reply_to = press(2, settings, PLAYERS[1])
    accept(db, message.as_bytes(), PLAYERS[1].email, [reply_to], utc_now())
    limit["full"] = True

    async def scenario():
        office = PostOffice(db, settings, outbox_every=0.05, retry_every=0.1)
        await office.start()  # the backlog cannot be handled: the start goes on
        try:
            assert office.inbound.running
            await asyncio.sleep(0.5)  # several retries, all refused
            assert status_of(db, "full-2@example.org") == "received"
            assert pressed(db) == []
            limit["full"] = False
            for _ in range(600):  # the server's own retry takes it; no operator, no restart
                if status_of(db, "full-2@example.org") == "done":
                    break
                await asyncio.sleep(0.05)
            await office.idle()
        finally:
            await office.stop()

    asyncio.run(scenario())
    assert status_of(db, "full-2@example.org") == "done"
    assert pressed(db) == ["full 2"]


def test_ingest_handles_a_redelivered_message_an_earlier_delivery_stored_but_could_not_handle(full_world):
    """`pbem ingest` stored it, met the full disk, exited 75; the MTA delivers it again once there is room."""
    db, settings, _ = full_world
    message, reply_to = press(3, settings, PLAYERS[2])
    accept(db, message.as_bytes(), PLAYERS[2].email, [reply_to], utc_now())
    again = ingest(db, settings, message.as_bytes(), PLAYERS[2].email, [reply_to], utc_now())
    assert again.status == "done" and pressed(db) == ["full 3"]
    third = ingest(db, settings, message.as_bytes(), PLAYERS[2].email, [reply_to], utc_now())
    assert third.status == "duplicate" and pressed(db) == ["full 3"]

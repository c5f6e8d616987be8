"""One sender's messages are applied in the order they were stored, and one message is handled by one worker.

Several workers (or the threads of one) take stored messages from a shared
queue. A player's second order may reach a free worker while the first
still waits in another's queue; handled the other way round, his correction
would be overridden by what it corrected. `make hostile-workers` found 45 of
150 players' press applied out of order with four workers on PostgreSQL.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from email.message import EmailMessage

from sqlalchemy import text

from pbem.mail.tokens import reply_address
from pbem.service.games import NewPlayer, create_game
from pbem.service.inbound import accept, process
from pbem.service.server import utc_now
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork, game_lock_key

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]


def _store_press(db, settings, words: str, number: int) -> int:
    """Ann's press order ``words``, stored as the SMTP server stores it before answering 250; its inbox id."""
    with UnitOfWork(db) as uow:
        game = uow.games.get("g1")
        ann = next(p for p in uow.players.list("g1") if p.name == "Ann")
    to = reply_address(bytes.fromhex(game.reply_secret), "g1", ann.id, settings.domain, settings.local_part)
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = ann.email, to, "press"
    message["Message-ID"] = f"<order-{number}@example.org>"
    message.set_content(f"PRESS TO ALL: {words}\n")
    inbox_id, new = accept(db, bytes(message), ann.email, [to], utc_now())
    assert new
    return inbox_id


def _press_in_log(db) -> list[str]:
    with UnitOfWork(db) as uow:
        return [e.payload["text"] for e in uow.events.read("g1") if e.type == "PressSent"]


def _statuses(db, *ids: int) -> list[str]:
    with UnitOfWork(db) as uow:
        return [uow.inbox.get(i).status for i in ids]


def test_a_later_message_waits_for_the_earlier_one_of_its_sender(world):
    db, settings = world
    create_game(db, settings, "g1", PLAYERS, seed="s1", now=utc_now())
    first = _store_press(db, settings, "meet me at Babylon", 1)
    second = _store_press(db, settings, "no, at Nineveh", 2)

    # The second reaches a worker first: the first, stored before it, is applied before it all the same.
    assert process(db, settings, second, utc_now()).status == "done"
    assert _press_in_log(db) == ["meet me at Babylon", "no, at Nineveh"]
    assert _statuses(db, first, second) == ["done", "done"]
    assert process(db, settings, first, utc_now()).status == "skipped"  # its own worker comes to it after
    assert _press_in_log(db) == ["meet me at Babylon", "no, at Nineveh"]


def test_two_workers_taking_one_message_apply_it_once_and_leave_it_done(postgres_url, tmp_path):
    """A worker starting up takes the backlog while another worker handles a message of it: they take turns."""
    settings = replace(Settings(), gather_minutes=0, db_url=postgres_url, maildir=tmp_path / "mail", board_pictures=False)
    db = make_engine(postgres_url)
    ensure_schema(db)
    create_game(db, settings, "g1", PLAYERS, seed="s1", now=utc_now())
    order = _store_press(db, settings, "one message, two workers", 1)
    outcomes, errors = [], []

    def worker() -> None:
        try:
            outcomes.append(process(db, settings, order, utc_now()).status)
        except Exception as exc:  # noqa: BLE001 - what the worker would log
            errors.append(exc)

    with db.connect() as holder:  # holds the game while both workers start on the message
        holder.execute(text("SELECT pg_advisory_lock(:key)"), {"key": game_lock_key("g1")})
        workers = [threading.Thread(target=worker) for _ in range(2)]
        for thread in workers:
            thread.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and holder.execute(
                text("SELECT count(*) FROM pg_locks WHERE NOT granted")).scalar() < 2:
            time.sleep(0.02)
        holder.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": game_lock_key("g1")})
        holder.commit()
    for thread in workers:
        thread.join(60)
    db_statuses = _statuses(db, order)
    press = _press_in_log(db)
    db.dispose()
    assert errors == []
    assert sorted(outcomes) == ["done", "skipped"]
    assert db_statuses == ["done"]
    assert press == ["one message, two workers"]

"""Auto-replies and bounces through the real SMTP server: recorded, never played, never answered."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from contextlib import asynccontextmanager
from dataclasses import replace
from email.message import EmailMessage
from email.utils import make_msgid

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import text

from pbem.mail.outbound import transport_from_config
from pbem.service.bounces import bounce_counts
from pbem.service.games import NewPlayer, create_game
from pbem.service.outbound import envelope_sender, flush_all
from pbem.service.projector import load_state
from pbem.service.server import PostOffice, utc_now
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import latest, letters, send, text_of, topic

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
MODERATOR = "mod@example.org"


@pytest.fixture
def world(db_url, tmp_path):
    settings = replace(Settings(), gather_minutes=0, db_url=db_url, maildir=tmp_path / "mail", listen_port=0, bounce_limit=2)
    db = make_engine(db_url)
    ensure_schema(db)
    yield db, settings
    db.dispose()


@asynccontextmanager
async def running(db, settings):
    office = PostOffice(db, settings, outbox_every=0.05)
    await office.start()
    try:
        await asyncio.to_thread(
            create_game, db, settings, "g1", PLAYERS, seed="s1", moderator_email=MODERATOR, now=utc_now()
        )
        await office.idle()
        yield office
    finally:
        await office.stop()


def inbox_rows(db):
    with UnitOfWork(db) as uow:
        return list(uow.conn.execute(text("SELECT status, error FROM inbox ORDER BY id")))


def version(db) -> int:
    with UnitOfWork(db) as uow:
        return load_state(uow, "g1").version


def out_of_office(prompt: EmailMessage, **headers: str) -> EmailMessage:
    """An auto-reply that quotes the whole prompt, order block included."""
    reply = EmailMessage()
    reply["From"] = "Ben <ben@example.net>"
    reply["To"] = str(prompt["Reply-To"])
    reply["Subject"] = headers.pop("Subject", "Re: " + str(prompt["Subject"]))
    reply["Message-ID"] = make_msgid(domain="example.net")
    reply["In-Reply-To"] = str(prompt["Message-ID"])
    for name, value in headers.items():
        reply[name.replace("_", "-")] = value
    reply.set_content("I am away until Monday.\n\nNATION Crete\nPLACE Phaestos\n\n" + text_of(prompt))
    return reply


@pytest.mark.parametrize(
    "headers, envelope",
    [
        ({"Auto_Submitted": "auto-replied"}, "ben@example.net"),
        ({"X_Autoreply": "yes"}, "ben@example.net"),
        ({"Precedence": "bulk"}, "ben@example.net"),
        ({"Subject": "Automatic reply: [g1] your orders"}, "ben@example.net"),
        ({}, ""),  # only the null return path shows it
    ],
)
def test_an_auto_reply_quoting_the_order_block_is_recorded_not_played_not_answered(world, headers, envelope):
    db, settings = world

    async def scenario():
        async with running(db, settings) as office:
            prompt = latest(settings.maildir, "ben@example.net", "your orders")
            before = version(db), len(letters(settings.maildir, "ben@example.net"))
            send(office.port, out_of_office(prompt, **headers), envelope, [str(prompt["Reply-To"])])
            await office.idle()
            return before

    (v, mails) = run(scenario())
    assert version(db) == v  # nothing played
    assert len(letters(settings.maildir, "ben@example.net")) == mails  # nothing answered
    (status, error), = inbox_rows(db)
    assert status == "rejected" and error.startswith("auto-reply (") and "not played, not answered" in error


def dsn(original_id: str, recipient: str, bounce_to: str) -> bytes:
    """A Postfix delivery status notification, as Postfix writes one."""
    return (
        "Return-Path: <>\r\n"
        "From: MAIL-DAEMON@mx.example.net (Mail Delivery System)\r\n"
        f"To: {bounce_to}\r\n"
        "Subject: Undelivered Mail Returned to Sender\r\n"
        f"Message-Id: {make_msgid(domain='mx.example.net')}\r\n"
        "Auto-Submitted: auto-replied\r\n"
        "MIME-Version: 1.0\r\n"
        'Content-Type: multipart/report; report-type=delivery-status; boundary="B1"\r\n'
        "\r\n"
        "--B1\r\nContent-Description: Notification\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n"
        "This is the mail system at host mx.example.net.\r\n\r\nI'm sorry to have to inform you that your message could not\r\n"
        "be delivered to one or more recipients.\r\n\r\n"
        f"<{recipient}>: host mx.example.net said: 550 5.1.1 User unknown\r\n\r\n"
        "--B1\r\nContent-Description: Delivery report\r\nContent-Type: message/delivery-status\r\n\r\n"
        "Reporting-MTA: dns; mx.example.net\r\nArrival-Date: Wed, 25 Nov 2026 10:00:00 +0000\r\n\r\n"
        f"Final-Recipient: rfc822; {recipient}\r\nOriginal-Recipient: rfc822;{recipient}\r\nAction: failed\r\n"
        "Status: 5.1.1\r\nDiagnostic-Code: smtp; 550 5.1.1 <x>: Recipient address rejected: User unknown\r\n\r\n"
        "--B1\r\nContent-Description: Undelivered Message Headers\r\nContent-Type: text/rfc822-headers\r\n\r\n"
        f"From: pbem@pbem.localhost\r\nTo: {recipient}\r\nSubject: [g1] your orders\r\nMessage-ID: <{original_id}>\r\n\r\n"
        "--B1--\r\n"
    ).encode()


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("match", ["verp", "message-id"])
def test_bounces_are_filed_under_the_player_never_answered_and_the_moderator_told_at_the_limit(world, match):
    db, settings = world

    async def scenario():
        async with running(db, settings) as office:
            before = {p.email: len(letters(settings.maildir, p.email)) for p in PLAYERS}
            with UnitOfWork(db) as uow:
                sent = [r for r in uow.outbox.list("g1") if r.recipient == "ben@example.net"]
            for letter in sent[:2]:
                bounce_to = envelope_sender(settings.sender, letter.id) if match == "verp" else settings.sender
                original = letter.message_id if match == "message-id" else "someone-else@example.com"
                send(office.port, dsn(original, "ben@example.net", bounce_to), "", [bounce_to])
                await office.idle()
            return before

    before = run(scenario())
    statuses = inbox_rows(db)
    assert [s for s, _ in statuses] == ["rejected", "rejected"]
    assert all("not answered: bounce for player 2 recorded" in e for _, e in statuses)
    with UnitOfWork(db) as uow:
        counts = bounce_counts(uow, "g1")
    assert list(counts) == [2] and len(counts[2]) == 2 and counts[2][0]["status"] == "5.1.1"
    assert "User unknown" in counts[2][0]["reason"]
    # never answered: the players got nothing new, nobody wrote to the daemon
    assert letters(settings.maildir, "mail-daemon@mx.example.net") == []
    assert {p.email: len(letters(settings.maildir, p.email)) for p in PLAYERS} == before
    (notice,) = [m for m in letters(settings.maildir, MODERATOR) if "bouncing" in topic(m)]
    assert topic(notice) == "[g1] Mail to Ben keeps bouncing"
    assert "2 letters to Ben <ben@example.net> have bounced" in text_of(notice)
    # the moderator's state lists them; a player's view of the log does not
    cli = [sys.executable, "-m", "pbem.cli", "--db", settings.db_url, "state", "g1", "--as", "moderator"]
    shown = subprocess.run(cli, capture_output=True, text=True, check=True).stdout
    assert "mail: Ben: 2 letters bounced" in shown
    log = [sys.executable, "-m", "pbem.cli", "--db", settings.db_url, "log", "g1", "--as", "moderator"]
    assert "A letter to Ben bounced: 5.1.1" in subprocess.run(log, capture_output=True, text=True, check=True).stdout


def test_verify_rederives_a_log_with_bounces(world):
    db, settings = world

    async def scenario():
        async with running(db, settings) as office:
            with UnitOfWork(db) as uow:
                letter = next(r for r in uow.outbox.list("g1") if r.recipient == "cy@example.com")
            bounce_to = envelope_sender(settings.sender, letter.id)
            send(office.port, dsn(letter.message_id, "cy@example.com", bounce_to), "", [bounce_to])
            await office.idle()

    run(scenario())
    cli = [sys.executable, "-m", "pbem.cli", "--db", settings.db_url, "verify", "g1"]
    result = subprocess.run(cli, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "re-derivation ok" in result.stdout


def test_a_letter_the_relay_refuses_outright_is_filed_as_a_bounce(world):
    """A relay that answers 550 for a player's address during the SMTP dialogue: the letter gives up at once and
    the refusal is recorded like a bounce that comes back by mail (the moderator's view counts it)."""
    db, settings = world

    class Refusing:
        async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
            if address.startswith("ben@"):
                return "550 5.1.1 <ben@example.net>: Recipient address rejected: User unknown"
            envelope.rcpt_tos.append(address)
            return "250 OK"

        async def handle_DATA(self, server, session, envelope):
            return "250 OK"

    with socket.socket() as probe:  # a free port for the relay
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    relay = Controller(Refusing(), hostname="127.0.0.1", port=port)
    relay.start()
    try:
        create_game(db, settings, "g1", [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"),
                                         NewPlayer("Cy", "cy@example.com")], seed="relay", now=utc_now())
        transport = transport_from_config(f"smtp://127.0.0.1:{port}", settings.maildir)
        asyncio.run(flush_all(db, transport, settings.sender, utc_now, settings=settings))
    finally:
        relay.stop()
    with UnitOfWork(db) as uow:
        counts = bounce_counts(uow, "g1")
        ben = next(p for p in uow.players.list("g1") if p.name == "Ben")
    assert list(counts) == [ben.id]
    assert counts[ben.id][0]["status"] == "5.1.1" and "User unknown" in counts[ben.id][0]["reason"]

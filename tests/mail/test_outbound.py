"""Outbound transports against a real SMTP sink and a real Maildir."""

from __future__ import annotations

import asyncio
import email
import email.policy
import mailbox
import os
import shutil
import socket
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pbem.mail.inbound import parse_message
from pbem.mail.outbound import (
    DELIVERED,
    DeliveryError,
    MaildirDelivery,
    MemoryTransport,
    SmtpRelay,
    Transport,
    transport_from_config,
)
from pbem.mail.render import Renderer, build_message, make_message_id
from pbem.mail.server import InboundServer

from .contexts import PROMPT

SENDER = "pbem@civ.example.org"


@pytest.fixture(scope="module")
def raw_prompt() -> bytes:
    rendered = Renderer().render("prompt", PROMPT)
    return build_message(
        sender=f"Advanced Civ <{SENDER}>",
        recipient="Zoë <zoe@example.fr>",
        rendered=rendered,
        message_id=make_message_id("nile-1/7/zoe/prompt", "civ.example.org"),
        date=datetime(2024, 6, 10, 9, 0, tzinfo=timezone.utc),
        reply_to="pbem+nile-1.1.0123456789abcdef@civ.example.org",
    )


class Sink:
    def __init__(self):
        self.received: list[tuple[bytes, str, list[str]]] = []

    def accept(self, raw, mail_from, rcpt_tos):
        self.received.append((raw, mail_from, rcpt_tos))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_transports_satisfy_the_protocol(tmp_path):
    assert isinstance(SmtpRelay("localhost", 25), Transport)
    assert isinstance(MaildirDelivery(tmp_path), Transport)
    assert isinstance(MemoryTransport(), Transport)


def test_smtp_relay_delivers_to_a_real_server(raw_prompt):
    sink = Sink()
    with InboundServer(sink.accept, port=0) as server:
        relay = SmtpRelay("127.0.0.1", server.port, timeout=10)
        asyncio.run(relay.deliver(SENDER, ["zoe@example.fr"], raw_prompt))
    assert len(sink.received) == 1
    raw, mail_from, rcpt_tos = sink.received[0]
    assert mail_from == SENDER
    assert rcpt_tos == ["zoe@example.fr"]
    assert raw == raw_prompt
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert msg["Subject"] == "[nile-1] T3 Movement: your orders, due Fri 14 Jun 18:00 UTC"


def test_relay_temporary_failure_on_451(raw_prompt):
    def accept(raw, mail_from, rcpt_tos):
        raise RuntimeError("store down")

    with InboundServer(accept, port=0) as server:
        relay = SmtpRelay("127.0.0.1", server.port, timeout=10)
        with pytest.raises(DeliveryError) as info:
            asyncio.run(relay.deliver(SENDER, ["zoe@example.fr"], raw_prompt))
    assert info.value.temporary is True
    assert "451" in info.value.reason


def test_relay_permanent_failure_on_5xx_recipient(raw_prompt):
    sink = Sink()
    with InboundServer(sink.accept, port=0, domains=["civ.example.org"]) as server:
        relay = SmtpRelay("127.0.0.1", server.port, timeout=10)
        with pytest.raises(DeliveryError) as info:
            asyncio.run(relay.deliver(SENDER, ["zoe@example.fr"], raw_prompt))
        assert info.value.temporary is False
        assert "550" in info.value.reason
        # partly refused: the accepted recipient got it, the error says so
        with pytest.raises(DeliveryError) as info:
            asyncio.run(relay.deliver(SENDER, ["a@civ.example.org", "zoe@example.fr"], raw_prompt))
        assert info.value.temporary is False
        assert "the others got the message" in info.value.reason
    assert [r[2] for r in sink.received] == [["a@civ.example.org"]]


def test_relay_connection_refused_is_temporary(raw_prompt):
    relay = SmtpRelay("127.0.0.1", free_port(), timeout=5)
    with pytest.raises(DeliveryError) as info:
        asyncio.run(relay.deliver(SENDER, ["zoe@example.fr"], raw_prompt))
    assert info.value.temporary is True


def test_relay_starttls_unsupported_is_temporary(raw_prompt):
    sink = Sink()
    with InboundServer(sink.accept, port=0) as server:
        relay = SmtpRelay("127.0.0.1", server.port, starttls=True, timeout=10)
        with pytest.raises(DeliveryError) as info:
            asyncio.run(relay.deliver(SENDER, ["zoe@example.fr"], raw_prompt))
    assert info.value.temporary is True
    assert sink.received == []


def test_relay_repr_hides_the_password():
    relay = SmtpRelay("mx", 587, starttls=True, username="bot", password="hunter2")
    assert "hunter2" not in repr(relay)


def test_maildir_delivery_writes_readable_messages(tmp_path, raw_prompt):
    transport = MaildirDelivery(tmp_path / "out")
    asyncio.run(transport.deliver(SENDER, ["Zoe@Example.fr", "bob@example.net"], raw_prompt))
    zoe = mailbox.Maildir(tmp_path / "out" / "zoe@example.fr", create=False)
    bob = mailbox.Maildir(tmp_path / "out" / "bob@example.net", create=False)
    assert len(zoe) == 1 and len(bob) == 1
    for message in list(zoe) + list(bob):
        parsed = parse_message(message.as_bytes())
        assert parsed.message_id == make_message_id("nile-1/7/zoe/prompt", "civ.example.org")
        assert parsed.subject == "[nile-1] T3 Movement: your orders, due Fri 14 Jun 18:00 UTC"
        # the plain part survives storage byte-identically, so the template is intact
        text = email.message_from_bytes(message.as_bytes(), policy=email.policy.default).get_body(("plain",))
        assert "MOVE 2 FROM Memphis TO Thebes" in text.get_content()


def test_a_letter_delivered_again_is_not_written_twice(tmp_path, raw_prompt):
    """A sender that died after writing a letter but before marking it sent delivers it again: one copy stays."""
    transport = MaildirDelivery(tmp_path / "out")
    asyncio.run(transport.deliver(SENDER, ["zoe@example.fr"], raw_prompt))
    zoe = mailbox.Maildir(tmp_path / "out" / "zoe@example.fr", create=False)
    key = next(iter(zoe.keys()))
    zoe.get_message(key).set_subdir("cur")
    zoe[key] = zoe.get_message(key)  # read by her mail client: moved to cur/ with flags
    asyncio.run(transport.deliver(SENDER, ["zoe@example.fr"], raw_prompt))
    asyncio.run(transport.deliver(SENDER, ["zoe@example.fr"], b"Message-ID: <other@x>\r\n\r\nanother letter"))
    assert len(mailbox.Maildir(tmp_path / "out" / "zoe@example.fr", create=False)) == 2


def _letter(number: int) -> bytes:
    return f"Message-ID: <letter-{number}@civ.example.org>\r\nSubject: {number}\r\n\r\nletter {number}\r\n".encode()


def test_a_delivery_finds_its_letter_by_name_without_listing_the_folder(tmp_path, monkeypatch):
    """Delivering to a player who keeps hundreds of letters reads none of the folder's listing: a first delivery
    finds no record of the letter, a second finds its record and then the letter in new/ by that name."""
    transport = MaildirDelivery(tmp_path / "out")
    for number in range(300):
        asyncio.run(transport.deliver(SENDER, ["zoe@example.fr"], _letter(number)))
    listed = []
    real_scandir = os.scandir

    def scandir(path=".", *rest):
        listed.append(str(path))
        return real_scandir(path, *rest)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "listdir", lambda *a: pytest.fail(f"the folder was listed: {a}"))
    asyncio.run(transport.deliver(SENDER, ["zoe@example.fr"], _letter(300)))  # new
    asyncio.run(transport.deliver(SENDER, ["zoe@example.fr"], _letter(7)))  # again, still unread in new/
    assert listed == []
    monkeypatch.undo()
    zoe = mailbox.Maildir(tmp_path / "out" / "zoe@example.fr", create=False)
    bodies = sorted(zoe.get_bytes(key) for key in zoe.keys())
    assert bodies == sorted(_letter(n) for n in range(301))


def test_a_letter_cut_short_after_its_record_is_delivered_once_under_the_recorded_name(tmp_path):
    """A crash after the record was written but before the letter reached new/: the next attempt delivers it,
    under the name recorded, once; a third attempt finds it there."""
    transport = MaildirDelivery(tmp_path / "out")
    asyncio.run(transport.deliver(SENDER, ["zoe@example.fr"], _letter(1)))
    folder = transport.folder("zoe@example.fr")
    (first,) = (folder / "new").iterdir()
    key = first.name.split(".")[1]  # <arrival time>.<letter key>.pbem
    first.unlink()  # as if the move into new/ never happened
    (folder / "tmp" / f"{key}.pbem").write_bytes(_letter(1)[:20])  # and the draft was cut short
    for _ in range(2):
        asyncio.run(transport.deliver(SENDER, ["zoe@example.fr"], _letter(1)))
    assert [p.name for p in (folder / "new").iterdir()] == [first.name]
    assert (folder / "new" / first.name).read_bytes() == _letter(1)
    assert list((folder / "tmp").iterdir()) == []


def test_a_folder_written_before_the_records_still_holds_each_letter_once(tmp_path):
    """Letters delivered by an earlier pbem have no record: delivered again, each is still found (by a listing)."""
    transport = MaildirDelivery(tmp_path / "out")
    for number in range(3):
        asyncio.run(transport.deliver(SENDER, ["zoe@example.fr"], _letter(number)))
    folder = transport.folder("zoe@example.fr")
    shutil.rmtree(folder / DELIVERED)
    for number in range(4):
        asyncio.run(transport.deliver(SENDER, ["zoe@example.fr"], _letter(number)))
    assert len(list((folder / "new").iterdir())) == 4


def test_a_write_cut_short_leaves_no_orphan(tmp_path, raw_prompt):
    """A kill -9 mid-write leaves the letter's draft in tmp/; the next attempt overwrites it and moves it to new/."""
    scratch = MaildirDelivery(tmp_path / "scratch")
    asyncio.run(scratch.deliver(SENDER, ["zoe@example.fr"], raw_prompt))
    (written,) = (scratch.folder("zoe@example.fr") / "new").iterdir()
    key = written.name.split(".")[1]  # <arrival time>.<letter key>.pbem

    transport = MaildirDelivery(tmp_path / "out")
    folder = transport.folder("zoe@example.fr")
    for sub in ("tmp", "new", "cur"):
        (folder / sub).mkdir(parents=True)
    (folder / "tmp" / f"{key}.pbem").write_bytes(raw_prompt[:40])  # the half-written draft
    asyncio.run(transport.deliver(SENDER, ["zoe@example.fr"], raw_prompt))
    assert list((folder / "tmp").iterdir()) == []
    (delivered,) = (folder / "new").iterdir()
    assert delivered.read_bytes() == raw_prompt


def test_maildir_folder_names_are_safe(tmp_path):
    transport = MaildirDelivery(tmp_path)
    assert transport.folder("../../etc/passwd@x") == tmp_path / "_.._etc_passwd@x"
    assert transport.folder("<A@B.org>") == tmp_path / "a@b.org"
    with pytest.raises(DeliveryError):
        asyncio.run(transport.deliver(SENDER, ["..."], b"x"))


def test_maildir_write_failure_is_temporary(tmp_path, raw_prompt):
    blocker = tmp_path / "root"
    blocker.write_text("a file where the directory should be")
    with pytest.raises(DeliveryError) as info:
        asyncio.run(MaildirDelivery(blocker).deliver(SENDER, ["zoe@example.fr"], raw_prompt))
    assert info.value.temporary is True


#: A child process whose files cannot grow past 20,000 bytes writes one letter larger than that: the write fails
#: (EFBIG, as ENOSPC on a full disk) and the delivery must say "try again" and leave no half letter in tmp/.
_TOO_BIG_FOR_THE_DISK = """
import asyncio, resource, signal, sys
from pathlib import Path
from pbem.mail.outbound import DeliveryError, MaildirDelivery
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
raw = b"Message-ID: <big@example.org>\\r\\n\\r\\n" + b"x" * 50_000
try:
    asyncio.run(MaildirDelivery(Path(sys.argv[1])).deliver("s@example.org", ["zoe@example.fr"], raw))
except DeliveryError as error:
    print("temporary" if error.temporary else "permanent", error)
"""


def test_a_letter_the_disk_cannot_hold_leaves_no_draft_and_is_tried_again(tmp_path):
    done = subprocess.run([sys.executable, "-c", _TOO_BIG_FOR_THE_DISK, str(tmp_path)], capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.startswith("temporary"), done.stdout + done.stderr
    folder = MaildirDelivery(tmp_path).folder("zoe@example.fr")
    assert list((folder / "tmp").iterdir()) == [] and list((folder / "new").iterdir()) == []


def test_memory_transport():
    transport = MemoryTransport(fail_next=[DeliveryError(True, "try later")])
    with pytest.raises(DeliveryError):
        asyncio.run(transport.deliver(SENDER, ["a@x"], b"1"))
    asyncio.run(transport.deliver(SENDER, ["a@x"], b"1"))
    assert transport.sent == [(SENDER, ["a@x"], b"1")]


# --------------------------------------------------------------------------
# configuration


def test_transport_from_config_defaults_to_maildir(tmp_path):
    transport = transport_from_config(None, tmp_path)
    assert isinstance(transport, MaildirDelivery) and transport.root == tmp_path
    assert isinstance(transport_from_config("", tmp_path), MaildirDelivery)
    other = transport_from_config("maildir:///var/spool/pbem", tmp_path)
    assert isinstance(other, MaildirDelivery) and other.root == Path("/var/spool/pbem")


def test_transport_from_config_smtp_urls(tmp_path):
    plain = transport_from_config("smtp://mx.example.org:2525", tmp_path)
    assert isinstance(plain, SmtpRelay)
    assert (plain.host, plain.port, plain.starttls, plain.use_tls, plain.username) == (
        "mx.example.org", 2525, False, False, None)
    assert transport_from_config("smtp://localhost", tmp_path).port == 25

    tls = transport_from_config("smtp+starttls://bot%40civ.example.org:p%3Ass@smtp.example.org?timeout=5", tmp_path)
    assert (tls.host, tls.port, tls.starttls, tls.use_tls) == ("smtp.example.org", 587, True, False)
    assert (tls.username, tls.password, tls.timeout) == ("bot@civ.example.org", "p:ss", 5.0)

    smtps = transport_from_config("smtps://u:p@smtp.example.org", tmp_path)
    assert (smtps.port, smtps.use_tls, smtps.starttls) == (465, True, False)


@pytest.mark.parametrize("url", ["http://x", "smtp://", "smtp://host:notaport", "smtp://h?colour=blue", "maildir://"])
def test_transport_from_config_rejects_bad_urls(tmp_path, url):
    with pytest.raises(ValueError):
        transport_from_config(url, tmp_path)

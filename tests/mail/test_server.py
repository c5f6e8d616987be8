"""The inbound server with real aiosmtpd listeners and real clients."""

from __future__ import annotations

import asyncio
import smtplib
import threading
import time
from email.message import EmailMessage

import aiosmtplib
import pytest

from pbem.mail.inbound import parse_message
from pbem.mail.server import Deferred, InboundServer


def orders_message(body: str = "MOVE 2 FROM Memphis TO Thebes\n", msgid: str = "<o1@example.org>") -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = "Alice <alice@example.org>"
    msg["To"] = "pbem+nile-1@civ.example.org"
    msg["Subject"] = "orders"
    msg["Message-ID"] = msgid
    msg.set_content(body)
    return msg


class Store:
    """Stands in for the inbox table: what `accept` has durably stored."""

    def __init__(self, failures: int = 0) -> None:
        self.rows: list[tuple[bytes, str, list[str]]] = []
        self.failures = failures
        self.lock = threading.Lock()

    def accept(self, raw: bytes, mail_from: str, rcpt_tos: list[str]) -> None:
        with self.lock:
            if self.failures:
                self.failures -= 1
                raise RuntimeError("database is locked")
            self.rows.append((raw, mail_from, rcpt_tos))


@pytest.fixture
def store():
    return Store()


@pytest.fixture
def smtp_server(store):
    server = InboundServer(store.accept, port=0)
    server.start()
    yield server
    server.stop()


def test_ephemeral_port_is_reported(smtp_server):
    assert smtp_server.port != 0
    assert smtp_server.running


def test_250_after_accept_stores_the_message(smtp_server, store):
    msg = orders_message()
    with smtplib.SMTP("127.0.0.1", smtp_server.port) as client:
        refused = client.send_message(msg, from_addr="alice@example.org", to_addrs=["pbem+nile-1@civ.example.org"])
    assert refused == {}
    assert len(store.rows) == 1
    raw, mail_from, rcpt_tos = store.rows[0]
    assert mail_from == "alice@example.org"
    assert rcpt_tos == ["pbem+nile-1@civ.example.org"]
    mail = parse_message(raw)
    assert mail.message_id == "o1@example.org"
    assert mail.body == "MOVE 2 FROM Memphis TO Thebes"


def test_451_when_accept_raises_and_the_retry_is_stored_once(store):
    store.failures = 1
    server = InboundServer(store.accept, port=0)
    server.start()
    try:
        msg = orders_message()
        with smtplib.SMTP("127.0.0.1", server.port) as client:
            with pytest.raises(smtplib.SMTPDataError) as info:
                client.send_message(msg, from_addr="alice@example.org", to_addrs=["pbem+nile-1@civ.example.org"])
        assert info.value.smtp_code == 451
        assert info.value.smtp_error == b"4.3.0 Temporary failure, please retry"
        assert store.rows == []  # nothing stored, and the client knows it must retry
        # the sending MTA retries later: now it goes through
        with smtplib.SMTP("127.0.0.1", server.port) as client:
            assert client.send_message(msg, from_addr="alice@example.org",
                                       to_addrs=["pbem+nile-1@civ.example.org"]) == {}
        assert len(store.rows) == 1
    finally:
        server.stop()


@pytest.mark.parametrize("protocol", ["smtp", "lmtp"])
def test_a_deferral_is_answered_with_its_own_4xx_and_the_retry_is_taken(protocol):
    full = [True]
    rows: list[bytes] = []

    def accept(raw: bytes, mail_from: str, rcpt_tos: list[str]) -> None:
        if full[0]:
            raise Deferred("452 4.3.1 Insufficient system storage, please retry later", "the disk is full")
        rows.append(raw)

    server = InboundServer(accept, port=0, protocol=protocol)
    server.start()
    try:
        if protocol == "lmtp":
            replies = lmtp_exchange(server.port, ["a@x.org", "b@x.org"], orders_message().as_bytes())
            assert replies == [(452, b"4.3.1 Insufficient system storage, please retry later")] * 2
        else:
            with smtplib.SMTP("127.0.0.1", server.port) as client:
                with pytest.raises(smtplib.SMTPDataError) as info:
                    client.send_message(orders_message(), from_addr="alice@example.org", to_addrs=["p@civ.example.org"])
            assert (info.value.smtp_code, info.value.smtp_error) == (452, b"4.3.1 Insufficient system storage, please retry later")
        assert rows == []
        full[0] = False
        client_class = smtplib.LMTP if protocol == "lmtp" else smtplib.SMTP
        with client_class("127.0.0.1", server.port) as client:
            assert client.sendmail("alice@example.org", ["p@civ.example.org"], orders_message().as_bytes()) == {}
        assert len(rows) == 1
    finally:
        server.stop()


def test_a_deferral_must_be_a_4xx():
    with pytest.raises(ValueError):
        Deferred("550 5.0.0 no", "a refusal is not a deferral")


def test_no_250_before_accept_returns():
    release = threading.Event()
    events: list[str] = []

    def slow_accept(raw, mail_from, rcpt_tos):
        events.append("accept-started")
        assert release.wait(10)
        events.append("accept-returned")

    server = InboundServer(slow_accept, port=0)
    server.start()
    try:
        def client():
            with smtplib.SMTP("127.0.0.1", server.port, timeout=20) as smtp:
                smtp.send_message(orders_message(), from_addr="a@example.org", to_addrs=["p@x.org"])
            events.append("client-got-250")

        thread = threading.Thread(target=client)
        thread.start()
        deadline = time.monotonic() + 10
        while "accept-started" not in events and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        assert events == ["accept-started"]  # the client is still waiting for its answer
        release.set()
        thread.join(10)
        assert events == ["accept-started", "accept-returned", "client-got-250"]
    finally:
        release.set()
        server.stop()


def test_async_accept_with_aiosmtplib_client():
    received = []

    async def accept(raw, mail_from, rcpt_tos):
        await asyncio.sleep(0)
        received.append(raw)

    server = InboundServer(accept, port=0)
    server.start()
    try:
        async def send():
            return await aiosmtplib.send(orders_message(), hostname="127.0.0.1", port=server.port)

        errors, response = asyncio.run(send())
        assert errors == {}
        assert response.startswith("OK")
        assert parse_message(received[0]).message_id == "o1@example.org"
    finally:
        server.stop()


def test_async_accept_failure_gives_451():
    async def accept(raw, mail_from, rcpt_tos):
        raise OSError("disk full")

    server = InboundServer(accept, port=0)
    server.start()
    try:
        async def send():
            await aiosmtplib.send(orders_message(), hostname="127.0.0.1", port=server.port)

        with pytest.raises(aiosmtplib.SMTPDataError) as info:
            asyncio.run(send())
        assert info.value.code == 451
    finally:
        server.stop()


def test_domains_filter_recipients(store):
    server = InboundServer(store.accept, port=0, domains=["Civ.Example.org"])
    server.start()
    try:
        with smtplib.SMTP("127.0.0.1", server.port) as client:
            with pytest.raises(smtplib.SMTPRecipientsRefused) as info:
                client.send_message(orders_message(), from_addr="a@example.org", to_addrs=["someone@elsewhere.net"])
            assert info.value.recipients["someone@elsewhere.net"][0] == 550
            refused = client.send_message(
                orders_message(), from_addr="a@example.org",
                to_addrs=["pbem+nile-1@civ.example.org", "x@elsewhere.net"],
            )
        assert list(refused) == ["x@elsewhere.net"]
        assert store.rows[0][2] == ["pbem+nile-1@civ.example.org"]
    finally:
        server.stop()


def test_oversized_data_is_refused_by_size(store):
    server = InboundServer(store.accept, port=0, max_bytes=10_000)
    server.start()
    try:
        with smtplib.SMTP("127.0.0.1", server.port) as client:
            with pytest.raises(smtplib.SMTPException):
                client.send_message(orders_message("X" * 20_000), from_addr="a@example.org", to_addrs=["p@x.org"])
        assert store.rows == []
    finally:
        server.stop()


def test_eight_bit_message_is_stored_byte_for_byte(smtp_server, store):
    raw = (
        b"From: Zo\xc3\xab <zoe@example.fr>\r\n"
        b"To: pbem+nile-1@civ.example.org\r\n"
        b"Subject: ordres\r\n"
        b"Content-Type: text/plain; charset=utf-8\r\n"
        b"Content-Transfer-Encoding: 8bit\r\n"
        b"\r\n"
        b"MOVE 1 FROM Cr\xc3\xa8te TO Cyprus\r\n"
        b".leading dot line\r\n"
    )
    with smtplib.SMTP("127.0.0.1", smtp_server.port) as client:
        client.sendmail("zoe@example.fr", ["pbem+nile-1@civ.example.org"], raw)
    assert store.rows[0][0] == raw
    assert parse_message(store.rows[0][0]).body == "MOVE 1 FROM Crète TO Cyprus\n.leading dot line"


# --------------------------------------------------------------------------
# LMTP


def lmtp_exchange(port: int, recipients: list[str], raw: bytes) -> list[tuple[int, bytes]]:
    """Speak LMTP by hand after DATA: smtplib reads only one of the per-recipient replies."""
    client = smtplib.LMTP("127.0.0.1", port)
    try:
        code, _ = client.ehlo()  # smtplib.LMTP sends LHLO
        assert code == 250
        assert client.mail("alice@example.org")[0] == 250
        for rcpt in recipients:
            assert client.rcpt(rcpt)[0] == 250
        replies = [client.data(raw)]
        for _ in recipients[1:]:
            replies.append(client.getreply())
        client.quit()
        return replies
    finally:
        client.close()


def test_lmtp_answers_per_recipient(store):
    server = InboundServer(store.accept, port=0, protocol="lmtp")
    server.start()
    try:
        recipients = ["pbem+nile-1@civ.example.org", "pbem+tigris-2@civ.example.org"]
        replies = lmtp_exchange(server.port, recipients, orders_message().as_bytes())
        assert [code for code, _ in replies] == [250, 250]
        assert len(store.rows) == 1
        assert store.rows[0][2] == recipients
    finally:
        server.stop()


def test_lmtp_451_for_each_recipient_when_accept_fails():
    store = Store(failures=1)
    server = InboundServer(store.accept, port=0, protocol="lmtp")
    server.start()
    try:
        replies = lmtp_exchange(server.port, ["a@x.org", "b@x.org"], orders_message().as_bytes())
        assert replies == [(451, b"4.3.0 Temporary failure, please retry")] * 2
        assert store.rows == []
    finally:
        server.stop()


def test_lmtp_with_smtplib_sendmail_single_recipient(store):
    server = InboundServer(store.accept, port=0, protocol="lmtp")
    server.start()
    try:
        with smtplib.LMTP("127.0.0.1", server.port) as client:
            assert client.send_message(orders_message(), from_addr="a@example.org", to_addrs=["p@x.org"]) == {}
        assert len(store.rows) == 1
    finally:
        server.stop()


def test_lmtp_refuses_helo_and_ehlo(store):
    server = InboundServer(store.accept, port=0, protocol="lmtp")
    server.start()
    try:
        client = smtplib.SMTP("127.0.0.1", server.port)
        try:
            assert client.ehlo()[0] == 500
        finally:
            client.close()
    finally:
        server.stop()


# --------------------------------------------------------------------------
# on the caller's event loop


def test_astart_runs_on_the_callers_loop():
    async def main():
        loop = asyncio.get_running_loop()
        seen_loops = []

        async def accept(raw, mail_from, rcpt_tos):
            seen_loops.append(asyncio.get_running_loop())

        async with InboundServer(accept, port=0, protocol="smtp") as server:
            assert server.port != 0
            await aiosmtplib.send(orders_message(), hostname="127.0.0.1", port=server.port)
        assert seen_loops == [loop]

        failing = InboundServer(lambda raw, f, r: 1 / 0, port=0, protocol="lmtp")
        await failing.astart()
        try:
            port = failing.port
            replies = await asyncio.to_thread(lmtp_exchange, port, ["a@x.org"], orders_message().as_bytes())
            assert replies[0][0] == 451
        finally:
            await failing.astop()
        assert not failing.running

    asyncio.run(main())


def test_bad_protocol_is_refused():
    with pytest.raises(ValueError):
        InboundServer(lambda *a: None, protocol="pop3")  # type: ignore[arg-type]


def test_a_line_longer_than_1000_octets_is_taken(smtp_server, store):
    """Some clients write a whole HTML paragraph on one line; refusing it (500) would bounce the orders."""
    raw = (b"From: Alice <alice@example.org>\r\nTo: pbem+nile-1@civ.example.org\r\nSubject: orders\r\n"
           b"Message-ID: <long@example.org>\r\nContent-Type: text/html\r\n\r\n<p>"
           + b"x" * 5000 + b"</p><p>MOVE 2 FROM Memphis TO Thebes</p>\r\n")
    with smtplib.SMTP("127.0.0.1", smtp_server.port) as client:
        refused = client.sendmail("alice@example.org", ["pbem+nile-1@civ.example.org"], raw)
    assert refused == {}
    assert parse_message(store.rows[0][0]).body.endswith("MOVE 2 FROM Memphis TO Thebes")


def _raw_session(port: int, data: bytes, *, pipelined_quit: bool = False, pieces: int = 1) -> list[bytes]:
    """One SMTP session written byte for byte (``data`` dot-stuffed as given), the server's answers read back."""
    import socket

    answers: list[bytes] = []
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        reader = sock.makefile("rb")

        def answer() -> bytes:
            lines = [reader.readline()]
            while lines[-1][3:4] == b"-":
                lines.append(reader.readline())
            answers.append(b"".join(lines))
            return answers[-1]

        answer()
        for command in (b"EHLO client.example.org", b"MAIL FROM:<a@example.org>", b"RCPT TO:<p@x.org>", b"DATA"):
            sock.sendall(command + b"\r\n")
            answer()
        tail = b".\r\nQUIT\r\n" if pipelined_quit else b".\r\n"
        whole = data + tail
        step = max(1, len(whole) // pieces)
        for start in range(0, len(whole), step):  # the end of data may arrive split across reads
            sock.sendall(whole[start : start + step])
            time.sleep(0.01)
        answer()
        if pipelined_quit:
            answer()
    return answers


def test_data_is_read_in_chunks_with_its_dots_taken_off(smtp_server, store):
    """A line that starts with a dot is sent with two (RFC 5321 4.5.2) and stored with one; a line of blank
    lines longer than a chunk, and the end split between reads, change nothing."""
    body = b"Subject: dots\r\n\r\n..leading dot\r\n.\r\n" + b"\r\n" * 200_000 + b"MOVE 2 FROM Memphis TO Thebes\r\n"
    # Written as a client writes it: each line starting with "." gets one more.
    stuffed = b"\r\n".join(b"." + line if line.startswith(b".") else line for line in body.split(b"\r\n"))
    answers = _raw_session(smtp_server.port, stuffed, pieces=37)
    assert answers[-1].startswith(b"250")
    stored = store.rows[0][0]
    assert stored.split(b"\r\n")[2:4] == [b"..leading dot", b"."]
    assert stored.endswith(b"MOVE 2 FROM Memphis TO Thebes\r\n")


def test_commands_sent_right_after_the_data_are_answered(smtp_server, store):
    answers = _raw_session(smtp_server.port, b"Subject: x\r\n\r\nPASS\r\n", pipelined_quit=True)
    assert answers[-2].startswith(b"250") and answers[-1].startswith(b"221")
    assert store.rows[0][0] == b"Subject: x\r\n\r\nPASS\r\n"


def test_a_connection_is_greeted_while_a_megabyte_of_blank_lines_arrives(store):
    """The greeting of a second client does not wait for the first client's half a million lines."""
    server = InboundServer(store.accept, port=0, max_bytes=2_000_000)
    server.start()
    try:
        data = b"Subject: blank\r\n\r\n" + b"\r\n" * 495_000 + b"x\r\n"
        sending = threading.Thread(target=_raw_session, args=(server.port, data), kwargs={"pieces": 1})
        sending.start()
        waits = []
        while sending.is_alive():
            started = time.perf_counter()
            with smtplib.SMTP("127.0.0.1", server.port, timeout=10) as client:
                client.noop()
            waits.append(time.perf_counter() - started)
        sending.join()
        assert len(store.rows) == 1 and store.rows[0][0].endswith(b"\r\nx\r\n")
        print(f"greeting waits: {len(waits)}, max {max(waits):.3f} s")
        assert waits and max(waits) < 0.5, waits
    finally:
        server.stop()

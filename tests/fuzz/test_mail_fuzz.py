"""Ten thousand generated messages through the server's inbound path: none crashes, none is lost, none is slow.

Run with ``make fuzz`` (CI runs it after ``make test``); the default test run
leaves it out (marker ``fuzz``). The sample is fixed (``derandomize``), so a
failure found once is found again; set ``PBEM_FUZZ_EXAMPLES`` to run more,
and ``PBEM_FUZZ_TIMES`` to a file to have every message's times written to it.
The sample depends on the test function's source: an edit to it draws another.

Each example is a message built from the real-client corpus and from parts
a hostile or broken sender could write (raw 8-bit and invalid bytes in
headers, odd charsets, deep MIME nesting, oversized and folded fields,
reused Message-IDs, auto-reply and bounce signs, several mailboxes in From,
valid and forged reply addresses, null and real envelope senders, random
byte damage), handed to `pbem.service.inbound.ingest` as the SMTP listener
hands it over. For each one:

* no exception escapes (a crash would leave the message ``failed``);
* the message is stored and ends ``done`` or ``rejected`` (``duplicate`` for
  a second delivery of the very same bytes): nothing is lost or left behind;
* handling it takes under one second of the server's work (CPU time), and
  under three seconds by the clock.

How the time is measured. The server's work is its CPU time
(`time.process_time`, every thread of the process): on this project's
shared virtual disks one fsync alone has stalled a small message's commit
for a second (measured: 1.04 s by the clock, 0.06 s of CPU), which says
nothing about what the message made the server do. The clock's bound,
three times looser, still fails a message that waits on a lock or sleeps.
And the test's own heap is kept out of the collector's way: Hypothesis
keeps a million objects by the ten-thousandth example, and one full
collection over them took 0.9 s inside a 2 kB message's handling. Before
each message they are frozen (`gc.freeze`), so a collection during the
handling sees only what the server made, as in the server's own process
(about 120,000 objects, bounded); they are thawed after it.

One example in twenty is one of the adversary's shapes (tests/mail/adversary.py:
long runs of blank lines, blanks, tabs, keywords with nothing after them, quote
marks and headers, each made for a pattern's worst case) up to a megabyte, as
plain text or HTML, from a player or a stranger: each too must take under a second.
"""

from __future__ import annotations

import gc
import os
import time
from dataclasses import replace
from datetime import datetime, timezone
from email.message import EmailMessage
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from pbem.mail.tokens import reply_address
from pbem.service.games import NewPlayer, create_game
from pbem.service.inbound import ingest
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from mail.adversary import SHAPES, shape

pytestmark = pytest.mark.fuzz

EXAMPLES = int(os.environ.get("PBEM_FUZZ_EXAMPLES", "10000"))
#: A file to write each message's CPU and clock time to (example number, CPU s, clock s, bytes, status).
TIMES = os.environ.get("PBEM_FUZZ_TIMES")
CORPUS = Path(__file__).parent.parent / "mail" / "corpus"
TEMPLATES = sorted(p.read_bytes() for p in CORPUS.glob("*.eml"))
PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc)
#: What the server did, by the words of its outcome: the sample must reach each.
KINDS = (
    "orders from player", "auto-reply", "bounce", "unauthenticated", "token for player", "mailboxes",
    "no From address", "duplicate", "no game",
)
#: The bound on one message's handling that the issue sets: the server's work (CPU time).
MAX_SECONDS = 1.0
#: The bound by the clock, which a busy disk stretches (see the module's docstring).
MAX_CLOCK_SECONDS = 3.0


class World:
    """One database and one game that every example writes to, as a server's long life would."""

    def __init__(self, root: Path) -> None:
        self.root = root
        url = f"sqlite:///{root / 'fuzz.sqlite'}"
        self.settings = replace(Settings(), gather_minutes=0, db_url=url, maildir=root / "mail")
        self.db = make_engine(url)
        ensure_schema(self.db)
        create_game(self.db, self.settings, "g1", PLAYERS, seed="fuzz", now=NOW)
        with UnitOfWork(self.db) as uow:
            game = uow.games.get("g1")
            self.players = uow.players.list("g1")
            letters = uow.outbox.list("g1")
        key = bytes.fromhex(game.reply_secret)
        self.reply = {p.email: reply_address(key, "g1", p.id, self.settings.domain) for p in self.players}
        self.sent_ids = [row.message_id for row in letters]
        self.sent_rows = [row.id for row in letters]
        self.handled = 0
        self.seen: dict[str, int] = {}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    made = World(tmp_path_factory.mktemp("fuzz"))
    yield made
    made.db.dispose()


# -- the pieces a message is built of -------------------------------------------------------

ADDRESSES = st.sampled_from(
    ["ben@example.net", "ann@example.org", "cy@example.com", "eve@attacker.example", "MAILER-DAEMON@mx.example.net",
     "postmaster@example.net", "noreply@example.com", "Ben@Example.NET", "ben@example.net.attacker.example"]
)
HEADER_NAMES = st.sampled_from(
    ["From", "To", "Cc", "Reply-To", "Sender", "Subject", "Message-ID", "In-Reply-To", "References", "Content-Type",
     "Content-Transfer-Encoding", "Content-Disposition", "MIME-Version", "Auto-Submitted", "Precedence",
     "X-Autoreply", "Return-Path", "Date", "X-Junk", "Received"]
)
ORDER_LINES = st.sampled_from(
    ["NATION Crete", "PLACE Phaestos", "nation crete", "ＮＡＴＩＯＮ Ｃｒｅｔｅ", "PLACE Knossos", "NATION Atlantis",
     "HELP", "HELP AREA Crete", "Thanks,", "Alex", "-- ", "> NATION Africa", "On Mon, Ben <b@x.org> wrote:",
     "===== ORDERS: edit below this line =====", "===== END OF ORDERS =====", "SECRET wrong-secret",
     "From: pbem <pbem@pbem.localhost>", "Sent: Monday", "DONE", "PASS", "MOVE 1 FROM A TO B", ""]
)
CHARSETS = st.sampled_from(["utf-8", "iso-8859-1", "windows-1252", "koi8-r", "punycode", "idna", "utf-16", "x-unknown", "utf-7", ""])
ENCODINGS = st.sampled_from(["7bit", "8bit", "base64", "quoted-printable", "x-uuencode", "binary", "bogus"])
JUNK = st.binary(max_size=300) | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass"))


@st.composite
def header_value(draw) -> bytes:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(JUNK).replace(b"\r", b"").replace(b"\n", b"")
    if kind == 1:  # an oversized field: comments, quotes, addresses, folded
        unit = draw(st.sampled_from([b"(c)", b'"q" ', b"a@b.org, ", b"x\r\n ", b"=?utf-8?q?a?= ", b"<", b"\\"]))
        return unit * draw(st.integers(100, 20_000))
    if kind == 2:
        return draw(st.text(max_size=80)).encode("utf-8", "surrogatepass").replace(b"\r", b"").replace(b"\n", b"")
    if kind == 3:
        return b"=?" + draw(CHARSETS).encode() + b"?" + draw(st.sampled_from([b"B", b"Q", b"X"])) + b"?" + draw(JUNK)[:40].replace(b"\n", b"") + b"?="
    return draw(ADDRESSES).encode()


@st.composite
def body(draw) -> bytes:
    lines = draw(st.lists(ORDER_LINES, max_size=12))
    text_body = "\r\n".join(lines)
    charset = draw(CHARSETS)
    encoding = draw(ENCODINGS)
    data = text_body.encode("utf-8", "replace")
    if draw(st.booleans()):
        data += draw(JUNK)
    head = f"Content-Type: text/{draw(st.sampled_from(['plain', 'html', 'enriched']))}; charset={charset}\r\nContent-Transfer-Encoding: {encoding}\r\n"
    depth = draw(st.sampled_from([0, 0, 0, 1, 3, 50, 400]))
    for level in range(depth):
        boundary = f"b{level}"
        data = (head.encode() + b"\r\n" + data) if level == 0 else data
        data = (
            f"--{boundary}\r\n".encode() + data + f"\r\n--{boundary}--\r\n".encode()
        )
        head = f"Content-Type: multipart/{draw(st.sampled_from(['mixed', 'alternative', 'report; report-type=delivery-status']))}; boundary={boundary}\r\n"
    return head.encode() + b"\r\n" + data


@st.composite
def generated(draw) -> bytes:
    headers = [b"From: " + draw(header_value())]
    for _ in range(draw(st.integers(0, 8))):
        headers.append(draw(HEADER_NAMES).encode() + b": " + draw(header_value()))
    return b"\r\n".join(headers) + b"\r\n" + draw(body())


@st.composite
def from_corpus(draw, world: World) -> bytes:
    raw = draw(st.sampled_from(TEMPLATES))
    values = {
        b"{{FROM}}": draw(ADDRESSES).encode(),
        b"{{REPLY_TO}}": draw(st.sampled_from([*world.reply.values(), "pbem+g1@pbem.localhost", "pbem+g1.2.0000000000000000@pbem.localhost"])).encode(),
        b"{{PROMPT_ID}}": draw(st.sampled_from(world.sent_ids)).encode(),
        b"{{BOUNCE_TO}}": f"pbem+bounces={draw(st.sampled_from(world.sent_rows))}@pbem.localhost".encode(),
        b"{{ORIGINAL_ID}}": draw(st.sampled_from(world.sent_ids)).encode(),
        b"{{RECIPIENT}}": draw(ADDRESSES).encode(),
    }
    for key, value in values.items():
        raw = raw.replace(key, value)
    for _ in range(draw(st.sampled_from([0, 0, 1, 2, 3]))):  # damage: insert, overwrite or cut bytes somewhere
        at = draw(st.integers(0, len(raw)))
        action = draw(st.integers(0, 2))
        if action == 0:
            raw = raw[:at] + draw(JUNK) + raw[at:]
        elif action == 1:
            raw = raw[:at] + draw(header_value()) + raw[at + 20 :]
        else:
            raw = raw[:at]
    return raw


@st.composite
def adversarial(draw, world: World) -> bytes:
    """One of the adversary's shapes (tests/mail/adversary.py), up to a megabyte, from a player or a stranger."""
    message = EmailMessage()
    message["From"] = draw(ADDRESSES)
    message["To"] = draw(st.sampled_from([*world.reply.values(), "pbem+g1@pbem.localhost"]))
    message["Subject"] = draw(st.sampled_from(["Re: [g1] Your orders", "hello", "[g1] " + "Re: " * 200]))
    message["Message-ID"] = f"<adversary-{draw(st.integers(0, 10**9))}@example.org>"
    text_body = shape(draw(st.sampled_from(sorted(SHAPES))), draw(st.sampled_from([2_000, 40_000, 300_000, 950_000])))
    if draw(st.booleans()):
        text_body = f"SECRET {draw(st.sampled_from(['wrong', 'x' * 40]))}\n" + text_body
    message.set_content(text_body, subtype=draw(st.sampled_from(["plain", "plain", "html"])), cte="8bit")
    return message.as_bytes()


@st.composite
def delivery(draw, world: World) -> tuple[bytes, str, list[str]]:
    if draw(st.integers(0, 19)) == 0:  # one in twenty: the adversary's shapes, targeted at each pattern
        raw = draw(adversarial(world))
    else:
        raw = draw(st.one_of(from_corpus(world), from_corpus(world), generated()))
    mail_from = draw(st.sampled_from(["<>", "", "ben@example.net", "eve@attacker.example", "MAILER-DAEMON@mx.example.net"]))
    rcpt = draw(st.lists(st.sampled_from([*world.reply.values(), "pbem+g1@pbem.localhost", "pbem+bounces=1@pbem.localhost", "pbem@pbem.localhost"]), min_size=1, max_size=2))
    return raw, mail_from, rcpt


def test_no_message_crashes_is_lost_or_takes_a_second(world):
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def one(data):
        raw, mail_from, rcpt = data.draw(delivery(world))
        gc.freeze()  # the harness's heap, out of the collector's sight while the server works
        try:
            started, cpu = time.perf_counter(), time.process_time()
            outcome = ingest(world.db, world.settings, raw, mail_from, rcpt, NOW)
            took, clock = time.process_time() - cpu, time.perf_counter() - started
        finally:
            gc.unfreeze()
        world.handled += 1
        if TIMES:  # one line per message: to see the whole distribution, not only a failure
            with open(TIMES, "a", encoding="utf-8") as log:
                log.write(f"{world.handled} {took:.3f} {clock:.3f} {len(raw)} {outcome.status}\n")
        kind = next((k for k in KINDS if k in f"{outcome.status}: {outcome.detail}"), "other")
        if kind == "other" and os.environ.get("PBEM_FUZZ_SHOW"):
            print(outcome)
        world.seen[kind] = world.seen.get(kind, 0) + 1
        if outcome.status not in ("done", "rejected", "duplicate") or took >= MAX_SECONDS or clock >= MAX_CLOCK_SECONDS:
            kept = world.root / f"example-{world.handled}.eml"
            kept.write_bytes(raw)  # to replay by hand: pbem ingest < example.eml
        assert outcome.status in ("done", "rejected", "duplicate"), outcome
        assert took < MAX_SECONDS, f"{took:.2f} s of CPU for a message of {len(raw)} bytes (kept in {kept})"
        assert clock < MAX_CLOCK_SECONDS, f"{clock:.2f} s by the clock ({took:.2f} s CPU) for {len(raw)} bytes (kept in {kept})"

    one()
    with UnitOfWork(world.db) as uow:
        left = uow.conn.execute(text("SELECT COUNT(*) FROM inbox WHERE status NOT IN ('done', 'rejected')")).scalar_one()
    assert left == 0  # nothing failed, nothing still waiting
    assert world.handled >= EXAMPLES
    print("outcomes:", dict(sorted(world.seen.items())))
    if EXAMPLES >= 1000:  # the sample reaches every path, or it proves little
        assert set(KINDS) <= set(world.seen), world.seen

"""Control characters from players and strangers, through the real mail path: kept in the log, shown escaped.

A player's name and his press messages carry ANSI escape sequences, a
terminal-title sequence, a backspace, a C1 CSI and a bidi override; a stranger
asking to watch carries them in his name, his From display name, his subject
and his Message-ID. The log keeps every one as written (it is evidence). Every
letter, every header, every command's output and the archive show them
written out (``\\x1b``), none raw (docs/mail.md, "Control characters").
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import json
import logging
import subprocess
import sys
import time
from email.message import EmailMessage
from pathlib import Path

from click.testing import CliRunner

from pbem.cli import main
from pbem.escaping import escape_controls
from pbem.rules.engine import pending
from pbem.service.demo import reply_to_prompt, suggested_orders
from pbem.service.games import NewPlayer, create_game
from pbem.service.server import utc_now
from pbem.service.telemetry import EscapingFormatter
from pbem.store.unit_of_work import UnitOfWork

from hostile.processes import PBEM, Server
from .mailclient import latest, send, text_of, topic
from .test_mail_loop import run, started, state_of

#: What a player may write to take over a reader's terminal: clear the screen, colour, retitle the window,
#: move back, a C1 CSI, and reverse what follows.
HOSTILE = "\x1b[2J\x1b[31mEVIL\x1b[0m \x1b]0;pwned\x07 \x08 \x9b31m \u202eevil"
#: The name of a player: the same, and a carriage return, which no line of a mail can carry but a name can.
NAME = "Ann\x1b[2J\x1b]0;pwned\x07\x9b31m\u202e\r"
PLAYERS = [NewPlayer(NAME, "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
MODERATOR = "mod@example.org"
#: A stranger's request to watch: his name in the OBSERVE line, a From display name, a subject and a
#: Message-ID, all with escapes, as raw bytes on the wire.
STRANGER = (
    b"From: =?utf-8?q?=1B=5B2JEve=1B=5D0=3Bpwned=07?= <eve@evil.example>\r\n"
    b"To: pbem+g1@pbem.localhost\r\n"
    b"Subject: watch \x1b[2J\x9b31m\r\n"
    b"Message-ID: <eve\x1b[2J@evil.example>\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n\r\n"
    + "OBSERVE Eve\x1b[31m\x1b]0;pwned\x07\u202e\r\n".encode("utf-8")
)


def shown(text: str) -> str:
    return escape_controls(text, one_line=True)


def raw_controls(text: str, allowed: str = "") -> list[str]:
    """The control characters of ``text`` (C0, DEL, C1, bidi controls) not in ``allowed``."""
    return [c for c in text if (c < " " or "\x7f" <= c <= "\x9f" or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067"
                                "\u2068\u2069\u200e\u200f") and c not in allowed]


def asked_email(db) -> str:
    state = state_of(db)
    (prompt,) = pending(state).values()
    return next(p.email for p in PLAYERS if p.name == state.player(prompt.player_id).name)


def check_letter(message: EmailMessage, raw: bytes) -> str:
    """Assert a letter holds no raw control character: none in its header, none but line end and tab in a part.
    Returns its text and HTML parts, for the caller to look for the escaped forms."""
    head = raw.split(b"\r\n\r\n", 1)[0].decode("ascii")
    assert raw_controls(head, "\r\n") == [], head
    assert raw_controls(head.replace("\r\n ", " ").replace("\r\n", "")) == []
    for name, value in message.items():
        assert raw_controls(str(value)) == [], (name, value)
    parts = []
    for part in message.walk():
        if part.get_content_maintype() == "text":
            content = part.get_content().replace("\r\n", "\n")
            assert raw_controls(content, "\n\t") == [], (message["Subject"], content)
            parts.append(content)
    return "\n".join(parts)


def every_letter(maildir: Path) -> dict[str, list[tuple[EmailMessage, str]]]:
    """Every letter delivered, by address: the message and its checked text."""
    out = {}
    for folder in sorted(maildir.iterdir()):
        address = folder.name
        box = []
        for path in sorted(p for sub in ("new", "cur") for p in (folder / sub).iterdir()):
            raw = path.read_bytes()
            message = email.message_from_bytes(raw, policy=email.policy.default)
            box.append((message, check_letter(message, raw)))
        out[address] = box
    return out


def pbem(url: str, *args: str, stdin: str | None = None, allowed: str = "\n") -> str:
    """The `pbem` command in this process (click's runner): its output, checked to hold no raw control character
    but the line ends (and the tabs ``allowed`` between a table's cells)."""
    result = CliRunner().invoke(main, ["--db", url, *args], input=stdin, catch_exceptions=False)
    assert raw_controls(result.output, allowed) == [], (args, result.output)
    return result.output


def test_names_and_press_are_kept_in_the_log_and_shown_escaped_in_letters_and_commands(world, tmp_path):
    db, settings = world

    async def scenario():
        office = await started(db, settings)
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="esc", moderator_email=MODERATOR,
                                    now=utc_now())
            await office.idle()
            # press before nations are chosen: the notice's subject names the sender by his name
            start = latest(settings.maildir, "ann@example.org", "new game")
            body = f"PRESS TO ALL: {HOSTILE}\nNATION \x1b[31mEgypt\nPRESS TO ALL\n{HOSTILE}\nsecond line\nEND"
            send(office.port, reply_to_prompt(start, "ann@example.org", body), "ann@example.org", [str(start["Reply-To"])])
            await office.idle()
            send(office.port, STRANGER, "eve@evil.example", [f"pbem+g1@{settings.domain}"])
            await office.idle()
            for _ in range(3):  # the setup, so that `pbem state` shows each nation's player
                address = asked_email(db)
                prompt = latest(settings.maildir, address, "your orders")
                send(office.port, reply_to_prompt(prompt, address, suggested_orders(text_of(prompt))), address,
                     [str(prompt["Reply-To"])])
                await office.idle()
        finally:
            await office.stop()

    run(scenario())

    # the log keeps what was written
    with UnitOfWork(db) as uow:
        recorded = uow.events.read("g1")
    created = next(r for r in recorded if r.type == "GameCreated")
    assert created.payload["players"][0]["name"] == NAME
    pressed = [r for r in recorded if r.type == "PressSent"]
    assert [p.payload["text"] for p in pressed] == [HOSTILE, f"{HOSTILE}\nsecond line"]
    asked = next(r for r in recorded if r.type == "ObserverAsked")
    assert "\x1b[31m" in asked.payload["name"] and "\u202e" in asked.payload["name"]

    # every letter: no raw control character in any header or part; the escaped forms where the text was
    mail = every_letter(settings.maildir)
    for reader in ("ben@example.net", "cy@example.com"):
        press = [(m, text) for m, text in mail[reader] if "Press from" in topic(m)]
        assert len(press) == 2
        assert all(topic(m) == f"[g1] Press from {shown(NAME)}" for m, _ in press)
        assert all(text.count(shown(HOSTILE)) == 2 for _, text in press)  # the plain and the HTML part
        assert f"{shown(HOSTILE)}\nsecond line" in press[1][1]  # a body keeps the press's own line breaks
        start = next(text for m, text in mail[reader] if "new game" in topic(m))
        assert f"  {shown(NAME)} - " in start
    ack = next(text for m, text in mail["ann@example.org"] if "Orders received" in topic(m))
    assert "Line 2: NATION \\x1b[31mEgypt" in ack and "PRESS TO ALL (41 characters)" in ack  # the line echoed
    watch = [m for m, _ in mail[MODERATOR] if "asks to watch" in topic(m)]
    assert [topic(m) for m in watch] == ["[g1] Eve\\x1b[31m\\x1b]0;pwned\\x07\\u202e asks to watch"]
    assert [topic(m) for m, _ in mail["eve@evil.example"]] == ["[g1] You asked to watch g1"]

    # every command that shows the game, as every viewer
    url = settings.db_url
    viewers = ["moderator", "auditor", "observer", *(f"player:{p.nation.lower()}" for p in state_of(db).players)]
    for viewer in viewers:
        log = pbem(url, "log", "g1", "--as", viewer)
        state = pbem(url, "state", "g1", "--as", viewer)
        assert f" {shown(NAME):<12} " in state
        pressed_lines = [line for line in log.splitlines() if "second line" in line]
        assert len(pressed_lines) <= 1 and all(f"{shown(HOSTILE)}\\nsecond line" in line for line in pressed_lines)
        assert pbem(url, "log", "g1", "--as", viewer, "--json").isascii()
    moderator_log = pbem(url, "log", "g1", "--as", "moderator").splitlines()
    assert [line for line in moderator_log if "second line" in line][0].endswith(f"{shown(HOSTILE)}\\nsecond line")
    entries = json.loads(pbem(url, "log", "g1", "--as", "moderator", "--json"))
    assert [e["text"] for e in entries if "second line" in e["text"]][0].endswith(f"{HOSTILE}\nsecond line")  # exact
    explained = pbem(url, "explain", "g1", str(pressed[1].version), "--as", "moderator")
    assert "Outcome: Press from Ann\\x1b[2J\\x1b]0;pwned" in explained
    pbem(url, "diff", "g1", "1", str(recorded[-1].version), "--as", "moderator")
    listed = pbem(url, "game", "list", allowed="\n\t").split("\t")
    assert listed[0] == "g1" and listed[1].startswith(("setup, ", "turn ")) and listed[-1].startswith("version ")

    exported = CliRunner().invoke(main, ["--db", url, "export", "g1"], catch_exceptions=False).stdout_bytes
    assert raw_controls(exported.decode("utf-8"), "\n") == []
    first = json.loads(exported.splitlines()[1])
    assert first["payload"]["players"][0]["name"] == NAME  # the data is exact
    (tmp_path / "g1.jsonl").write_bytes(exported)
    assert "chain ok" in pbem(url, "import", "--check", str(tmp_path / "g1.jsonl"))

    submitted = pbem(url, "submit", "g1", "--as", "Ben", stdin=f"PRESS TO ALL: {HOSTILE}\nTIMEZONE \x1b[31mMars\nSTATUS\n")
    assert "accepted: PRESS TO ALL" in submitted and "line 2 rejected: 'TIMEZONE \\x1b[31mMars'" in submitted

    pbem(url, "archive", "g1", "--out", str(tmp_path / "site"), "--as", "moderator")
    for page in (tmp_path / "site").iterdir():
        assert raw_controls(page.read_text(encoding="utf-8"), "\n\t") == [], page.name
    assert shown(HOSTILE) in (tmp_path / "site" / "log.html").read_text(encoding="utf-8")

    # a message that failed, from a stranger's envelope address, as `pbem queue` lists it
    with UnitOfWork(db) as uow:
        number, _ = uow.inbox.store(b"Subject: x\r\n\r\nx\r\n", "q\x1b@x", "e\x1b[2Jve@evil.example",
                                    ["pbem+g1@pbem.localhost"], utc_now())
        uow.inbox.mark(number, "failed", error="RuntimeError: \x1b]0;pwned\x07", now=utc_now())
    listed = pbem(url, "queue")
    assert "e\\x1b[2Jve@evil.example" in listed and "RuntimeError: \\x1b]0;pwned\\x07" in listed


def test_the_server_logs_what_strangers_wrote_escaped_one_record_a_line(tmp_path):
    """`pbem serve` as an operator runs it: its log on standard error shows a hostile Message-ID, From address
    and name written out, and `pbem game create` the players' names."""
    url = f"sqlite:///{tmp_path / 'pbem.sqlite'}"
    env = {"PBEM_DATABASE_URL": url, "PBEM_MAILDIR": str(tmp_path / "mail"), "PBEM_BOARD_PICTURES": "0",
           "PBEM_FLOOD_LIMIT": "0", "PATH": "/usr/bin:/bin"}
    created = subprocess.run([*PBEM, "game", "create", "g1", "--player", f"{NAME}:ann@example.org",
                              "--player", "Ben:ben@example.net", "--player", "Cy:cy@example.com",
                              "--moderator", MODERATOR], env=env, cwd=tmp_path, capture_output=True, check=True)
    out = created.stdout.decode("utf-8")
    assert raw_controls(out, "\n") == [] and shown(NAME.strip()) in out  # the command line strips the name
    stranger = STRANGER.replace(b"<eve@evil.example>", b"<e\x1b[2Jve@evil.example>")
    server = Server(env, tmp_path)
    server.start()
    try:
        send(server.port, stranger, "eve@evil.example", ["pbem+g1@pbem.localhost"])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(" in id=" in line for line in server.said):
            time.sleep(0.1)
    finally:
        server.stop()
    said = "".join(server.said)
    assert raw_controls(said, "\n") == [], said
    (taken,) = [line for line in server.said if " in id=" in line]
    assert 'id="eve\\x1b[2J@evil.example"' in taken and "OBSERVE from e\\x1b[2jve@evil.example" in taken
    assert taken.endswith("\n") and "\n" not in taken[:-1]


def test_a_log_record_is_one_line_and_a_traceback_keeps_its_lines_all_escaped():
    formatter = EscapingFormatter("%(name)s %(message)s")
    try:
        raise ValueError("bad \x1b[31m name\nnext")
    except ValueError:
        record = logging.LogRecord("pbem.x", logging.ERROR, __file__, 1, "from %s", ("a\rb\x9b\nv2 forged",),
                                   sys.exc_info())
    text = formatter.format(record)
    first, *traceback = text.split("\n")
    assert first == "pbem.x from a\\rb\\x9b\\nv2 forged"
    assert traceback[0] == "Traceback (most recent call last):" and traceback[-2:] == ["ValueError: bad \\x1b[31m name", "next"]
    assert raw_controls(text, "\n") == []

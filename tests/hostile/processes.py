"""Real processes for the hostile suites: `pbem serve` killed and started again, an MTA-like sender, a sink relay."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import smtplib
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from email.policy import default as default_policy
from pathlib import Path

from aiosmtpd.controller import Controller

from pbem.service.games import NewPlayer

PLAYERS = [NewPlayer("Ann", "ann@players.example"), NewPlayer("Ben", "ben@players.example"),
           NewPlayer("Cy", "cy@players.example")]
PBEM = [sys.executable, "-m", "pbem.cli"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """`pbem serve` as a process: started, killed with SIGKILL, started again on the same port."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env, self.cwd = env, cwd
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.said: list[str] = []

    def start(self) -> None:
        self.proc = subprocess.Popen([*PBEM, "serve", "--listen", f"127.0.0.1:{self.port}"], env=self.env,
                                     cwd=self.cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        listening = threading.Event()

        def drain(stream) -> None:  # read all it says, so a full pipe never stalls it
            for line in stream:
                self.said.append(line)
                if "listening for" in line:
                    listening.set()
            listening.set()

        threading.Thread(target=drain, args=(self.proc.stderr,), daemon=True).start()
        assert listening.wait(120) and self.proc.poll() is None, "".join(self.said[-30:])

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=60)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            self.proc.wait(timeout=60)


def press_message(sender: NewPlayer, to: str, key: str, words: str) -> EmailMessage:
    """A press order to everyone as a mail client writes it: ``words`` in the body, ``key`` in its Message-ID."""
    message = EmailMessage(policy=default_policy)
    message["From"] = sender.email
    message["To"] = to
    message["Subject"] = "press"
    message["Message-ID"] = f"<{key}@players.example>"
    message.set_content(f"PRESS TO ALL: {words}\n")
    return message


def press_order(i: int, sender: NewPlayer, to: str) -> EmailMessage:
    return press_message(sender, to, f"hostile-{i}", f"hostile {i}")


def send_until_taken(port: int, message: EmailMessage, sender: str, to: str) -> int:
    """Send as an MTA does: again and again until the server answers 250. Returns the tries it took."""
    tries = 0
    while True:
        tries += 1
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
                smtp.send_message(message, sender, [to])
            return tries
        except (OSError, smtplib.SMTPException):
            time.sleep(0.05)


def rows(db_file: Path, query: str) -> list[tuple]:
    # closed here, not when the collector finds it: an open file keeps a file system from being remounted
    with contextlib.closing(sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=30)) as conn:
        return conn.execute(query).fetchall()


def message_id_of(raw: bytes) -> str:
    """A letter's Message-ID without its angle brackets."""
    return str(BytesHeaderParser().parsebytes(raw)["Message-ID"]).strip().strip("<>")


class SinkRelay:
    """An SMTP relay on a fixed loopback port that keeps every letter it is handed; it can go down and come back.

    It keeps a letter as soon as its DATA is in, then waits ``delay`` before answering 250 (a number, or a function
    of the recipient's address): a sender killed in that wait has delivered the letter without knowing it, the
    case that can repeat a letter through a relay. ``on_the_way`` says which letters it holds in that wait."""

    def __init__(self, delay: float | Callable[[str], float] = 0.05) -> None:
        self.port = free_port()
        self.delay = delay
        self.received: list[bytes] = []
        self.arrivals: list[tuple[str, float]] = []  # (Message-ID, time.monotonic() its DATA came in)
        self._answering: dict[str, float] = {}  # Message-ID -> time.monotonic() the relay answers it
        self._controller = None

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's hook name)
        raw = bytes(envelope.content)
        key = message_id_of(raw)
        wait = self.delay(envelope.rcpt_tos[0]) if callable(self.delay) else self.delay
        self._answering[key] = time.monotonic() + wait
        self.received.append(raw)
        self.arrivals.append((key, time.monotonic()))
        try:
            await asyncio.sleep(wait)
        finally:
            self._answering.pop(key, None)
        return "250 OK"

    def on_the_way(self, at_least: float = 0.0) -> list[str]:
        """The letters whose DATA is in and whose 250 is still ``at_least`` seconds away."""
        now = time.monotonic()
        return [key for key, answer in list(self._answering.items()) if answer - now >= at_least]

    def start(self) -> None:
        self._controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self._controller.start()

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def message_ids(self) -> list[str]:
        return [message_id_of(raw) for raw in self.received]


# A message that failed stays failed until an operator retries it (`pbem queue`): the checks that follow find it.
UNPROCESSED = "SELECT count(*) FROM inbox WHERE status = 'received'"
UNSENT = "SELECT count(*) FROM outbox WHERE sent_at IS NULL"


def wait_until_settled(count: Callable[[str], int], timeout: float = 600) -> None:
    """Wait until every message in the inbox is processed and every letter sent (``count`` runs a count query)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and (count(UNPROCESSED) or count(UNSENT)):
        time.sleep(0.2)


class Maildirs:
    """Watches players' Maildirs: when each letter answering one of ours appeared (from the file's name)."""

    def __init__(self, root: Path, addresses: list[str]) -> None:
        self.root, self.addresses = root, addresses
        self.answered: dict[str, list[float]] = {}  # In-Reply-To -> the times its answers appeared
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.scan()

    def _watch(self) -> None:
        while not self._stop.wait(0.01):
            self.scan()

    def scan(self) -> None:
        for address in self.addresses:
            new = self.root / address / "new"
            for entry in os.scandir(new) if new.exists() else ():
                if entry.name in self._seen:
                    continue
                self._seen.add(entry.name)
                with open(entry.path, "rb") as letter:
                    head = BytesHeaderParser().parse(letter)
                answers = str(head["In-Reply-To"] or "").strip().strip("<>")
                with self._lock:
                    self.answered.setdefault(answers, []).append(int(entry.name.split(".", 1)[0]) / 1e9)

    def first_answer(self, key: str) -> float | None:
        with self._lock:
            times = self.answered.get(f"{key}@players.example")
            return min(times) if times else None

    def wait_for_answer(self, key: str, timeout: float = 30) -> float | None:
        """When the first answer to message ``key`` appeared, waiting up to ``timeout`` seconds; None if none did."""
        until = time.monotonic() + timeout
        while (answered := self.first_answer(key)) is None and time.monotonic() < until:
            time.sleep(0.005)
        return answered


def letters_in(maildir: Path, address: str) -> list:
    """The headers of every letter in ``address``'s Maildir (new/ and cur/)."""
    folder = maildir / address
    return [BytesHeaderParser(policy=default_policy).parsebytes(f.read_bytes())
            for sub in ("new", "cur") if (folder / sub).exists() for f in sorted((folder / sub).iterdir())]

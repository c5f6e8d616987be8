"""The spool: where `pbem ingest` leaves a message for a running `pbem serve`, in a few milliseconds.

An MTA's pipe transport starts one `pbem ingest` per message. Doing the whole
job there (opening the database, reading the orders, writing the answer)
means importing SQLAlchemy and the rules engine first, most of a second per
message before any work. When a `pbem serve` runs on the same SQLite file,
`pbem ingest` does not need any of that: it writes the message, with its
envelope, into the spool beside the database and exits 0, and the server
takes it from there. This module uses the standard library only, so that
path starts in the time of the interpreter itself.

The spool of ``…/pbem.sqlite`` is the folder ``…/pbem.sqlite-spool``:

* ``serve.lock``: a running server holds a shared ``flock`` on it for its
  whole life; `pbem ingest` spools only when it cannot take it exclusively.
  The kernel drops the lock when the server dies, even by SIGKILL.
* ``tmp/`` then ``new/``: a message is written under ``tmp/``, flushed to
  disk, renamed into ``new/`` and the folder flushed, as Maildir does; only
  then does `pbem ingest` exit 0 and the MTA forget it. A file in ``new/``
  is one line of JSON (the envelope) followed by the raw message.

The server deletes a file only after the message is committed to its
inbox; a server killed in between finds the file again when it starts, and
the inbox recognises the message by its Message-ID. A message spooled just
as the server died waits in ``new/`` until a server starts, or until the
next `pbem ingest` that finds no server, which takes the spool in first.
Nothing accepted is lost. PostgreSQL has no file to put a spool beside:
there `pbem ingest` always does the whole job (or use LMTP to `pbem serve`).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = ["Spool", "Spooled", "spool_of", "sync_folder"]


def spool_of(db_url: str) -> Spool | None:
    """The spool beside a SQLite database file; None for another database or one in memory."""
    prefix = "sqlite:///"
    if not db_url.startswith(prefix):
        return None
    path = db_url[len(prefix):].split("?", 1)[0]
    if not path or path == ":memory:" or path.startswith("file:"):
        return None
    return Spool(Path(f"{path}-spool"))


@dataclass(frozen=True)
class Spooled:
    """One message waiting in the spool."""

    path: Path
    raw: bytes
    mail_from: str
    rcpt_tos: list[str]


class Spool:
    """A spool folder: `put` from `pbem ingest`, `waiting`/`done` and `held_by_server` from `pbem serve`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    # -- the server's side --------------------------------------------------------------------------

    @contextmanager
    def held_by_server(self) -> Iterator[None]:
        """Held for as long as a server runs: `pbem ingest` then spools instead of doing the work itself.

        A shared lock: several servers on one file (which SQLite allows, one
        writer at a time) each hold it, and each takes in what it finds.
        """
        self._make()
        with open(self.folder / "serve.lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_SH)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def waiting(self) -> list[Spooled]:
        """Every message in ``new/``, oldest first; a file that cannot be read as a spooled message is skipped."""
        new = self.folder / "new"
        try:
            names = sorted(os.listdir(new))
        except FileNotFoundError:
            return []
        out = []
        for name in names:
            path = new / name
            try:
                data = path.read_bytes()
            except FileNotFoundError:  # taken by another server meanwhile
                continue
            head, sep, raw = data.partition(b"\n")
            try:
                envelope = json.loads(head)
            except ValueError:
                continue
            if not sep or not isinstance(envelope, dict):
                continue
            out.append(Spooled(path, raw, str(envelope.get("from", "")), [str(r) for r in envelope.get("to", [])]))
        return out

    @staticmethod
    def done(spooled: Spooled) -> None:
        """Forget a message once the inbox holds it."""
        try:
            spooled.path.unlink()
        except FileNotFoundError:
            pass

    # -- `pbem ingest`'s side ------------------------------------------------------------------------

    def server_running(self) -> bool:
        """True while a `pbem serve` holds its lock (a lock nobody holds is a server that is gone).

        The exclusive lock a probe asks for fails while any server holds its
        shared one. Probes take turns on ``probe.lock`` first, so that one
        probe's brief exclusive lock never looks like a server to another.
        """
        try:
            lock = open(self.folder / "serve.lock", "rb")
        except FileNotFoundError:
            return False
        with lock, open(self.folder / "probe.lock", "a+b") as turn:
            fcntl.flock(turn, fcntl.LOCK_EX)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    return True
                raise
            fcntl.flock(lock, fcntl.LOCK_UN)
            return False

    def put(self, raw: bytes, mail_from: str, rcpt_tos: list[str]) -> Path:
        """Write a message durably into ``new/``; its path there."""
        self._make()
        name = f"{time.time_ns()}.{os.getpid()}.msg"
        draft = self.folder / "tmp" / name
        final = self.folder / "new" / name
        envelope = json.dumps({"from": mail_from, "to": list(rcpt_tos)}, ensure_ascii=True).encode("ascii")
        with open(draft, "wb") as out:
            out.write(envelope + b"\n" + raw)
            _flush(out)
        os.rename(draft, final)
        sync_folder(self.folder / "new")
        return final

    def _make(self) -> None:
        for sub in ("tmp", "new"):
            (self.folder / sub).mkdir(parents=True, exist_ok=True)


def _flush(out: IO[bytes]) -> None:
    out.flush()
    os.fsync(out.fileno())


def sync_folder(folder: Path) -> None:
    """Make a rename into a folder durable (POSIX: fsync the folder itself); the Maildir transport uses it too."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

"""WAL checkpoints of a SQLite file, run beside the writer rather than inside its commits.

SQLite copies the write-ahead log back into the database file (a
checkpoint) on its own once the log passes a thousand pages, and it does so
inside the COMMIT that crossed the line. In pbem every write of a process
goes through one kept connection under a lock (pbem/store/writer.py), so
that COMMIT held the lock for the whole copy and its two fsyncs: a quarter
of a second on a quick disk, over a second on a busy one, during which
every message arriving by SMTP waited to be stored before its 250
(tests/hostile/test_flood.py saw a quiet player's session take 1.27 s).

So the writer's connection has ``wal_autocheckpoint`` off, and the writer
counts its committed turns; every `EVERY` of them it wakes a thread of its
own that checkpoints through a connection of its own in PASSIVE mode, which
takes no lock a writer needs: units of work go on appending to the log
while it copies. The log is still copied back as often as SQLite would
have done it, and whatever is left when the last connection closes SQLite
copies back then, as always.
"""

from __future__ import annotations

import logging
import sqlite3
import threading

log = logging.getLogger(__name__)

#: Committed write turns between two checkpoints. A turn writes a few pages (a message stored, an order
#: applied), so this is about the thousand pages at which SQLite itself would checkpoint.
EVERY = 200


class Checkpointer:
    """A thread that checkpoints one database file when woken, on its own connection."""

    def __init__(self, path: str, wait_seconds: float) -> None:
        self.path = path
        self._wait = wait_seconds
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.done = 0  # checkpoints run, for tests and for the curious

    def wake(self) -> None:
        """Ask for a checkpoint soon; starts the thread the first time."""
        with self._lock:
            if self._stopping:
                return
            if self._thread is None:
                self._wake.clear()
                self._thread = threading.Thread(target=self._run, name="pbem-checkpoint", daemon=True)
                self._thread.start()
        self._wake.set()

    def stop(self) -> None:
        """End the thread after any checkpoint under way (the engine is being disposed); a later `wake`
        starts a new one, as SQLAlchemy lets a disposed engine be used again."""
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is None:
                return
            self._stopping = True
            self._wake.set()
        thread.join(timeout=self._wait)
        with self._lock:
            self._stopping = False

    def _run(self) -> None:
        connection: sqlite3.Connection | None = None
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stopping:
                    return
                try:
                    if connection is None:
                        connection = sqlite3.connect(self.path, timeout=self._wait, isolation_level=None,
                                                     check_same_thread=False)
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.done += 1
                except sqlite3.Error as exc:
                    # A full or read-only disk: the writers meet it too and say so. The log is copied next time.
                    log.warning("checkpoint of %s failed: %s", self.path, exc)
                    if connection is not None:
                        connection.close()
                        connection = None
        finally:
            if connection is not None:
                connection.close()

"""Fair turns for inbound mail: one sender's flood never keeps anyone else's mail waiting.

Every stored message becomes a `Job` in its sender's own queue (the envelope
sender, lower-cased). `FairQueue` serves the queues in turn, one message from
each sender that has one waiting, and never two of one sender's at once, so
each sender's mail is handled in the order it arrived and a sender with ten
thousand messages waiting holds one worker, not all of them: a message from
anyone else is taken next.

A sender who sent `BURST` messages or more in the last `BURST_SECONDS`
(`SenderLog.urgent`) is sending in bulk; the others' messages are urgent.
Urgent ones are always taken before bulk ones, at most `bulk_workers` bulk
jobs are in hand at once (a worker is always free for urgent mail), and
bulk work waits while urgent work is in hand (`Gate`): from the moment an
urgent message is being stored until its answer is delivered, the flood's
next steps hold back (for at most `Gate.patience` seconds each, so bulk
mail still moves under a steady stream of urgent mail).

`FairScheduler` runs the queue on an event loop with a few workers; the
handler (`PostOffice`) does the work. Nothing here touches the database.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

log = logging.getLogger("pbem.serve")

#: A sender with this many messages in the last BURST_SECONDS (two a second) is sending in bulk; below it, urgent.
BURST = 20
BURST_SECONDS = 10.0
#: The most consecutive set-aside messages of one sender handled as one job (one transaction).
SET_ASIDE_BATCH = 100
#: The key of the null reverse-path (bounces and auto-replies): one queue, never set aside.
NULL_SENDER = "<>"


def sender_key(mail_from: str) -> str:
    """The key of an envelope sender: lower-cased, or "<>" for the null reverse-path. (A message to a genuine
    reply address is its seat's instead: pbem.service.senders.)"""
    address = (mail_from or "").strip().strip("<>").strip().lower()
    return address or NULL_SENDER


@dataclass(frozen=True)
class Job:
    """One stored message waiting its turn."""

    key: str  # its sender's key (pbem.service.senders)
    item: int  # the inbox id
    urgent: bool  # its sender was not sending in bulk when it came
    set_aside: bool = False  # over the flood limit: kept, not acted on (pbem.service.flood)
    opens: bool = False  # the first one set aside of a flood: its sender is told, once
    held: bool = False  # it holds the Gate until its answer is out (PostOffice releases it)


class FairQueue:
    """Per-sender FIFO queues served in turn; thread-safe (the SMTP server's threads put, the workers take)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[str, deque[Job]] = {}
        # senders whose first waiting job can be taken now, in turn order: urgent ones, then bulk ones
        self._turns: dict[bool, deque[str]] = {True: deque(), False: deque()}
        self._busy: set[str] = set()  # senders with a job in hand
        self._waiting = 0
        self._bulk_in_hand = 0

    def put(self, job: Job) -> None:
        with self._lock:
            queue = self._queues.setdefault(job.key, deque())
            queue.append(job)
            self._waiting += 1
            if len(queue) == 1 and job.key not in self._busy:
                self._turns[job.urgent].append(job.key)

    def take(self, max_bulk: int | None = None) -> list[Job]:
        """The next sender's next job (with the set-aside jobs right behind it), or [] if none may be taken now.

        An urgent job first; a bulk one only while fewer than ``max_bulk`` bulk jobs are in hand. The sender
        is busy until ``done``; it goes to the back of the line if it has more waiting.
        """
        with self._lock:
            if self._turns[True]:
                turns = self._turns[True]
            elif self._turns[False] and (max_bulk is None or self._bulk_in_hand < max_bulk):
                turns = self._turns[False]
            else:
                return []
            key = turns.popleft()
            queue = self._queues[key]
            jobs = [queue.popleft()]
            if jobs[0].set_aside:
                while queue and queue[0].set_aside and len(jobs) < SET_ASIDE_BATCH:
                    jobs.append(queue.popleft())
            self._waiting -= len(jobs)
            self._busy.add(key)
            if not jobs[0].urgent:
                self._bulk_in_hand += 1
            return jobs

    def done(self, jobs: list[Job]) -> None:
        """The jobs ``take`` gave are finished: their sender may be served again."""
        key = jobs[0].key
        with self._lock:
            self._busy.discard(key)
            if not jobs[0].urgent:
                self._bulk_in_hand -= 1
            queue = self._queues.get(key)
            if queue:
                self._turns[queue[0].urgent].append(key)
            else:
                self._queues.pop(key, None)

    def waiting(self) -> int:
        """Jobs not yet taken."""
        with self._lock:
            return self._waiting

    def empty(self) -> bool:
        """Nothing waiting and nothing in hand."""
        with self._lock:
            return self._waiting == 0 and not self._busy


class Gate:
    """Bulk work waits while urgent work is in hand; urgent work never waits here.

    ``hold``/``release`` may be called from any thread; ``let_urgent_pass`` is awaited on an event loop (it
    polls, holding no thread).
    """

    def __init__(self, patience: float = 1.0, poll: float = 0.005) -> None:
        self.patience, self.poll = patience, poll
        self._lock = threading.Lock()
        self._urgent = 0

    def hold(self) -> None:
        """Urgent work begins (each ``hold`` is ended by one ``release``)."""
        with self._lock:
            self._urgent += 1

    def release(self) -> None:
        with self._lock:
            self._urgent = max(0, self._urgent - 1)

    @property
    def held(self) -> int:
        with self._lock:
            return self._urgent

    async def let_urgent_pass(self) -> bool:
        """Wait until no urgent work is in hand, or ``patience`` seconds; whether it is clear."""
        until = time.monotonic() + self.patience
        while self.held:
            if time.monotonic() >= until:
                return False
            await asyncio.sleep(self.poll)
        return True


class SenderLog:
    """When each sender's last ``keep`` messages came (seconds on a steady clock), to tell urgent mail from bulk
    (and, keeping more, for the flood limit: pbem.service.flood). A sender silent for ``memory`` seconds is
    forgotten. Not thread-safe by itself (`Admissions` holds a lock around it).
    """

    def __init__(self, keep: int = BURST, memory: float = BURST_SECONDS) -> None:
        self.keep = max(keep, BURST)
        self.memory = max(memory, BURST_SECONDS)
        self._times: dict[str, deque[float]] = {}
        self._recorded = 0

    def __contains__(self, key: str) -> bool:
        return key in self._times

    def at_least(self, key: str, n: int, since: float) -> bool:
        """Whether ``n`` messages or more (``n`` <= ``keep``) came from ``key`` after ``since``."""
        times = self._times.get(key)
        return times is not None and len(times) >= n > 0 and times[-n] > since

    def urgent(self, key: str, now: float) -> bool:
        """Fewer than BURST messages from ``key`` in the last BURST_SECONDS."""
        return not self.at_least(key, BURST, now - BURST_SECONDS)

    def record(self, key: str, now: float) -> None:
        times = self._times.setdefault(key, deque(maxlen=self.keep))
        times.append(now)
        self._recorded += 1
        if self._recorded % 1000 == 0:
            self._forget_before(now - self.memory)

    def _forget_before(self, horizon: float) -> None:
        for key in [k for k, times in self._times.items() if times[-1] < horizon]:
            del self._times[key]


class FairScheduler:
    """`FairQueue` run by ``workers`` tasks on one event loop; ``handle(jobs)`` does the work of each turn.

    ``submit`` may be called from any thread. ``idle()`` returns when nothing waits and nothing is in hand.
    ``stop()`` lets the jobs in hand finish and leaves the waiting ones (they stay stored: the next start
    takes them up again).
    """

    def __init__(self, handle: Callable[[list[Job]], Awaitable[None]], workers: int = 2, bulk_workers: int = 1) -> None:
        if workers < 2 or not 1 <= bulk_workers < workers:
            raise ValueError("a fair scheduler needs two workers or more, and one at least kept free of bulk work")
        self.handle = handle
        self.workers = workers
        self.bulk_workers = bulk_workers
        self.queue = FairQueue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task] = []
        self._wake: asyncio.Event | None = None
        self._progress: asyncio.Event | None = None
        self._stopping = False

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake, self._progress = asyncio.Event(), asyncio.Event()
        self._stopping = False
        self._tasks = [self._loop.create_task(self._work()) for _ in range(self.workers)]

    def submit(self, job: Job) -> None:
        """Queue a job (from any thread); a worker takes it in its turn."""
        self.queue.put(job)
        if self._loop is not None and self._wake is not None:
            try:
                if _running_loop() is self._loop:
                    self._wake.set()
                else:
                    self._loop.call_soon_threadsafe(self._wake.set)
            except RuntimeError:  # the loop has closed: the job stays stored for the next start
                pass

    async def _work(self) -> None:
        assert self._wake is not None and self._progress is not None
        while not self._stopping:
            self._wake.clear()
            jobs = self.queue.take(self.bulk_workers)
            if not jobs:
                await self._wake.wait()
                continue
            try:
                await self.handle(jobs)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("handling inbox messages %s failed", [j.item for j in jobs])
            finally:
                self.queue.done(jobs)
                self._wake.set()  # the sender's next job, or a bulk turn, may be taken now
                self._progress.set()

    async def idle(self) -> None:
        """Wait until every submitted job has been handled."""
        assert self._progress is not None
        while True:
            self._progress.clear()
            if self.queue.empty():
                return
            await self._progress.wait()

    async def stop(self) -> None:
        self._stopping = True
        if self._wake is not None:
            self._wake.set()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None

"""`pbem serve`: the inbound mail server, the outbox sender and the deadline clock (with reminders) in one process."""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone

from sqlalchemy import Engine

from pbem.mail.outbound import Transport, transport_from_config
from pbem.mail.server import InboundServer
from pbem.store.unit_of_work import UnitOfWork

from .deadlines import pass_deadlines
from .fairness import FairScheduler, Gate, Job, sender_key
from .flood import Admission, Admissions, backlog, job_for, set_aside
from .inbound import accept, process
from .outbound import flush_outbox
from .projector import damaged_games
from .reminders import send_reminders
from .settings import Settings

log = logging.getLogger("pbem.serve")

#: Letters taken from the outbox at a time.
OUTBOX_BATCH = 50


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


class PostOffice:
    """Everything `pbem serve` runs, startable and stoppable from tests.

    Inbound mail is handled in fair turns (pbem.service.fairness): each sender's messages wait in their own
    queue, the queues are served in turn by ``workers`` workers, and a flood (one sender in bulk) never holds
    more than one of them nor delays anyone else's answer; past ``flood_limit`` its mail is set aside
    (pbem.service.flood).
    """

    def __init__(
        self,
        db: Engine,
        settings: Settings,
        *,
        transport: Transport | None = None,
        clock: Callable[[], datetime] = utc_now,
        outbox_every: float = 1.0,
        deadlines_every: float = 30.0,
        workers: int = 4,
    ) -> None:
        self.db = db
        self.settings = settings
        if transport is None and not settings.relay_url:
            settings.maildir.mkdir(parents=True, exist_ok=True)
        self.transport = transport or transport_from_config(settings.relay_url, settings.maildir)
        self.clock = clock
        self.outbox_every = outbox_every
        self.deadlines_every = deadlines_every
        self.inbound = InboundServer(
            self._accept, host=settings.listen_host, port=settings.listen_port, protocol=settings.protocol
        )
        self.gate = Gate()
        self.admissions = Admissions(settings.flood_limit, settings.flood_window)
        self.scheduler = FairScheduler(self._handle, workers=workers)
        self._senders: dict[str, tuple[asyncio.Lock, int]] = {}  # on the SMTP server's loop: a lock per sender
        self._tasks: list[asyncio.Task] = []
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._flushing = asyncio.Lock()
        self._answering: set[asyncio.Task] = set()  # urgent letters on their way (PostOffice._answer)

    @property
    def port(self) -> int:
        return self.inbound.port

    async def _accept(self, raw: bytes, mail_from: str, rcpt_tos: list[str]) -> None:
        """Called by the SMTP/LMTP server (on its own loop) before it answers 250.

        One message of a sender is stored at a time: a flood over many connections takes one thread and one
        database writer, not all of them, and is counted in the order it was stored. A sender in bulk first
        lets urgent mail pass (on the loop, holding no thread).
        """
        key = sender_key(mail_from)
        lock, users = self._senders.get(key) or (asyncio.Lock(), 0)
        self._senders[key] = (lock, users + 1)
        try:
            async with lock:
                steady = time.monotonic()
                admission = self.admissions.decide(key, steady)
                if not admission.urgent:
                    await self.gate.let_urgent_pass()
                await asyncio.get_running_loop().run_in_executor(
                    None, self._store, raw, mail_from, rcpt_tos, key, steady, admission)
        finally:
            lock, users = self._senders[key]
            if users > 1:
                self._senders[key] = (lock, users - 1)
            else:
                del self._senders[key]

    def _store(self, raw: bytes, mail_from: str, rcpt_tos: list[str], key: str, steady: float,
               admission: Admission) -> None:
        """Store the message durably (in a worker thread), then queue it for its turn."""
        if admission.urgent:
            self.gate.hold()  # released once its answer is out, or now if nothing is queued
        queued = False
        try:
            inbox_id, new = accept(self.db, raw, mail_from, rcpt_tos, self.clock())
            if new and self._loop is not None:
                self.admissions.record(key, steady, admission.set_aside)
                self._spawn(job_for(key, inbox_id, admission, held=admission.urgent))
                queued = True
        finally:
            if admission.urgent and not queued:
                self.gate.release()

    def _spawn(self, job: Job) -> None:
        self.scheduler.submit(job)

    async def _handle(self, jobs: list[Job]) -> None:
        """One turn: a message read (or a run of one sender's messages set aside), and its letters sent.

        An urgent message's letters go out in a task of their own, so its sender's next message and the
        worker need not wait for the delivery; bulk mail waits for its own letters before its next turn.
        """
        first = jobs[0]
        try:
            if not first.urgent:
                await self.gate.let_urgent_pass()
            if first.set_aside:
                await asyncio.to_thread(set_aside, self.db, self.settings, self.admissions, jobs, self.clock())
            else:
                try:
                    await asyncio.to_thread(process, self.db, self.settings, first.item, self.clock())
                except Exception:
                    log.exception("processing inbox message %s failed; it is kept as failed", first.item)
            self._wake.set()
            if first.urgent:
                task = asyncio.get_running_loop().create_task(self._answer([j for j in jobs if j.held]))
                self._answering.add(task)
                task.add_done_callback(self._answering.discard)
                jobs = []  # the task releases their holds
            else:
                try:
                    while await self.flush() >= OUTBOX_BATCH:  # bulk mail waits for its own letters to go out
                        pass
                except Exception:
                    log.exception("outbox flush failed")
        finally:
            for job in jobs:
                if job.held:
                    self.gate.release()

    async def _answer(self, held: list[Job]) -> None:
        """Send what an urgent message's turn wrote, then let bulk work go on."""
        try:
            await self.flush()  # its answer goes out now, not at the next tick
        except Exception:
            log.exception("outbox flush failed")
        finally:
            for _ in held:
                self.gate.release()

    async def flush(self) -> int:
        """Deliver what is due; one flush at a time, so no letter goes out twice."""
        async with self._flushing:
            return await flush_outbox(self.db, self.transport, self.settings.sender, self.clock, OUTBOX_BATCH,
                                      settings=self.settings)

    async def _outbox_loop(self) -> None:
        while True:
            try:
                await self.flush()
            except Exception:
                log.exception("outbox flush failed")
            try:
                await asyncio.wait_for(self._wake.wait(), self.outbox_every)
            except asyncio.TimeoutError:
                pass
            self._wake.clear()

    async def _deadline_loop(self) -> None:
        while True:
            try:
                if await asyncio.to_thread(pass_deadlines, self.db, self.settings, now=self.clock()):
                    self._wake.set()
                if await asyncio.to_thread(send_reminders, self.db, self.settings, now=self.clock()):
                    self._wake.set()
            except Exception:
                log.exception("deadline check failed")
            await asyncio.sleep(self.deadlines_every)

    async def start(self) -> None:
        """Check every game, queue what a stopped server left stored and not handled (in fair turns like new
        mail, so new mail from others is not kept behind it), then listen."""
        self._loop = asyncio.get_running_loop()
        for problem in await asyncio.to_thread(self._damaged):
            log.error("%s", problem)
        waiting = await asyncio.to_thread(backlog, self.db, self.admissions, self.clock(), time.monotonic())
        if waiting:
            log.info("%d stored messages not yet handled: queued", len(waiting))
        self.scheduler.start()
        for job in waiting:
            if job.urgent:
                self.gate.hold()
            self._spawn(replace(job, held=job.urgent))
        self.inbound.start()
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._outbox_loop()), loop.create_task(self._deadline_loop())]

    def _damaged(self) -> list[str]:
        """Every game's whole chain, checked once at start: a damaged log is named, not served in silence."""
        with UnitOfWork(self.db) as uow:
            return damaged_games(uow)

    async def idle(self) -> None:
        """Wait until every accepted message has been processed and the outbox is flushed."""
        await asyncio.sleep(0)
        await self.scheduler.idle()
        while self._answering:
            await asyncio.gather(*list(self._answering), return_exceptions=True)
        await self.flush()

    async def stop(self) -> None:
        """Stop listening, finish the messages in hand (those still waiting stay stored for the next start)."""
        self.inbound.stop()
        await self.scheduler.stop()
        await asyncio.gather(*list(self._answering), return_exceptions=True)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def serve_forever(db: Engine, settings: Settings) -> None:
    """Run until SIGTERM (systemd, a container runtime) or SIGINT: stop listening, finish what is in hand."""
    # The handlers come first: a signal that arrived between the start and their installation used to raise
    # KeyboardInterrupt past office.stop(), and the SMTP server's thread then kept the process alive for ever.
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    office = PostOffice(db, settings)
    await office.start()
    try:
        log.info("listening for %s on %s:%s", settings.protocol.upper(), settings.listen_host, office.port)
        await stopping.wait()
        log.info("stopping")
    finally:
        await office.stop()

"""`pbem serve`: the inbound mail server, the outbox sender and the deadline clock (with reminders) in one process.

While the database cannot be written (a full disk, a read-only file or
mount) the server keeps running: SMTP clients are answered 452 (no space) or
451 (cannot write) and keep their mail; a message stored before the fault
and not yet handled stays in the inbox and is handled again every few
seconds until it goes through, in the order the messages came; the outbox
and the deadline clock try again on their next round. Each fault and the
recovery are logged once, in one line (docs/reliability.md).

Stored messages are handled in fair turns (pbem.service.fairness): each
sender's mail waits in its own queue, the queues are served in turn, and a
flood from one address never delays anyone else's answer; past the flood
limit its mail is set aside (pbem.service.flood; docs/mail.md, Floods).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime, timezone

from sqlalchemy import Engine

from pbem.mail.outbound import Transport, transport_from_config
from pbem.mail.server import Deferred, InboundServer
from pbem.spool import spool_of
from pbem.store.faults import StorageFault, storage_fault
from pbem.store.unit_of_work import UnitOfWork

from .bot_seats import bot_answers
from .deadlines import pass_deadlines
from .fairness import FairScheduler, Gate, Job, sender_key
from .flood import Admission, Admissions, backlog, job_for, jobs_for, set_aside
from .inbound import accept, process
from .outbound import flush_outbox
from .projector import damaged_games
from .reminders import send_reminders
from .senders import Senders
from .settings import Settings
from .spooled import take_spooled

log = logging.getLogger("pbem.serve")

#: The answers to a message that cannot be stored now (RFC 5321 4.2.2 and 4.5.3.1.10; RFC 3463 X.3.1, X.3.0).
NO_SPACE = "452 4.3.1 Insufficient system storage, please retry later"
CANNOT_WRITE = "451 4.3.0 Local error in processing: the mail store cannot be written, please retry later"
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
        retry_every: float = 5.0,
        bots_every: float = 1.0,
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
        self.retry_every = retry_every
        self.bots_every = bots_every
        self.inbound = InboundServer(
            self._accept, host=settings.listen_host, port=settings.listen_port, protocol=settings.protocol
        )
        self.gate = Gate()
        self.admissions = Admissions(settings.flood_limit, settings.flood_window)
        self.sender_keys = Senders(db, settings.local_part)
        self.scheduler = FairScheduler(self._handle, workers=workers)
        self._senders: dict[str, tuple[asyncio.Lock, int]] = {}  # on the SMTP server's loop: a lock per sender
        self._tasks: list[asyncio.Task] = []
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._flushing = asyncio.Lock()
        self._answering: set[asyncio.Task] = set()  # urgent letters on their way (PostOffice._answer)
        # stored, not handled for a storage fault: handled again in id order, and new mail waits behind them
        self._waiting: dict[int, Job] = {}
        self._backlog_unread = False  # the start-up backlog could not even be read: read it on the next retry
        self._fault: str | None = None  # the storage fault last logged, until the database takes writes again
        # What `pbem ingest` spools while this server runs (SQLite only; pbem/spool.py), looked at this often.
        self.spool = spool_of(settings.db_url)
        self.spool_every = 0.2
        self._held = contextlib.ExitStack()

    @property
    def port(self) -> int:
        return self.inbound.port

    async def accept_message(self, raw: bytes, mail_from: str, rcpt_tos: list[str]) -> None:
        """Store a message that came by another door than SMTP (a page's order form) and queue it, exactly as
        one the mail server took, on the mail server's loop: raises `Deferred` while the database cannot be
        written."""
        await self.inbound.on_own_loop(self._accept(raw, mail_from, rcpt_tos))

    async def _accept(self, raw: bytes, mail_from: str, rcpt_tos: list[str]) -> None:
        """Called by the SMTP/LMTP server (on its own loop) before it answers 250.

        One message of a sender is stored at a time: a flood over many connections takes one thread and one
        database writer, not all of them, and is counted in the order it was stored. A sender in bulk first
        lets urgent mail pass (on the loop, holding no thread).
        """
        key = self.sender_keys.known(mail_from, rcpt_tos)  # on the loop: a key lookup in memory costs microseconds
        if key is None:
            key = await asyncio.get_running_loop().run_in_executor(None, self._sender, mail_from, rcpt_tos)
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

    def _sender(self, mail_from: str, rcpt_tos: list[str]) -> str:
        """Whose mail this is (pbem.service.senders): the seat of a genuine reply address, else the envelope sender.
        The database unreadable, the envelope sender: the key decides turns and the flood limit, nothing else."""
        try:
            return self.sender_keys.key(mail_from, rcpt_tos)
        except Exception:
            return sender_key(mail_from)

    def _store(self, raw: bytes, mail_from: str, rcpt_tos: list[str], key: str, steady: float,
               admission: Admission) -> None:
        """Store the message durably (in a worker thread), then queue it for its turn."""
        if admission.urgent:
            self.gate.hold()  # released once its answer is out, or now if nothing is queued
        queued = False
        try:
            try:
                inbox_id, new = accept(self.db, raw, mail_from, rcpt_tos, self.clock())
            except Exception as exc:
                fault = storage_fault(exc, self.db)
                if fault is None:
                    raise
                self._trouble(fault)
                raise Deferred(NO_SPACE if fault.kind == "full" else CANNOT_WRITE, str(fault)) from exc
            if self._fault is not None and not self._waiting:
                self._recovered()
            if new and self._loop is not None:
                self.admissions.record(key, steady, admission.set_aside)
                self._spawn(job_for(key, inbox_id, admission, held=admission.urgent))
                queued = True
        finally:
            if admission.urgent and not queued:
                self.gate.release()

    def _trouble(self, fault: StorageFault) -> None:
        """Log a storage fault once, not once per message or per second."""
        if self._fault != str(fault):
            self._fault = str(fault)
            log.error("%s; mail is answered 4xx and kept by the sender, what is stored waits and is handled "
                      "when the database takes writes again", fault)

    def _recovered(self) -> None:
        if self._fault is not None:
            self._fault = None
            log.info("the database takes writes again")

    def _spawn(self, job: Job) -> None:
        self.scheduler.submit(job)

    def _queue(self, job: Job) -> None:
        """Queue a message stored by other hands than the SMTP server's (the backlog, the spool)."""
        if job.urgent:
            self.gate.hold()
        self._spawn(replace(job, held=job.urgent))

    async def _handle(self, jobs: list[Job]) -> None:
        """One turn: a message read (or a run of one sender's messages set aside), and its letters sent.

        An urgent message's letters go out in a task of their own, so its sender's next message and the
        worker need not wait for the delivery; bulk mail waits for its own letters before its next turn.
        While messages wait for the disk (a storage fault), these go behind them, so a game's mail keeps
        its order.
        """
        first = jobs[0]
        try:
            if not first.urgent:
                await self.gate.let_urgent_pass()
            if self._waiting or not await self._handle_now(jobs):
                self._waiting.update((job.item, replace(job, held=False)) for job in jobs)
                return
            self._wake.set()
            if first.urgent:
                task = asyncio.get_running_loop().create_task(self._answer([j for j in jobs if j.held]))
                self._answering.add(task)
                task.add_done_callback(self._answering.discard)
                jobs = []  # the task releases their holds
            else:
                while await self._flush_now() >= OUTBOX_BATCH:  # bulk mail waits for its own letters to go out
                    pass
        finally:
            for job in jobs:
                if job.held:
                    self.gate.release()

    async def _handle_now(self, jobs: list[Job]) -> bool:
        """Read the message (or set the run aside); False when a storage fault left it waiting in the inbox."""
        first = jobs[0]
        try:
            if first.set_aside:
                await asyncio.to_thread(set_aside, self.db, self.settings, self.admissions, jobs, self.clock())
            else:
                await asyncio.to_thread(process, self.db, self.settings, first.item, self.clock())
        except Exception as exc:
            fault = exc if isinstance(exc, StorageFault) else storage_fault(exc, self.db)
            if fault is not None:
                self._trouble(fault)
                return False
            if first.set_aside:  # still 'received': the next start takes them up again
                log.exception("setting aside inbox messages %s failed", [j.item for j in jobs])
            else:
                log.exception("processing inbox message %s failed; it is kept as failed (`pbem queue` lists it, "
                              "`pbem queue retry in:%s` handles it again)", first.item, first.item)
        return True

    async def _answer(self, held: list[Job]) -> None:
        """Send what an urgent message's turn wrote, then let bulk work go on."""
        try:
            await self._flush_now()  # its answer goes out now, not at the next tick
        finally:
            for _ in held:
                self.gate.release()

    async def _flush_now(self) -> int:
        """`flush`, a failure logged (a storage fault once) rather than raised."""
        try:
            return await self.flush()
        except Exception as exc:
            fault = storage_fault(exc, self.db)
            if fault is None:
                log.exception("outbox flush failed")
            else:  # the letters stay in the outbox and go when the lease or their next attempt comes
                self._trouble(fault)
            return 0

    async def _retry_loop(self) -> None:
        while True:
            await asyncio.sleep(self.retry_every)
            try:
                await self.retry_waiting()
            except Exception:
                log.exception("handling the waiting messages failed")

    async def _read_backlog(self):
        """The stored messages not yet handled, as jobs; None when a storage fault keeps them from being read
        (logged once)."""
        try:
            return await asyncio.to_thread(self._backlog)
        except Exception as exc:
            fault = storage_fault(exc, self.db)
            if fault is None:
                raise
            self._trouble(fault)
            return None

    async def retry_waiting(self) -> None:
        """Handle again, oldest first, the messages a storage fault left waiting; stop at the first that still cannot."""
        if self._backlog_unread:
            jobs = await self._read_backlog()
            if jobs is None:
                return
            self._backlog_unread = False
            self._waiting.update((job.item, job) for job in jobs)
        if not self._waiting:
            return
        for item in sorted(self._waiting):
            if not await self._handle_now([self._waiting[item]]):
                return
            del self._waiting[item]
            self._wake.set()
        self._recovered()

    def _backlog(self) -> list[Job]:
        """Every message stored and not handled, as a job decided as when it came (pbem.service.flood.backlog)."""
        return backlog(self.db, self.admissions, self.sender_keys, self.clock(), time.monotonic())

    async def flush(self) -> int:
        """Deliver what is due; one flush at a time, so no letter goes out twice."""
        async with self._flushing:
            return await flush_outbox(self.db, self.transport, self.settings.sender, self.clock, OUTBOX_BATCH,
                                      settings=self.settings)

    async def _outbox_loop(self) -> None:
        while True:
            try:
                await self.flush()
            except Exception as exc:
                fault = storage_fault(exc, self.db)
                if fault is None:
                    log.exception("outbox flush failed")
                else:  # the letters stay in the outbox and go when the lease or their next attempt comes
                    self._trouble(fault)
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
            except Exception as exc:
                fault = storage_fault(exc, self.db)
                if fault is None:
                    log.exception("deadline check failed")
                else:  # nothing was recorded; the next round passes the deadline
                    self._trouble(fault)
            await asyncio.sleep(self.deadlines_every)

    async def _take_spooled(self) -> list[int]:
        """What `pbem ingest` spooled, into the inbox; the new messages' ids. A storage fault leaves them spooled."""
        assert self.spool is not None
        try:
            return await asyncio.to_thread(take_spooled, self.db, self.spool, self.clock())
        except Exception as exc:
            fault = storage_fault(exc, self.db)
            if fault is None:
                log.exception("taking in spooled messages failed; they stay in %s", self.spool.folder)
            else:
                self._trouble(fault)
            return []

    async def _spool_loop(self) -> None:
        """Take in what `pbem ingest` spooled, and queue each new message as one taken by SMTP."""
        while True:
            ids = await self._take_spooled()
            if ids:
                try:
                    jobs = await asyncio.to_thread(jobs_for, self.db, self.admissions, self.sender_keys, ids, self.clock(), time.monotonic())
                except Exception as exc:  # they are stored: the retry (or the next start) reads them
                    fault = storage_fault(exc, self.db)
                    if fault is None:
                        log.exception("queueing spooled messages %s failed", ids)
                    else:
                        self._trouble(fault)
                    self._backlog_unread = True
                    jobs = []
                for job in jobs:
                    self._queue(job)
            await asyncio.sleep(self.spool_every)

    async def start(self) -> None:
        """Queue what was stored and not handled (a crash, a storage fault), then listen and run the loops.

        The backlog is handled in fair turns like new mail, so new mail from others is not kept behind it. A
        storage fault met on the way does not stop the start: the server listens (and answers 4xx while the
        fault lasts), and the messages left wait for the retry loop."""
        self._loop = asyncio.get_running_loop()
        if self.spool is not None:
            # Held before anything is taken in: from now on `pbem ingest` spools instead of doing the work itself.
            try:
                self._held.enter_context(self.spool.held_by_server())
            except OSError as exc:  # a full disk or a read-only folder: ingest then does the whole job itself
                log.warning("no spool for pbem ingest (%s): it does the whole job itself meanwhile", exc)
                self.spool = None
        for problem in await asyncio.to_thread(self._damaged):
            log.error("%s", problem)
        if self.spool is not None:  # into the inbox first, so the backlog below holds them too
            await self._take_spooled()
        waiting = await self._read_backlog()
        if waiting is None:
            self._backlog_unread, waiting = True, []
        if waiting:
            log.info("%d stored messages not yet handled: queued", len(waiting))
        self.scheduler.start()
        for job in waiting:
            self._queue(job)
        self.inbound.start()
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._outbox_loop()), loop.create_task(self._deadline_loop()),
                       loop.create_task(self._retry_loop()), loop.create_task(self._bot_loop())]
        if self.spool is not None:
            self._tasks.append(loop.create_task(self._spool_loop()))

    async def _bot_loop(self) -> None:
        """Answer for the seats bots play (pbem.service.bot_seats), each answer as mail through the door mail
        takes; a storage fault waits for the next round like the other loops."""
        while True:
            await asyncio.sleep(self.bots_every)
            try:
                await self.answer_for_bots()
            except Deferred:  # the database takes no writes: already told once, by the door that refused it
                continue
            except Exception as exc:
                fault = storage_fault(exc, self.db)
                if fault is None:
                    log.exception("answering for the bots failed; tried again in %s s", self.bots_every)
                else:  # logged once, like the other loops' faults; the next round answers
                    self._trouble(fault)

    async def answer_for_bots(self) -> int:
        """Put in every answer the bots owe now; how many."""
        def owed() -> list[tuple[bytes, str, list[str]]]:
            with UnitOfWork(self.db) as uow:
                return bot_answers(uow, self.settings, self.clock())

        answers = await asyncio.to_thread(owed)
        for raw, sender, recipients in answers:
            await self.accept_message(raw, sender, recipients)
        return len(answers)

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
        self._held.close()


#: Something more `pbem serve` runs beside the mail (the web pages, pbem.web): started with the post office,
#: it gives back what stops it.
Beside = Callable[["PostOffice"], Awaitable[Callable[[], Awaitable[None]]]]


async def serve_forever(db: Engine, settings: Settings, beside: Beside | None = None) -> None:
    """Run until SIGTERM (systemd, a container runtime) or SIGINT: stop listening, finish what is in hand.

    ``beside``: started once the post office runs, on the same loop (the web pages: an entry point above
    this layer, so handed in by the command that composes them)."""
    # The handlers come first: a signal that arrived between the start and their installation used to raise
    # KeyboardInterrupt past office.stop(), and the SMTP server's thread then kept the process alive for ever.
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    office = PostOffice(db, settings)
    await office.start()
    stop_beside = None
    try:
        log.info("listening for %s on %s:%s", settings.protocol.upper(), settings.listen_host, office.port)
        if beside is not None:
            stop_beside = await beside(office)
        await stopping.wait()
        log.info("stopping")
    finally:
        if stop_beside is not None:
            await stop_beside()
        await office.stop()

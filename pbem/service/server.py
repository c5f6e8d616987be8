"""`pbem serve`: the inbound mail server, the outbox sender and the deadline clock (with reminders) in one process.

While the database cannot be written (a full disk, a read-only file or
mount) the server keeps running: SMTP clients are answered 452 (no space) or
451 (cannot write) and keep their mail; a message stored before the fault
and not yet handled stays in the inbox and is handled again every few
seconds until it goes through, in the order the messages came; the outbox
and the deadline clock try again on their next round. Each fault and the
recovery are logged once, in one line (docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable
from datetime import datetime, timezone

from sqlalchemy import Engine

from pbem.mail.outbound import Transport, transport_from_config
from pbem.mail.server import Deferred, InboundServer
from pbem.spool import spool_of
from pbem.store.faults import StorageFault, storage_fault
from pbem.store.unit_of_work import UnitOfWork

from .deadlines import pass_deadlines
from .inbound import accept, process
from .outbound import flush_outbox
from .projector import damaged_games
from .reminders import send_reminders
from .settings import Settings
from .spooled import take_spooled

log = logging.getLogger("pbem.serve")

#: The answers to a message that cannot be stored now (RFC 5321 4.2.2 and 4.5.3.1.10; RFC 3463 X.3.1, X.3.0).
NO_SPACE = "452 4.3.1 Insufficient system storage, please retry later"
CANNOT_WRITE = "451 4.3.0 Local error in processing: the mail store cannot be written, please retry later"


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


class PostOffice:
    """Everything `pbem serve` runs, startable and stoppable from tests."""

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
        self.inbound = InboundServer(
            self._accept, host=settings.listen_host, port=settings.listen_port, protocol=settings.protocol
        )
        self._tasks: list[asyncio.Task] = []
        self._work: set[asyncio.Task] = set()
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._flushing = asyncio.Lock()
        self._waiting: set[int] = set()  # stored, not handled for a storage fault: handled again, in id order
        self._backlog_unread = False  # the start-up backlog could not even be read: read it on the next retry
        self._fault: str | None = None  # the storage fault last logged, until the database takes writes again
        # What `pbem ingest` spools while this server runs (SQLite only; pbem/spool.py), looked at this often.
        self.spool = spool_of(settings.db_url)
        self.spool_every = 0.2
        self._held = contextlib.ExitStack()

    @property
    def port(self) -> int:
        return self.inbound.port

    def _accept(self, raw: bytes, mail_from: str, rcpt_tos: list[str]) -> None:
        """Called by the SMTP/LMTP server (in its own thread) before it answers 250."""
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
            self._loop.call_soon_threadsafe(self._spawn, inbox_id)

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

    def _spawn(self, inbox_id: int) -> None:
        if self._waiting:  # messages wait for the disk: this one goes behind them, so a game's mail keeps its order
            self._waiting.add(inbox_id)
            return
        task = asyncio.get_running_loop().create_task(self._process(inbox_id))
        self._work.add(task)
        task.add_done_callback(self._work.discard)

    async def _process(self, inbox_id: int) -> None:
        if not await self._handle(inbox_id):
            self._waiting.add(inbox_id)

    async def _handle(self, inbox_id: int) -> bool:
        """Handle one stored message; False when a storage fault left it waiting in the inbox."""
        try:
            await asyncio.to_thread(process, self.db, self.settings, inbox_id, self.clock())
        except StorageFault as fault:
            self._trouble(fault)
            return False
        except Exception:
            log.exception("processing inbox message %s failed; it is kept as failed "
                          "(`pbem queue` lists it, `pbem queue retry in:%s` handles it again)", inbox_id, inbox_id)
        self._wake.set()
        return True

    async def _retry_loop(self) -> None:
        while True:
            await asyncio.sleep(self.retry_every)
            try:
                await self.retry_waiting()
            except Exception:
                log.exception("handling the waiting messages failed")

    async def retry_waiting(self) -> None:
        """Handle again, oldest first, the messages a storage fault left waiting; stop at the first that still cannot."""
        if self._backlog_unread:
            try:
                self._waiting.update(await asyncio.to_thread(self._unprocessed))
            except Exception as exc:
                fault = storage_fault(exc, self.db)
                if fault is None:
                    raise
                self._trouble(fault)
                return
            self._backlog_unread = False
        if not self._waiting:
            return
        for inbox_id in sorted(self._waiting):
            if not await self._handle(inbox_id):
                return
            self._waiting.discard(inbox_id)
        self._recovered()

    def _unprocessed(self) -> list[int]:
        with UnitOfWork(self.db) as uow:
            return [row.id for row in uow.inbox.unprocessed(limit=1_000_000)]

    async def flush(self) -> int:
        """Deliver what is due; one flush at a time, so no letter goes out twice."""
        async with self._flushing:
            return await flush_outbox(self.db, self.transport, self.settings.sender, self.clock, settings=self.settings)

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
        """Take in what `pbem ingest` spooled, and process each new message as one taken by SMTP."""
        while True:
            for inbox_id in await self._take_spooled():
                self._spawn(inbox_id)
            await asyncio.sleep(self.spool_every)

    async def start(self) -> None:
        """Handle what was stored and not handled (a crash, a storage fault), then listen and run the loops.

        A storage fault met on the way does not stop the start: the server
        listens (and answers 4xx while the fault lasts), and the messages left
        wait for the retry loop."""
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
        self._backlog_unread = True
        await self.retry_waiting()
        self.inbound.start()
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._outbox_loop()), loop.create_task(self._deadline_loop()),
                       loop.create_task(self._retry_loop())]
        if self.spool is not None:
            self._tasks.append(loop.create_task(self._spool_loop()))

    def _damaged(self) -> list[str]:
        """Every game's whole chain, checked once at start: a damaged log is named, not served in silence."""
        with UnitOfWork(self.db) as uow:
            return damaged_games(uow)

    async def idle(self) -> None:
        """Wait until every accepted message has been processed and the outbox is flushed."""
        await asyncio.sleep(0)
        while self._work:
            await asyncio.gather(*list(self._work), return_exceptions=True)
            await asyncio.sleep(0)
        await self.flush()

    async def stop(self) -> None:
        self.inbound.stop()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, *self._work, return_exceptions=True)
        self._held.close()


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

"""`pbem serve`: the inbound mail server, the outbox sender and the deadline clock (with reminders) in one process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable
from datetime import datetime, timezone

from sqlalchemy import Engine

from pbem.mail.outbound import Transport, transport_from_config
from pbem.mail.server import InboundServer
from pbem.spool import spool_of
from pbem.store.unit_of_work import UnitOfWork

from .deadlines import pass_deadlines
from .inbound import accept, process, process_backlog
from .outbound import flush_outbox
from .projector import damaged_games
from .reminders import send_reminders
from .settings import Settings
from .spooled import take_spooled

log = logging.getLogger("pbem.serve")


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
        self._tasks: list[asyncio.Task] = []
        self._work: set[asyncio.Task] = set()
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._flushing = asyncio.Lock()
        # What `pbem ingest` spools while this server runs (SQLite only; pbem/spool.py), looked at this often.
        self.spool = spool_of(settings.db_url)
        self.spool_every = 0.2
        self._held = contextlib.ExitStack()

    @property
    def port(self) -> int:
        return self.inbound.port

    def _accept(self, raw: bytes, mail_from: str, rcpt_tos: list[str]) -> None:
        """Called by the SMTP/LMTP server (in its own thread) before it answers 250."""
        inbox_id, new = accept(self.db, raw, mail_from, rcpt_tos, self.clock())
        if new and self._loop is not None:
            self._loop.call_soon_threadsafe(self._spawn, inbox_id)

    def _spawn(self, inbox_id: int) -> None:
        task = asyncio.get_running_loop().create_task(self._process(inbox_id))
        self._work.add(task)
        task.add_done_callback(self._work.discard)

    async def _process(self, inbox_id: int) -> None:
        try:
            await asyncio.to_thread(process, self.db, self.settings, inbox_id, self.clock())
        except Exception:
            log.exception("processing inbox message %s failed; it is kept as failed", inbox_id)
        self._wake.set()

    async def flush(self) -> int:
        """Deliver what is due; one flush at a time, so no letter goes out twice."""
        async with self._flushing:
            return await flush_outbox(self.db, self.transport, self.settings.sender, self.clock, settings=self.settings)

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

    async def _spool_loop(self) -> None:
        """Take in what `pbem ingest` spooled, and process each new message as one taken by SMTP."""
        assert self.spool is not None
        while True:
            try:
                for inbox_id in await asyncio.to_thread(take_spooled, self.db, self.spool, self.clock()):
                    self._spawn(inbox_id)
            except Exception:
                log.exception("taking in spooled messages failed; they stay in %s", self.spool.folder)
            await asyncio.sleep(self.spool_every)

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        if self.spool is not None:
            # Held before anything is taken in: from now on `pbem ingest` spools instead of doing the work itself.
            self._held.enter_context(self.spool.held_by_server())
        for problem in await asyncio.to_thread(self._damaged):
            log.error("%s", problem)
        if self.spool is not None:
            await asyncio.to_thread(take_spooled, self.db, self.spool, self.clock())
        await asyncio.to_thread(process_backlog, self.db, self.settings, self.clock())
        self.inbound.start()
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._outbox_loop()), loop.create_task(self._deadline_loop())]
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

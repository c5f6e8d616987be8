"""Inbound SMTP/LMTP server (aiosmtpd).

The contract with the MTA in front of us (Postfix, or a player's provider):

* `250 OK` is answered only after `accept(raw, mail_from, rcpt_tos)` has
  returned, i.e. after the raw message is stored durably;
* if `accept` raises anything, the answer is
  `451 4.3.0 Temporary failure, please retry` and the sending MTA keeps the
  message and retries.  A server-side failure never produces a 5xx, which
  would bounce a player's orders.  `accept` may raise `Deferred` to choose
  the 4xx reply itself, e.g. `452 4.3.1` when the disk is full
  (RFC 5321 4.2.2 and 4.5.3.1.10, RFC 3463).

Two ways to run it:

* `start()` / `stop()`: in a background thread with its own event loop
  (aiosmtpd's threaded Controller).  A plain function `accept` runs in a
  worker thread; a coroutine function runs on the server's loop.
* `await astart()` / `await astop()`: on the caller's running event loop, so
  a coroutine `accept` can share that loop's resources.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Literal

from aiosmtpd.controller import Controller
from aiosmtpd.lmtp import LMTP
from aiosmtpd.smtp import MISSING, SMTP, Envelope, Session, syntax

__all__ = ["InboundServer", "Accept", "Deferred", "TEMPFAIL", "OK"]

log = logging.getLogger(__name__)

Accept = Callable[[bytes, str, list[str]], "Awaitable[None] | None"]

OK = "250 OK"
TEMPFAIL = "451 4.3.0 Temporary failure, please retry"


class Deferred(Exception):
    """Raised by `accept` when the message could not be kept for a known, passing reason: answered with `reply`.

    The reply must be a 4xx (the sending MTA keeps the message and retries);
    the reason is logged in one line, without a traceback, since it is the
    state of the machine, not a fault of pbem's.
    """

    def __init__(self, reply: str, reason: str) -> None:
        if not reply[:1] == "4":
            raise ValueError(f"a deferral is answered with a 4xx reply, not {reply!r}")
        super().__init__(reason)
        self.reply = reply
        self.reason = reason


def _domain_of(address: str) -> str:
    address = address.strip().strip("<>")
    return address.rpartition("@")[2].lower() if "@" in address else ""


class _Handler:
    """aiosmtpd handler: recipient filtering and the store-then-250 rule."""

    def __init__(self, owner: "InboundServer") -> None:
        self.owner = owner

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, rcpt_options: list[str]
    ) -> str:
        domains = self.owner.domains
        if domains is not None and _domain_of(address) not in domains:
            return f"550 5.1.2 <{address}>: this server does not accept mail for that domain"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content
        if raw is None:
            content = envelope.content
            raw = content.encode("utf-8", "surrogateescape") if isinstance(content, str) else (content or b"")
        recipients = list(envelope.rcpt_tos)
        mail_from = envelope.mail_from or "<>"  # the null reverse-path, as RFC 5321 writes it: bounces and auto-replies
        try:
            await self.owner._call_accept(bytes(raw), mail_from, recipients)
        except Deferred as deferred:
            # the addresses as the client gave them: the log's formatter escapes what a stranger put in them
            log.warning("a message from %s to %s not taken, answered %s: %s", mail_from, ", ".join(recipients),
                        deferred.reply, deferred.reason)
            status = deferred.reply
        except Exception:
            log.exception("accept failed for a message from %s to %s; answered 451", mail_from, ", ".join(recipients))
            status = TEMPFAIL
        else:
            status = OK
        if self.owner.protocol == "lmtp":
            # LMTP: one reply per accepted recipient (RFC 2033 §4.2).
            return "\r\n".join([status] * max(1, len(recipients)))
        return status


#: The longest line the listener reads (the message size limit still applies).
LINE_LENGTH_LIMIT = 1_000_000


#: Octets read from the connection at a time while a message's data arrives.
DATA_CHUNK = 64 * 1024
_END_OF_DATA = b"\r\n.\r\n"


class _ChunkedData:
    """DATA read in chunks, its end and its dot-stuffing found by the bytes methods.

    aiosmtpd reads DATA a line at a time on the event loop that serves every
    connection: a megabyte of blank lines is half a million turns of a Python
    loop, and a player connecting meanwhile waited two seconds for the
    greeting (tests/hostile/test_stranger.py). Here each chunk is searched for
    the end (``CRLF . CRLF``) in C, and the loop is given back between chunks.
    What the client sees is the same: 552 past the size limit, 500 for a line
    longer than `line_length_limit`, both once the data is in (RFC 5321
    4.2.5); a leading dot taken off each line (4.5.2).
    """

    line_length_limit = LINE_LENGTH_LIMIT

    @syntax("DATA")
    async def smtp_DATA(self, arg: str) -> None:
        if await self.check_helo_needed() or await self.check_auth_needed("DATA"):
            return
        assert self.envelope is not None
        if not self.envelope.rcpt_tos:
            await self.push("503 Error: need RCPT command")
            return
        if arg:
            await self.push("501 Syntax: DATA")
            return
        await self.push("354 End data with <CR><LF>.<CR><LF>")
        received = bytearray(b"\r\n")  # a CRLF before the first line: the end may come at once
        searched = 0
        while True:
            try:
                chunk = await self._reader.read(DATA_CHUNK)
            except asyncio.CancelledError:
                log.info("Connection lost during DATA")
                self._writer.close()
                raise
            if not chunk:  # the client went away before the end
                return
            received += chunk
            end = received.find(_END_OF_DATA, max(0, searched - len(_END_OF_DATA)))
            if end >= 0:
                break
            searched = len(received)
            limit = self.data_size_limit
            if limit and len(received) > 2 * limit + DATA_CHUNK:  # far past the limit: stop keeping it
                del received[: len(received) - len(_END_OF_DATA)]
                searched = len(received)
                self._too_much = True
        extra = received[end + len(_END_OF_DATA):]
        if extra:  # pipelined commands after the data: left for the command loop
            self._reader._buffer[:0] = extra  # noqa: SLF001 - the reader's own buffer, as readuntil leaves it
        body = bytes(received[2 : end + 2])  # from after the leading CRLF to the last line's CRLF
        if getattr(self, "_too_much", False) or (self.data_size_limit and len(body) > self.data_size_limit):
            self._too_much = False
            self._set_post_data_state()
            await self.push("552 Error: Too much mail data")
            return
        too_long = len(body) > self.line_length_limit and max(map(len, body.split(b"\r\n"))) + 2 > self.line_length_limit
        if too_long:
            self._set_post_data_state()
            await self.push("500 Line too long (see RFC5321 4.5.3.1.6)")
            return
        content = (b"\r\n" + body).replace(b"\r\n.", b"\r\n")[2:]
        self.envelope.content = content
        self.envelope.original_content = content
        status = await self._call_handler_hook("DATA")
        self._set_post_data_state()
        await self.push("250 OK" if status is MISSING else status)


class _LongLinesSMTP(_ChunkedData, SMTP):
    """RFC 5321 4.5.3.1.6 lets a server take lines longer than 1,000 octets. Some clients write long
    HTML lines; refusing them (500) would bounce a player's orders, so they are taken."""


class _LongLinesLMTP(_ChunkedData, LMTP):
    pass


class _Controller(Controller):
    """Threaded controller that knows LMTP and ephemeral ports."""

    def __init__(self, handler: _Handler, *, protocol: str, hostname: str, port: int, **smtp_kwargs) -> None:
        super().__init__(handler, hostname=hostname, port=port, **smtp_kwargs)
        self._protocol = protocol

    def factory(self):
        cls = _LongLinesLMTP if self._protocol == "lmtp" else _LongLinesSMTP
        return cls(self.handler, **self.SMTP_kwargs)

    def _trigger_server(self):
        # With port 0 the kernel chose the port: learn it before connecting.
        if self.server is not None and self.server.sockets:
            self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()


class InboundServer:
    """SMTP or LMTP listener handing each message to `accept`.

    `domains`: if given, RCPT TO is accepted only for those domains (others
    get 550 5.1.2, which is a statement about the address, not a failure of
    ours).  `max_bytes` is advertised as SIZE; larger DATA gets aiosmtpd's 552.
    """

    def __init__(
        self,
        accept: Accept,
        host: str = "127.0.0.1",
        port: int = 8025,
        protocol: Literal["smtp", "lmtp"] = "smtp",
        max_bytes: int = 10_000_000,
        *,
        domains: Iterable[str] | None = None,
        server_hostname: str | None = None,
    ) -> None:
        if protocol not in ("smtp", "lmtp"):
            raise ValueError(f"protocol must be 'smtp' or 'lmtp', not {protocol!r}")
        self.accept = accept
        self.host = host
        self._port = port
        self.protocol = protocol
        self.max_bytes = max_bytes
        self.domains = frozenset(d.lower().lstrip("@") for d in domains) if domains is not None else None
        self.server_hostname = server_hostname
        self._handler = _Handler(self)
        self._controller: _Controller | None = None
        self._server: asyncio.AbstractServer | None = None

    # -- accept -------------------------------------------------------------

    def _accept_is_async(self) -> bool:
        target = self.accept
        if inspect.iscoroutinefunction(target):
            return True
        call = getattr(target, "__call__", None)
        return call is not None and inspect.iscoroutinefunction(call)

    async def _call_accept(self, raw: bytes, mail_from: str, rcpt_tos: list[str]) -> None:
        if self._accept_is_async():
            await self.accept(raw, mail_from, rcpt_tos)
            return
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(None, functools.partial(self.accept, raw, mail_from, rcpt_tos))
        if inspect.isawaitable(result):
            await result

    async def on_own_loop(self, work: Awaitable[None]) -> None:
        """Await ``work`` on the loop this server takes mail on (its thread's, when started with `start`): a
        message that came by another door is stored under the same per-sender locks as the mail."""
        controller = self._controller
        if controller is None:
            await work
            return
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, controller.loop))

    # -- SMTP parameters ----------------------------------------------------

    def _smtp_kwargs(self) -> dict:
        kwargs = dict(
            data_size_limit=self.max_bytes,
            enable_SMTPUTF8=True,
            decode_data=False,
        )
        if self.server_hostname:
            kwargs["hostname"] = self.server_hostname
        return kwargs

    # -- threaded -----------------------------------------------------------

    def start(self) -> None:
        """Listen in a background thread; returns once the port is bound."""
        if self._controller is not None or self._server is not None:
            raise RuntimeError("server already running")
        kwargs = self._smtp_kwargs()
        hostname = kwargs.pop("hostname", None)
        controller = _Controller(
            self._handler,
            protocol=self.protocol,
            hostname=self.host,
            port=self._port,
            server_hostname=hostname,
            **kwargs,
        )
        controller.start()
        self._controller = controller

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    # -- on the caller's loop -----------------------------------------------

    async def astart(self) -> None:
        """Listen on the running event loop."""
        if self._controller is not None or self._server is not None:
            raise RuntimeError("server already running")
        loop = asyncio.get_running_loop()
        cls = LMTP if self.protocol == "lmtp" else SMTP
        kwargs = self._smtp_kwargs()

        def factory() -> SMTP:
            return cls(self._handler, loop=loop, **kwargs)

        self._server = await loop.create_server(factory, host=self.host, port=self._port)

    async def astop(self) -> None:
        if self._server is not None:
            server, self._server = self._server, None
            server.close()
            await server.wait_closed()

    # -- both ---------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._controller is not None or self._server is not None

    @property
    def port(self) -> int:
        """The bound port (the kernel's choice when constructed with port 0)."""
        if self._server is not None and self._server.sockets:
            return self._server.sockets[0].getsockname()[1]
        if self._controller is not None:
            server = self._controller.server
            if server is not None and server.sockets:
                return server.sockets[0].getsockname()[1]
            return self._controller.port
        return self._port

    def __enter__(self) -> "InboundServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    async def __aenter__(self) -> "InboundServer":
        await self.astart()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.astop()

"""The HTTP side of `pbem serve`: routes, the guards every response passes, and the pages' rendering.

Why aiohttp (docs/web.md): `pbem serve` is one asyncio program already (the
outbox, the deadline clock and the fair scheduler run on its loop), and
aiohttp's server is a library that joins that loop as one more task, with
no second server process and no ASGI adapter between. Starlette would need
uvicorn beside it for the same.

Every request is answered from the database as it stands (a reader engine,
`pbem.store.database.make_reader`, that never waits on the writer), so any
worker on a shared PostgreSQL database serves any game: nothing is kept
between requests but a cache of logs keyed by their chain head.

What every response gets: no referrer, a content security policy that
loads nothing from elsewhere and runs no inline script, no framing, no
caching of pages that may hold a hand. A link that does not open (unknown
game, unknown reader, wrong or revoked token) gets the same 404 as a
wrong address. The access log names no token: a link in a log file would
be a key left lying about.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
from aiohttp import web
from sqlalchemy import Engine

from pbem.escaping import escape_controls
from pbem.mail.server import Deferred
from pbem.mail.render import default_templates_dir
from pbem.service.console import console_order, rollback_preview
from pbem.service.links import page_url
from pbem.service.pages import (
    Opened, PageCache, board, explanation, export_text, form_proof, game_page, new_form_id, open_page, orders_message,
    verify_page,
)
from pbem.service.server import Beside, PostOffice
from pbem.service.settings import Settings
from pbem.store.database import make_reader
from pbem.store.unit_of_work import UnitOfWork

__all__ = ["Accept", "WebPages", "bound_port", "pages_beside", "start_web"]

log = logging.getLogger("pbem.web")

#: Stores a message as the mail server would and queues it (PostOffice's own path): (raw, sender, recipients).
Accept = Callable[[bytes, str, list[str]], Awaitable[None]]

#: Requests one link may make in a minute; past it, 429 until the minute has passed.
PER_LINK_A_MINUTE = 120
#: The largest order text a form takes (a mail order block is a few hundred bytes).
MOST_ORDER_BYTES = 64_000

_HEADERS = {
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'none'; img-src 'self'; style-src 'self'; script-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
}
#: A board is an SVG document whose pieces are styled inline: it may keep its own styles, and nothing more.
_BOARD_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"

_NOT_FOUND = (
    "No such page. A game's page opens from the link in a letter of that game; a link stops working when "
    "its seat changes hands or the moderator revokes it (send LINK to the game for your current one)."
)


class Limits:
    """Requests per link in the current minute, for the most recently seen links (memory stays bounded)."""

    def __init__(self, per_minute: int = PER_LINK_A_MINUTE, keep: int = 10_000) -> None:
        self.per_minute = per_minute
        self.keep = keep
        self._counts: OrderedDict[str, tuple[int, int]] = OrderedDict()

    def allow(self, key: str, now: float) -> bool:
        minute = int(now // 60)
        seen_minute, count = self._counts.get(key, (minute, 0))
        count = count + 1 if seen_minute == minute else 1
        self._counts[key] = (minute, count)
        self._counts.move_to_end(key)
        while len(self._counts) > self.keep:
            self._counts.popitem(last=False)
        return count <= self.per_minute


def _version(request: web.Request) -> int | None:
    raw = request.query.get("v")
    if raw is None or raw == "":
        return None
    if not raw.isdigit() or len(raw) > 12:
        raise web.HTTPNotFound(text=_NOT_FOUND)
    return int(raw)


class WebPages:
    """The pages of every game, for every reader who holds a link."""

    def __init__(self, db: Engine, settings: Settings, accept: Accept, *,
                 clock: Callable[[], datetime], templates_dir: Path | None = None,
                 per_link_a_minute: int = PER_LINK_A_MINUTE) -> None:
        self.db = db
        self.settings = settings
        self.accept = accept
        self.clock = clock
        self.cache = PageCache()
        self._verified: dict[tuple[str, int], dict[str, Any]] = {}
        self.limits = Limits(per_link_a_minute)
        folder = Path(templates_dir) if templates_dir is not None else default_templates_dir() / "web"
        self.folder = folder
        self.env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), autoescape=True,
                                      undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard], client_max_size=MOST_ORDER_BYTES * 2)
        link = "/g/{game}/{reader}/{token}"
        app.router.add_get(link + "/", self.page)
        app.router.add_get(link + "/board.svg", self.board)
        app.router.add_get(link + "/explain/{version:[0-9]{1,12}}", self.explain)
        app.router.add_get(link + "/verify", self.verify)
        app.router.add_get(link + "/export.jsonl", self.export)
        app.router.add_post(link + "/orders", self.orders)
        app.router.add_post(link + "/console", self.console)
        app.router.add_get("/static/{name}", self.static)
        return app

    # -- guards -------------------------------------------------------------------------------------------

    @web.middleware
    async def _guard(self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                     ) -> web.StreamResponse:
        started = time.perf_counter()
        try:
            key = request.match_info.get("token")
            if key is not None and not self.limits.allow(f"{request.match_info['game']}/{key}", time.monotonic()):
                response: web.StreamResponse = web.Response(status=429, text="Too many requests for this link; "
                                                            "wait a minute.", headers={"Retry-After": "60"})
            else:
                response = await handler(request)
        except web.HTTPException as exc:
            if exc.status == 404 or exc.status == 405:
                response = self._not_found()
            else:  # a redirect, or a refusal with its own words: answered as a response, not raised on
                response = web.Response(status=exc.status, headers=exc.headers, text=exc.text)
        except Exception:
            log.exception("%s %s failed", request.method, _shown_path(request))
            response = web.Response(status=500, text="The page could not be made; the operator's log says why.")
        for name, value in _HEADERS.items():
            response.headers.setdefault(name, value)
        log.info("%s %s %s %.0f ms", request.method, _shown_path(request), response.status,
                 (time.perf_counter() - started) * 1000)
        return response

    def _not_found(self) -> web.Response:
        return web.Response(status=404, content_type="text/html",
                            text=self._render("notfound.html", message=_NOT_FOUND))

    def _render(self, name: str, **context: Any) -> str:
        """One page rendered and escaped whole, as letters and the archive are (control characters written out)."""
        return escape_controls(self.env.get_template(name).render(**context))

    async def _read(self, request: web.Request, use: Callable[[UnitOfWork, Opened], Any]) -> Any:
        """``use(uow, opened)`` in a thread, on one read transaction; 404 when the link does not open."""
        game, reader, token = (request.match_info[k] for k in ("game", "reader", "token"))

        def work() -> Any:
            with UnitOfWork(self.db) as uow:
                opened = open_page(uow, game, reader, token)
                return None if opened is None else (opened, use(uow, opened))

        found = await asyncio.to_thread(work)
        if found is None:
            raise web.HTTPNotFound(text=_NOT_FOUND)
        return found

    # -- pages --------------------------------------------------------------------------------------------

    async def page(self, request: web.Request) -> web.Response:
        version = _version(request)
        form_id = new_form_id(self.clock(), secrets.token_hex(12))
        wanted = request.query.get("preview", "")
        reason = " ".join(request.query.get("reason", "").split())[:300]

        def use(uow: UnitOfWork, opened: Opened) -> dict[str, Any]:
            try:
                context = game_page(uow, self.cache, opened, version)
            except LookupError:  # a version outside the log: as unknown as a wrong link
                return {}
            context["form_id"] = form_id
            context["proof"] = form_proof(opened, opened.key, form_id)
            context["preview"] = None
            context["auditor_link"] = page_url(self.settings, opened.key, opened.state, "auditor") \
                if opened.viewer == "moderator" else None
            if opened.viewer == "moderator" and wanted.isdigit() and len(wanted) <= 9:
                ok, text = rollback_preview(uow, opened, int(wanted), reason or "no reason given")
                context["preview"] = {"ok": ok and bool(reason), "text": text, "version": wanted, "reason": reason}
            return context

        _opened, context = await self._read(request, use)
        if not context:
            raise web.HTTPNotFound(text=_NOT_FOUND)
        context["sent"] = request.query.get("sent") == "1"
        return web.Response(content_type="text/html", text=self._render("game.html", **context))

    async def board(self, request: web.Request) -> web.Response:
        version = _version(request)

        def use(uow: UnitOfWork, opened: Opened) -> str | None:
            try:
                return board(uow, opened, version)
            except LookupError:
                return None

        _opened, svg = await self._read(request, use)
        if svg is None:
            raise web.HTTPNotFound(text=_NOT_FOUND)
        return web.Response(body=svg.encode("utf-8"), content_type="image/svg+xml", charset="utf-8",
                            headers={"Content-Security-Policy": _BOARD_POLICY})

    async def explain(self, request: web.Request) -> web.Response:
        version = int(request.match_info["version"])

        def use(uow: UnitOfWork, opened: Opened) -> dict[str, Any] | None:
            try:
                return explanation(uow, self.cache, opened, version)
            except LookupError:  # no entry this reader may read at that version
                return None

        _opened, context = await self._read(request, use)
        if context is None:
            raise web.HTTPNotFound(text=_NOT_FOUND)
        return web.Response(content_type="text/html", text=self._render("explain.html", **context))

    async def verify(self, request: web.Request) -> web.Response:
        """`pbem verify` on the game's log, as far as this reader may: the chain always, the draws once the
        seed is public. Kept per chain head: the same log is not re-derived twice."""

        def use(uow: UnitOfWork, opened: Opened) -> dict[str, Any]:
            key = (opened.game_id, opened.state.version)
            if key not in self._verified:
                self._verified = {key: verify_page(uow, self.cache, opened)}  # one game's latest result
            return {**self._verified[key], "reader": opened.name}

        _opened, context = await self._read(request, use)
        return web.Response(content_type="text/html", text=self._render("verify.html", **context))

    async def export(self, request: web.Request) -> web.Response:
        """The game's log as the reader may have it, to download (`pbem export --as` him)."""

        def use(uow: UnitOfWork, opened: Opened) -> str:
            return export_text(uow, self.cache, opened, self.clock())

        opened, text = await self._read(request, use)
        return web.Response(body=text.encode("utf-8"), content_type="application/jsonl",
                            charset="utf-8", headers={
                                "Content-Disposition": f'attachment; filename="{opened.game_id}-v{opened.state.version}.jsonl"'})

    async def orders(self, request: web.Request) -> web.StreamResponse:
        """Orders from a player's form: checked to come from this server's form for this link (CSRF), then
        stored and handled exactly as the mail they stand for; the answer comes by mail."""
        form = await request.post()
        text, form_id, proof = (str(form.get(k, "")) for k in ("orders", "form_id", "proof"))
        if len(text.encode("utf-8")) > MOST_ORDER_BYTES:
            return web.Response(status=413, text="Orders of more than 64 KB are not taken; send them by mail.")

        def use(uow: UnitOfWork, opened: Opened) -> tuple[bytes, str, list[str]] | web.Response:
            if opened.player is None and opened.viewer != "moderator":
                return _refused(403, "an observer's page sends no orders")
            if not _proven(opened, form_id, proof):
                return _refused(403, _UNPROVEN)
            return orders_message(uow, self.settings, opened, text, form_id)

        _opened, made = await self._read(request, use)
        if not isinstance(made, tuple):
            return made
        if not text.strip():
            raise web.HTTPSeeOther(location="./")
        return await self._send(made)

    async def console(self, request: web.Request) -> web.StreamResponse:
        """One action of the moderator's console: the order it stands for, sent as his mail (pbem.service.console)."""
        form = await request.post()
        fields = {k: str(v) for k, v in form.items() if isinstance(v, str)}
        form_id, proof = fields.get("form_id", ""), fields.get("proof", "")

        def use(uow: UnitOfWork, opened: Opened) -> tuple[bytes, str, list[str]] | web.Response:
            if opened.viewer != "moderator":
                return _refused(403, "only the moderator's page has a console")
            if not _proven(opened, form_id, proof):
                return _refused(403, _UNPROVEN)
            try:
                line = console_order(fields.get("action", ""), fields)
            except ValueError as exc:
                return _refused(400, str(exc))
            return orders_message(uow, self.settings, opened, line, form_id)

        _opened, made = await self._read(request, use)
        return await self._send(made) if isinstance(made, tuple) else made

    async def _send(self, made: tuple[bytes, str, list[str]]) -> web.StreamResponse:
        """Hand a form's message to the mail server's door; back to the page, which says it was sent."""
        raw, sender, recipients = made
        try:
            await self.accept(raw, sender, recipients)
        except Deferred:
            return web.Response(status=503, text="Not sent: the server cannot store orders just now. Send them "
                                "again in a few minutes, or by mail.", headers={"Retry-After": "120"})
        raise web.HTTPSeeOther(location="./?sent=1")

    async def static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        types = {"web.css": "text/css", "web.js": "text/javascript"}
        if name not in types:
            raise web.HTTPNotFound(text=_NOT_FOUND)
        body = (self.folder / name).read_bytes()
        return web.Response(body=body, content_type=types[name], headers={"Cache-Control": "max-age=3600"})


_UNPROVEN = "this form was not made for this link (open the page again and send from there)"


def _proven(opened: Opened, form_id: str, proof: str) -> bool:
    """Whether a form's proof is the one this server made for this link and this form (CSRF)."""
    return len(form_id) == 32 and secrets.compare_digest(form_proof(opened, opened.key, form_id), proof)


def _refused(status: int, why: str) -> web.Response:
    return web.Response(status=status, text=f"Not sent: {why}.")


def _shown_path(request: web.Request) -> str:
    """The request's path as the log shows it: every part longer than a reader's name (a link's token, or
    anything sent in its place) cut short, so no log holds a key to a page."""
    return "/".join(part if len(part) <= 12 else part[:4] + "…" for part in request.path.split("/"))


async def start_web(pages: WebPages, host: str, port: int) -> web.AppRunner:
    """Serve ``pages`` on ``host:port`` on the running loop (the one `pbem serve` runs on); the runner, to stop."""
    runner = web.AppRunner(pages.app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    return runner


def bound_port(runner: web.AppRunner) -> int:
    """The port a runner listens on (the one the kernel chose for port 0)."""
    return runner.addresses[0][1]


def pages_beside(settings: Settings) -> Beside:
    """What `pbem serve --http` runs beside the mail: the pages, on the post office's loop, reading through an
    engine of their own (`make_reader`) and taking orders through the post office's door for mail."""
    listen = settings.http_listen
    if not listen:
        raise ValueError("no HTTP address to listen on (web.listen, or pbem serve --http HOST:PORT)")
    host, _, port = listen.rpartition(":")

    async def start(office: PostOffice) -> Callable[[], Awaitable[None]]:
        reader = make_reader(office.db.url.render_as_string(hide_password=False))
        pages = WebPages(reader, settings, office.accept_message, clock=office.clock)
        runner = await start_web(pages, host, int(port))
        log.info("serving the games' pages on %s:%s (links in letters: %s)", host, bound_port(runner),
                 settings.web_base)

        async def stop() -> None:
            await runner.cleanup()
            reader.dispose()

        return stop

    return start

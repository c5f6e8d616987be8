"""A live `pbem serve` with its pages, for tests: the post office and the web on a loop in a thread of their own.

In-process rather than a child process so that a test may set a position by
hand (tests/service/hand_set.py) and the server reads it at once; everything
a reader does still goes through real sockets: HTTP to the pages, SMTP to
the mail listener, letters read from the Maildir.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from service.hand_set import set_position
from service.test_three_player_turn_by_mail import PEOPLE, SEED, TRADE

from pbem.service.games import create_game
from pbem.service.server import PostOffice, utc_now
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.web.app import pages_beside

#: The moderator of the games these tests serve.
MODERATOR = "mod@example.org"


def free_port() -> int:
    """A port nobody listens on now: the letters' links must name the port the pages will have."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: str


class LiveSite:
    """`with LiveSite(db, settings) as site:` runs the server until the block ends."""

    def __init__(self, db, settings: Settings) -> None:
        self.settings = replace(settings, http_listen=f"127.0.0.1:{free_port()}")
        self.db = db
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.office: PostOffice | None = None
        self._stop_pages = None

    def run(self, work) -> Any:
        """Run a coroutine on the server's loop and wait for it."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout=120)

    def __enter__(self) -> "LiveSite":
        self.thread.start()

        async def start() -> None:
            self.office = PostOffice(self.db, self.settings, outbox_every=0.05)
            await self.office.start()
            self._stop_pages = await pages_beside(self.settings)(self.office)

        self.run(start())
        return self

    def __exit__(self, *exc: object) -> None:
        async def stop() -> None:
            if self._stop_pages is not None:
                await self._stop_pages()
            if self.office is not None:
                await self.office.stop()

        try:
            self.run(stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)

    @property
    def smtp_port(self) -> int:
        return self.office.port

    @property
    def base(self) -> str:
        return self.settings.web_base

    def idle(self) -> None:
        """Wait until every message taken is handled and the outbox is empty."""
        self.run(self.office.idle())

    def get(self, url: str) -> Answer:
        return self._open(urllib.request.Request(url))

    def post(self, url: str, fields: dict[str, str]) -> Answer:
        data = urllib.parse.urlencode(fields).encode("ascii")
        return self._open(urllib.request.Request(url, data=data, method="POST"))

    def _open(self, request: urllib.request.Request) -> Answer:
        opener = urllib.request.build_opener(_NoRedirect())
        try:
            with opener.open(request, timeout=30) as response:
                return Answer(response.status, dict(response.headers), response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            return Answer(error.code, dict(error.headers), error.read().decode("utf-8"))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A 303 is an answer to look at, not to follow."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


@contextmanager
def served_game(db, settings: Settings, *, trading: bool) -> Iterator[LiveSite]:
    """A live server with its pages and game g1 of tests/service/test_three_player_turn_by_mail.py, just
    created (one player asked to place his start token) or, with ``trading``, set at its phase 7 (Ann and Ben
    asked to trade; a hand-set position, whose log a page's history cannot fold past its calamities)."""
    with LiveSite(db, settings) as site:
        create_game(db, site.settings, "g1", PEOPLE, seed=SEED, moderator_email=MODERATOR, now=utc_now())
        site.idle()
        if trading:
            set_position(db, site.settings, TRADE, SEED, utc_now())
            site.idle()
        yield site


@contextmanager
def sqlite_world(sqlite_url: str, tmp_path: Path) -> Iterator[tuple[object, Settings]]:
    """(engine, settings) on a fresh SQLite file, mail into a Maildir, as tests/service's ``world`` gives them."""
    settings = replace(Settings(), db_url=sqlite_url, maildir=tmp_path / "mail", listen_port=0,
                       board_pictures=False, gather_minutes=0)
    db = make_engine(sqlite_url)
    ensure_schema(db)
    try:
        yield db, settings
    finally:
        db.dispose()


__all__ = ["Answer", "LiveSite", "MODERATOR", "free_port", "served_game", "sqlite_world"]

"""What every `pbem` command shares: the settings in force, the database (opened on first use), failing in one line."""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone
from typing import NoReturn

import click

from pbem.service.settings import load_settings
from pbem.store.database import check_writable, ensure_schema, make_engine

from .output import say


def now() -> datetime:
    return datetime.now(timezone.utc)


class Context:
    """The settings (defaults, the config file, PBEM_* variables, then --db) and the database, opened when needed."""

    def __init__(self, config: str | None, db_url: str | None) -> None:
        self.settings, self.sources = load_settings(config, os.environ, {"db_url": db_url})
        self._db = None

    @property
    def db(self):
        """The database, upgraded and checked writable: a read-only one is named at once, in one line."""
        if self._db is None:
            db = make_engine(self.settings.db_url)
            ensure_schema(db)
            check_writable(db)
            self._db = db
        return self._db

    def close(self) -> None:
        """Close the database's connections when the command ends (a SQLite engine keeps its writer's open)."""
        if self._db is not None:
            self._db.dispose()
            self._db = None


pass_ctx = click.make_pass_decorator(Context)

#: Every command that shows a game takes its viewer the same way (docs/audit.md).
viewer_option = click.option(
    "--as", "viewer", default="observer", show_default=True,
    help="Whose view: NATION (or player:NATION, or the player's name), observer, moderator or auditor.",
)


def transport(ctx: Context):
    """The relay if one is configured, else the local Maildir (created on first use)."""
    from pbem.mail.outbound import transport_from_config

    if not ctx.settings.relay_url:
        ctx.settings.maildir.mkdir(parents=True, exist_ok=True)
    return transport_from_config(ctx.settings.relay_url, ctx.settings.maildir)


def fail(message: str, code: int = 2) -> NoReturn:
    """One line on standard error and an exit status: what an operator reads instead of a traceback."""
    say(f"pbem: {message}", err=True)
    sys.exit(code)

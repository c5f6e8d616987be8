"""What an operator's mistake looks like: one line and exit status 2, never a traceback.

A wrong setting, a database URL that cannot be opened, a folder that does not
exist, a corrupt database file, a full disk: each is turned into a sentence
that says what is wrong and where. Anything else is a fault of pbem's own:
one line and exit status 1, the traceback only with PBEM_DEBUG=1.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import traceback

import click
from sqlalchemy import exc as sa

from pbem.rules.ruleset.model import RulesetError
from pbem.service.batch import GameError
from pbem.service.projector import DamagedLog
from pbem.service.settings import SettingsError, mask
from pbem.store.faults import storage_fault

from .output import say, say_lines


def _database(error: Exception) -> str:
    text = str(getattr(error, "orig", None) or error).strip().splitlines()[0]
    low = text.lower()
    if "unable to open database file" in low:
        return "cannot open the database file: its folder does not exist or is not writable"
    if "file is not a database" in low or "database disk image is malformed" in low:
        return "the database file is damaged or is not a pbem database (restore it from a backup)"
    if "database or disk is full" in low or "no space left" in low:
        return "the disk is full: nothing was written; free some space and try again"
    if "disk i/o error" in low:
        return "the database could not be written: the disk is full or failing (disk I/O error); nothing was written"
    if "readonly database" in low or "read-only" in low:
        return "the database is read-only for this user"
    if "connection" in low or "could not translate host" in low or "timeout" in low or "refused" in low:
        return f"cannot reach the database server: {mask(text)}"
    return f"database error: {mask(text)}"


def explain(error: Exception, db_url: str | None = None) -> tuple[str, int] | None:
    """(the one line, the exit status) for an error an operator can cause; None for a fault of pbem's own.

    A full disk or a read-only database (file, folder or mount) is named with
    the database file (``db_url``) and what to do about it."""
    fault = storage_fault(error, db_url)
    if fault is not None:
        return str(fault), 2
    if isinstance(error, (SettingsError, GameError, DamagedLog)):
        return str(error), 2
    if isinstance(error, RulesetError):  # a house copy of the rules data (option ruleset-data) that does not load
        return f"the rules data does not load: {error}", 2
    if isinstance(error, sa.ArgumentError):
        return f"bad database URL: {error}", 2
    if isinstance(error, (sa.OperationalError, sa.DatabaseError, sqlite3.DatabaseError)):
        return _database(error), 2
    if isinstance(error, ModuleNotFoundError) and error.name in ("psycopg", "psycopg2"):
        return f"the database URL needs the {error.name} driver, which is not installed", 2
    if isinstance(error, OSError):
        if error.errno == errno.ENOSPC:
            return "the disk is full: nothing was written; free some space and try again", 2
        where = f": {error.filename}" if error.filename else ""
        return f"{error.strerror or error}{where}", 2
    return None


def _db_url(ctx: click.Context) -> str | None:
    """The database URL in force, when the settings could be read (the Context object of `pbem.cli`)."""
    settings = getattr(ctx.obj, "settings", None)
    return getattr(settings, "db_url", None)


class Pbem(click.Group):
    """The `pbem` group: runs a command and turns the errors an operator can cause into one line."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError:  # `pbem queue | head`: the reader has gone, nothing to say
            ctx.exit(1)
        except Exception as error:  # noqa: BLE001 - the one place every error of a command ends
            known = explain(error, _db_url(ctx))
            if known is not None:
                say(f"pbem: {known[0]}", err=True)
                ctx.exit(known[1])
            if os.environ.get("PBEM_DEBUG"):
                say_lines(traceback.format_exc().splitlines(), err=True)  # an exception's text may hold a player's
            say(f"pbem: internal error: {type(error).__name__}: {error} (PBEM_DEBUG=1 shows where)", err=True)
            ctx.exit(1)

"""The `pbem` command's first step: `pbem ingest` into a running server's spool, or the whole CLI.

`pbem ingest` behind an MTA's pipe is started once per message, so its
start-up is the cost of every message. When a `pbem serve` runs on the same
SQLite file, this module hands the message to it through the spool
(`pbem.spool`) using the standard library, the settings reader and nothing
else: no click, no SQLAlchemy, no rules engine. In every other case,
including any argument it does not expect, it loads the CLI (`pbem.cli`) and
lets it do the work; the CLI's own `ingest` then does the whole job and takes
in anything a server left in the spool before it died.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from pbem.service.settings import SettingsError, load_settings
from pbem.spool import spool_of

EX_TEMPFAIL = 75  # sysexits.h: the MTA keeps the message and tries again


def _ingest_arguments(argv: Sequence[str]) -> tuple[str | None, str | None, str | None, list[str]] | None:
    """``(config, db, from, to)`` of ``[--config F] [--db URL] ingest [--from A] [--to R]...``; None otherwise."""
    config = db = mail_from = None
    rcpt: list[str] = []
    args = list(argv)
    seen_command = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "ingest" and not seen_command:
            seen_command = True
            i += 1
            continue
        name, eq, value = arg.partition("=")
        allowed = ("--from", "--to") if seen_command else ("--config", "--db")
        if name not in allowed:
            return None
        if not eq:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 1
        if name == "--config":
            config = value
        elif name == "--db":
            db = value
        elif name == "--from":
            mail_from = value
        else:
            rcpt.append(value)
        i += 1
    return (config, db, mail_from, rcpt) if seen_command else None


def spool_if_served(argv: Sequence[str]) -> str | None:
    """Spool the message on standard input if this is `pbem ingest` and a server runs; what to print, else None."""
    parsed = _ingest_arguments(argv)
    if parsed is None:
        return None
    config, db, mail_from, rcpt = parsed
    try:
        settings, _ = load_settings(config, os.environ, {"db_url": db})
    except SettingsError:
        return None  # the CLI says what is wrong with the settings, in its own words
    spool = spool_of(settings.db_url)
    if spool is None or not spool.server_running():
        return None
    raw = sys.stdin.buffer.read()
    envelope_from = "" if mail_from is None else (mail_from.strip() or "<>")
    spool.put(raw, envelope_from, rcpt)
    return "spooled: pbem serve takes it from here"


def main() -> None:
    try:
        said = spool_if_served(sys.argv[1:])
    except OSError as error:  # a full disk, a spool it may not write: the MTA keeps the message and retries
        print(f"pbem: cannot spool the message: {error} (the MTA keeps it and retries)", file=sys.stderr)
        sys.exit(EX_TEMPFAIL)
    if said is not None:
        print(said)
        return
    # Loaded here, not at the top: the whole CLI is what the fast path above exists to avoid (this is not
    # an import loop being hidden; pbem.cli never imports this module).
    from pbem.cli import main as cli_main

    cli_main()

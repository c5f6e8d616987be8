"""Messages `pbem ingest` left in the spool (`pbem.spool`): into the inbox, then processed as any other.

A spooled message is accepted into the inbox (committed) before its spool
file is deleted, so a crash in between leaves the file, and accepting it
again finds the inbox row by its Message-ID: it is handled once.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine

from pbem.spool import Spool

from .inbound import Outcome, accept, process
from .settings import Settings


def take_spooled(db: Engine, spool: Spool, now: datetime) -> list[int]:
    """Accept every spooled message into the inbox, oldest first; the inbox ids of those not seen before."""
    new_ids = []
    for spooled in spool.waiting():
        inbox_id, new = accept(db, spooled.raw, spooled.mail_from, spooled.rcpt_tos, now)
        spool.done(spooled)
        if new:
            new_ids.append(inbox_id)
    return new_ids


def handle_spooled(db: Engine, settings: Settings, spool: Spool, now: datetime) -> list[Outcome]:
    """Take in and process what the spool holds (`pbem ingest` when no server runs: one that died left it)."""
    return [process(db, settings, inbox_id, now) for inbox_id in take_spooled(db, spool, now)]

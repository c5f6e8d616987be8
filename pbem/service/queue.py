"""`pbem queue`: mail that waits, in and out, and what an operator may do with one, as `postqueue` does.

Inbound messages that failed (a fault of pbem's own while handling them) or
still wait; outbound letters not yet delivered, with the last error of the
relay. The operator retries one (a message is handled again; a letter goes
at the next flush, even one the sender gave up on) or drops it (kept on
record, never handled or sent). Each is named `in:<id>` or `out:<id>`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine

from pbem.store.unit_of_work import UnitOfWork

from .batch import GameError
from .inbound import Outcome, process
from .settings import Settings


@dataclass(frozen=True)
class Waiting:
    """One line of `pbem queue`."""

    key: str  # in:<id> or out:<id>
    when: datetime
    who: str  # the envelope sender of a message, the recipient of a letter
    game: str | None
    state: str  # received, failed, or the letter's attempts and next try
    error: str | None

    def line(self) -> str:
        when = self.when.strftime("%Y-%m-%d %H:%M")
        error = f"  ({self.error})" if self.error else ""
        return f"{self.key:<10} {when}  {self.game or '-':<12} {self.who:<32} {self.state}{error}"


def waiting(db: Engine) -> list[Waiting]:
    """Every inbound message that failed or waits, then every letter not yet delivered."""
    with UnitOfWork(db) as uow:
        inbound = [
            Waiting(f"in:{r.id}", r.received_at, r.envelope_from or "<>", r.game_id, r.status, r.error)
            for r in uow.inbox.waiting()
        ]
        outbound = [
            Waiting(f"out:{r.id}", r.created_at, r.recipient, r.game_id,
                    f"{r.attempts} attempts, next {r.next_attempt_at:%Y-%m-%d %H:%M}" if r.attempts else "not tried yet",
                    r.last_error)
            for r in uow.outbox.undelivered()
        ]
    return inbound + outbound


def _parse(key: str) -> tuple[str, int]:
    kind, _, number = key.strip().partition(":")
    if kind not in ("in", "out") or not number.isdigit():
        raise GameError(f"name a message in:<id> or a letter out:<id> as `pbem queue` lists them, not {key!r}")
    return kind, int(number)


def _waiting_row(uow: UnitOfWork, kind: str, number: int, key: str):
    """The undelivered letter or the waiting/failed message ``key`` names, or a GameError saying there is none."""
    if kind == "out":
        row = uow.outbox.get(number)
        if row is None or row.sent_at is not None:
            raise GameError(f"{key}: no undelivered letter with that number")
        return row
    row = uow.inbox.get(number)
    if row is None or row.status not in ("received", "failed"):
        raise GameError(f"{key}: no waiting or failed message with that number")
    return row


def retry(db: Engine, settings: Settings, key: str, now: datetime) -> str:
    """Handle a message again, or send a letter at the next flush; what happened, in one line."""
    kind, number = _parse(key)
    with UnitOfWork(db) as uow:
        _waiting_row(uow, kind, number, key)
        if kind == "out":
            uow.outbox.retry_now(number, now)
            return f"{key}: goes at the next flush (`pbem flush`, or within a second under `pbem serve`)"
        uow.inbox.mark(number, "received", now=now)
    outcome: Outcome = process(db, settings, number, now)
    return f"{key}: {outcome.status}: {outcome.detail}"


def drop(db: Engine, key: str, now: datetime) -> str:
    """Never handle this message, or never send this letter; it stays on record."""
    kind, number = _parse(key)
    with UnitOfWork(db) as uow:
        _waiting_row(uow, kind, number, key)
        if kind == "out":
            uow.outbox.drop(number, now)
            return f"{key}: dropped; it stays on record and is never sent"
        uow.inbox.mark(number, "rejected", error="dropped by the operator", now=now)
        return f"{key}: dropped; it stays on record and is never handled"

"""The flood limit: past ``flood_limit`` messages from one sender within ``flood_window`` seconds, mail is set aside.

A message is set aside when at least ``flood_limit`` messages from the same
sender came in the ``flood_window`` seconds before it (the ones set aside
count too, so a loop that keeps sending stays set aside until it stops). The
sender is the seat of a genuine reply address, else the envelope sender
(pbem.service.senders): a flood forged in a player's name never sets his
replies aside.
A message set aside is stored like any other (the SMTP answer is 250) and
kept in the inbox, marked ``rejected`` with an error beginning "set aside";
nothing in it is acted on and it is not answered one by one. Instead the
sender, if it is a player's or a moderator's address of record, gets one
letter when a flood begins ("Slow down"), saying that mail from it is read
again once it slows down, and to send again what mattered. The null sender
(bounces, auto-replies) is never set aside. ``flood_limit = 0`` turns it off.

`Admissions` decides, message by message, whether each is urgent (its sender
is not sending in bulk, pbem.service.fairness) and whether it is set aside;
`set_aside` records the decision; `backlog` rebuilds the decisions for the
messages a stopped server left stored and not handled, `jobs_for` makes
them for the messages taken in from `pbem ingest`'s spool.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Engine, select

from pbem.mail.render import make_message_id
from pbem.store.schema import inbox
from pbem.store.unit_of_work import UnitOfWork

from . import telemetry
from .batch import letters_for, retrying
from .fairness import BURST, BURST_SECONDS, NULL_SENDER, Job, SenderLog, sender_key
from .senders import Senders
from .settings import Settings

#: How the error of a message set aside begins (the inbox keeps it, marked rejected).
SET_ASIDE = "set aside"
TITLE = "Slow down: your messages are set aside"


@dataclass(frozen=True)
class Admission:
    urgent: bool
    set_aside: bool
    opens: bool  # the first message set aside since this sender's mail was last read


class Admissions:
    """Each new message's place: urgent or bulk, read or set aside. Thread-safe; times are steady-clock seconds."""

    def __init__(self, limit: int, window: float) -> None:
        self.limit, self.window = limit, window
        self._log = SenderLog(keep=max(limit, BURST), memory=window)
        self._flooding: set[str] = set()
        self._lock = threading.Lock()

    def decide(self, key: str, now: float) -> Admission:
        """What a message from ``key`` coming at ``now`` would be (nothing is recorded)."""
        with self._lock:
            return self._decide(key, now)

    def _decide(self, key: str, now: float) -> Admission:
        over = self.limit > 0 and key != NULL_SENDER and self._log.at_least(key, self.limit, now - self.window)
        urgent = not over and self._log.urgent(key, now)
        return Admission(urgent, over, over and key not in self._flooding)

    def record(self, key: str, now: float, set_aside: bool) -> None:
        """A message from ``key`` came at ``now`` (and was set aside or not)."""
        with self._lock:
            self._record(key, now, set_aside)

    def _record(self, key: str, now: float, set_aside: bool) -> None:
        self._log.record(key, now)
        if set_aside:
            self._flooding.add(key)
        else:
            self._flooding.discard(key)
        if len(self._flooding) > 1000:
            self._flooding &= {k for k in self._flooding if k in self._log}

    def admit(self, key: str, now: float) -> Admission:
        """Decide and record at once."""
        with self._lock:
            admission = self._decide(key, now)
            self._record(key, now, admission.set_aside)
            return admission

    def reason(self, sender: str) -> str:
        return (f"{SET_ASIDE}: more than {self.limit} messages from {sender or NULL_SENDER} within "
                f"{_span(self.window)} (mail.flood_limit); kept, not acted on, its sender told once")


def _span(seconds: float) -> str:
    return f"{seconds / 60:g} minutes" if seconds >= 120 else f"{seconds:g} seconds"


def job_for(key: str, inbox_id: int, admission: Admission, held: bool = False) -> Job:
    return Job(key, inbox_id, admission.urgent, admission.set_aside, admission.opens, held)


def set_aside(db: Engine, settings: Settings, admissions: Admissions, jobs: list[Job], now: datetime) -> int:
    """Mark the messages of ``jobs`` (one sender's, set aside) rejected with the reason, in one transaction;
    tell the sender once if a job opens a flood. Messages no longer waiting are left as they are. How many."""

    def work(uow: UnitOfWork) -> list[tuple[str, str]]:
        marked = []
        for job in jobs:
            row = uow.inbox.get(job.item, lock=True)
            if row is None or row.status != "received":
                continue
            reason = admissions.reason(row.envelope_from)
            uow.inbox.mark(job.item, "rejected", error=reason, now=now)
            marked.append((row.message_id, reason))
            if job.opens:
                _tell(uow, settings, admissions, row, now)
        return marked

    marked = retrying(db, work)
    for message_id, reason in marked:
        telemetry.mail_in(message_id, None, "rejected", reason, 0)
    return len(marked)


def _tell(uow: UnitOfWork, settings: Settings, admissions: Admissions, row, now: datetime) -> None:
    """One "Slow down" letter to the sender, if it is an address of record, in the game the message was for."""
    sender = sender_key(row.envelope_from)
    games = [g for g in uow.games.list() if g.moderator_email == sender or uow.players.by_email(g.game_id, sender)]
    if not games:
        return  # a stranger (or a forged sender) is never written to
    addressed = {_game_part(a, settings.local_part) for a in (row.envelope_to or [])}
    game = next((g for g in games if g.game_id in addressed), games[0])
    purpose = f"flood:{row.id}"
    if uow.outbox.by_message_id(make_message_id(f"notice:{purpose}:{sender}", settings.domain)) is not None:
        return
    span = _span(admissions.window)
    lines = [
        f"More than {admissions.limit} messages came from {sender} within {span}, more than anyone writes by "
        f"hand. The server keeps them, but reads none of them until they slow down.",
        f"The one received at {row.received_at:%Y-%m-%d %H:%M:%S} UTC and every one after it, while they keep "
        "coming this fast, are set aside: nothing in them was done, and they get no answer each.",
        f"Mail from this address is read again once fewer than {admissions.limit} of its messages came in the "
        f"last {span}. If one of those set aside mattered, send it again then.",
        "If you did not send them, your mail program may be sending in a loop, or someone is using your "
        "address. The server's operator keeps every one of them.",
    ]
    letters_for(uow, settings, game, now).notice(sender, game.game_id, TITLE, lines, purpose)


def _game_part(address: str, local: str) -> str:
    """The game named by a pbem+<game>[.<player>.<token>]@domain address ('' for any other)."""
    user = address.strip().strip("<>").rpartition("@")[0].lower()
    prefix = f"{local.lower()}+"
    return user[len(prefix):].split(".", 1)[0] if user.startswith(prefix) else ""


_COLUMNS = (inbox.c.id, inbox.c.envelope_from, inbox.c.envelope_to, inbox.c.received_at, inbox.c.status, inbox.c.error)


def backlog(db: Engine, admissions: Admissions, senders: Senders, clock_now: datetime, steady_now: float) -> list[Job]:
    """Jobs for every message stored and not handled, oldest first, each decided as it was when it came.

    The messages handled in the flood window before them are recorded first (a restart in a flood goes on
    setting it aside, and does not tell its sender again); a message's time is ``steady_now`` less its age.
    """
    with UnitOfWork(db) as uow:
        waiting = list(uow.connection.execute(select(*_COLUMNS).where(inbox.c.status == "received").order_by(inbox.c.id)))
        if not waiting:
            return []
        since = min(r.received_at for r in waiting) - timedelta(seconds=max(admissions.window, BURST_SECONDS))
        handled = list(uow.connection.execute(
            select(*_COLUMNS).where(inbox.c.status != "received").where(inbox.c.received_at > since)
            .where(inbox.c.id < waiting[-1].id).order_by(inbox.c.id)
        ))
    return _admit(admissions, senders, sorted(waiting + handled, key=lambda r: r.id), clock_now, steady_now)


def jobs_for(db: Engine, admissions: Admissions, senders: Senders, ids: list[int], clock_now: datetime,
             steady_now: float) -> list[Job]:
    """Jobs for these stored messages (taken in from `pbem ingest`'s spool), oldest first, decided as they came."""
    with UnitOfWork(db) as uow:
        rows = list(uow.connection.execute(select(*_COLUMNS).where(inbox.c.id.in_(ids)).order_by(inbox.c.id)))
    return _admit(admissions, senders, rows, clock_now, steady_now)


def _admit(admissions: Admissions, senders: Senders, rows: list, clock_now: datetime, steady_now: float) -> list[Job]:
    """Decide each row as it was when it came; called with no unit of work open (``senders`` may read)."""
    jobs = []
    for row in rows:
        key = senders.key(row.envelope_from, row.envelope_to)
        at = steady_now - max(0.0, (clock_now - row.received_at).total_seconds())
        if row.status == "received":
            jobs.append(job_for(key, row.id, admissions.admit(key, at)))
        else:
            admissions.record(key, at, row.status == "rejected" and (row.error or "").startswith(SET_ASIDE))
    return jobs

"""What the server does, one line per message in and per letter out, for the operator's log.

Each line is `key=value` pairs (logfmt), so `journalctl -u pbem | grep game=g1`
or any log tool reads it: which message, which game and player, what became
of it, how long it took. Under systemd (``JOURNAL_STREAM`` is set) the lines
go to the journal without a timestamp of their own, which the journal adds.
"""

from __future__ import annotations

import logging
import os
import sys

log = logging.getLogger("pbem.mail")


def _value(value: object) -> str:
    text = "-" if value is None or value == "" else str(value)
    if any(c in text for c in ' "=') or not text.isprintable():
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"')[:200] + '"'
    return text


def line(direction: str, **fields: object) -> str:
    """``in id=... game=g1 outcome=done ms=12``: one message or letter as the log shows it."""
    return " ".join([direction, *(f"{key}={_value(value)}" for key, value in fields.items())])


def mail_in(message_id: str, game: str | None, outcome: str, detail: str, ms: float) -> None:
    log.info(line("in", id=message_id, game=game, outcome=outcome, detail=detail, ms=round(ms)))


def mail_out(outbox_id: int, message_id: str, game: str | None, recipient: str, outcome: str, ms: float, error: str = "") -> None:
    log.info(line("out", id=outbox_id, message_id=message_id, game=game, to=recipient, outcome=outcome,
                  ms=round(ms), error=error or None))


def log_to_journal_or_stderr(level: int = logging.INFO) -> None:
    """Log to standard error; under systemd that is the journal, which stamps the time itself."""
    fmt = "%(name)s %(message)s" if os.environ.get("JOURNAL_STREAM") else "%(asctime)s %(name)s %(message)s"
    logging.basicConfig(level=level, format=fmt, stream=sys.stderr)
    for chatty in ("mail.log", "alembic"):  # aiosmtpd's session chatter, alembic's plugin set-up: not the operator's
        logging.getLogger(chatty).setLevel(logging.WARNING)

"""What the server does, one line per message in and per letter out, for the operator's log.

Each line is `key=value` pairs (logfmt), so `journalctl -u pbem | grep game=g1`
or any log tool reads it: which message, which game and player, what became
of it, how long it took. Under systemd (``JOURNAL_STREAM`` is set) the lines
go to the journal without a timestamp of their own, which the journal adds.

Those lines carry what strangers wrote (a Message-ID, a From address, a
subject): `EscapingFormatter` writes out every control character in every
record the server logs, its own and its libraries', so no record can move
an operator's cursor or pass for two lines (docs/mail.md).
"""

from __future__ import annotations

import logging
import os
import sys

from pbem.escaping import escape_controls

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


class EscapingFormatter(logging.Formatter):
    """Each record on one line with its control characters written out (``\\x1b``, ``\\n``); a traceback
    keeps its lines, each escaped.

    The whole line is escaped, once, here: a value of a telemetry line is
    quoted as logfmt first (``"a \\"b\\""``), then shown. A formatter, not the
    places that log, because any record may hold a stranger's text, those
    of aiosmtpd and asyncio too.
    """

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        return escape_controls(super().formatMessage(record), one_line=True)

    def formatException(self, ei) -> str:  # noqa: N802 (logging's name)
        return escape_controls(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:  # noqa: N802 (logging's name)
        return escape_controls(super().formatStack(stack_info))


def log_to_journal_or_stderr(level: int = logging.INFO) -> None:
    """Log to standard error; under systemd that is the journal, which stamps the time itself."""
    fmt = "%(name)s %(message)s" if os.environ.get("JOURNAL_STREAM") else "%(asctime)s %(name)s %(message)s"
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(EscapingFormatter(fmt))
    logging.basicConfig(level=level, handlers=[handler])
    for chatty in ("mail.log", "alembic"):  # aiosmtpd's session chatter, alembic's plugin set-up: not the operator's
        logging.getLogger(chatty).setLevel(logging.WARNING)

"""Header fields cut down to a size the standard parser reads quickly, before it reads them.

Python's header parser takes time that grows with the square of a field's
length when the field is full of comments, quoted strings or encoded words:
a 16 kB ``Content-Type`` took ten seconds, a 64 kB ``To`` forty, a 200 kB
field of encoded words three. No mail client
writes such fields; a hostile or broken sender can, and one such message
must not hold up everyone else's. So, before parsing, every header field
(in the message's header and in its MIME parts' headers) longer than
`MAX_FIELD` is rewritten to what the server needs of it:

* an address field keeps the addresses found in it, as a plain list;
* a ``Content-*`` field keeps its value's first word and the
  ``boundary``, ``charset``, ``format``, ``delsp`` and ``name`` parameters;
* ``References`` keeps its newest identifiers (its end), any other field
  its first `MAX_FIELD` octets, cut at a space;
* a field with nothing left is renamed ``X-Pbem-Dropped``.

"""

from __future__ import annotations

import re
import time

__all__ = ["MAX_FIELD", "UNBOUNDED", "ReadingTime", "TooLongToRead", "tame_header_fields"]

#: Octets a header field may take, folded lines included, before it is rewritten: RFC 5322's
#: limit for one line. A longer field is rare (a To of many recipients, a long References)
#: and loses nothing the server reads; at this size even a field of comments parses in
#: milliseconds, though the parser reads a field again each time it is asked for it.
MAX_FIELD = 998
#: Addresses kept from an oversized address field.
MAX_ADDRESSES = 100

_FIELD = re.compile(rb"(?m)^([A-Za-z][A-Za-z0-9-]{0,75})[ \t]*:[^\r\n]*(?:\r?\n[ \t][^\r\n]*)*")
_ADDRESS = re.compile(rb"[A-Za-z0-9._%+=\-!#$&'*/?^`{|}~]{1,64}@[A-Za-z0-9.\-]{1,253}")
_PARAM = re.compile(rb'(?i)\b(boundary|charset|format|delsp|name|filename|report-type)\s*=\s*("[^"\r\n]{0,200}"|[^\s;()"]{1,200})')
_FIRST_WORD = re.compile(rb"^\s*([A-Za-z0-9!#$&^_.+\-/]{1,100})")

_ADDRESS_FIELDS = {b"from", b"sender", b"reply-to", b"to", b"cc", b"bcc", b"resent-from", b"resent-to", b"resent-cc"}


def _rewrite(name: bytes, value: bytes) -> bytes | None:
    lower = name.lower()
    if lower in _ADDRESS_FIELDS:
        found = list(dict.fromkeys(_ADDRESS.findall(value)))[:MAX_ADDRESSES]
        return b", ".join(found) if found else None
    if lower.startswith(b"content-"):
        first = _FIRST_WORD.match(value)
        params = [m.group(1) + b"=" + m.group(2) for m in _PARAM.finditer(value)]
        if first is None:
            return None
        return b"; ".join([first.group(1), *params[:6]])
    if lower == b"references":
        return value[-MAX_FIELD:].split(None, 1)[-1] if value.strip() else None
    cut = value[:MAX_FIELD]
    space = cut.rfind(b" ", MAX_FIELD // 2)
    return (cut[:space] if space > 0 else cut).strip() or None


def tame_header_fields(raw: bytes) -> tuple[bytes, int]:
    """``raw`` with every oversized header field rewritten (see the module); and how many were."""
    if len(raw) <= MAX_FIELD:
        return raw, 0
    out: list[bytes] = []
    last = 0
    changed = 0
    for match in _FIELD.finditer(raw):
        if match.end() - match.start() <= MAX_FIELD:
            continue
        name = match.group(1)
        value = raw[match.start() + len(name) + 1 : match.end()]
        value = re.sub(rb"\r?\n[ \t]", b" ", value)
        new = _rewrite(name, value)
        out.append(raw[last : match.start()])
        if new is not None:
            out.append(name + b": " + new)
        else:
            out.append(b"X-Pbem-Dropped: " + name[:76])
        last = match.end()
        changed += 1
    if not changed:
        return raw, 0
    out.append(raw[last:])
    return b"".join(out), changed


class TooLongToRead(Exception):
    """Reading one message took longer than the server allows (`ReadingTime`)."""


class ReadingTime:
    """How long reading one message may take: a bound, checked between the steps of reading it.

    Every step is linear in the message (docs/mail.md, the pattern audit), so a megabyte reads in well under
    a second; the bound is what stops a step nobody foresaw from holding a worker for minutes. The reader
    asks `check` between steps and every few thousand lines; over the bound the message is answered as
    unreadable and kept (pbem.service.inbound).
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._until = None if seconds is None else time.monotonic() + seconds

    def check(self) -> None:
        if self._until is not None and time.monotonic() > self._until:
            raise TooLongToRead(f"reading it took longer than {self.seconds:g} s")


#: A `ReadingTime` without a bound: the default for callers that read text they trust (tests, the CLI's own).
UNBOUNDED = ReadingTime(None)


#: Lines of a message read at most. A megabyte of base64 is 13,500 lines and no one writes more than a few
#: hundred; but every reader of a message (the standard parser first) spends its time per line, and a
#: megabyte of blank lines is a million of them.
MAX_LINES = 30_000

#: Three or more blank lines (blanks and tabs on them allowed), from a line start: read once each.
_BLANK_RUN = re.compile(rb"(?m)^(?:[ \t]*\r?\n){3,}")


def bound_lines(raw: bytes) -> tuple[bytes, str | None]:
    """``raw`` cut to `MAX_LINES` lines, after its runs of blank lines are made two; and what to tell the sender.

    Only a message of more lines than any mail client writes is touched: its runs of blank lines
    first (so orders below a megabyte of them are still read), then whatever is past the limit.
    """
    lines = raw.count(b"\n")
    if lines <= MAX_LINES:
        return raw, None
    raw = _BLANK_RUN.sub(b"\r\n\r\n", raw)
    if raw.count(b"\n") <= MAX_LINES:
        return raw, None
    cut = 0
    for _ in range(MAX_LINES):
        cut = raw.index(b"\n", cut) + 1
    return raw[:cut], (f"Your message has {lines:,} lines; only the first {MAX_LINES:,} were read. "
                       "Send orders as a short plain-text message.")

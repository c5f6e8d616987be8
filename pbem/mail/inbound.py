"""Inbound mail: raw RFC 5322 bytes -> the order text a player meant to send.

`parse_message` never trusts the message: headers may be malformed, charsets
may be wrong or unknown, the body may be HTML only, quoted replies and
signatures surround the orders.  Everything that can be recovered is
recovered; what was lost is described in `InboundMail.problems` so the
acknowledgement can tell the player.  Only three things refuse a message
outright (`MailRejected`): it is too big, it is not a message at all, or it
has no From address to attribute it to.
"""

from __future__ import annotations

import email.header
import email.message
import email.policy
import email.utils
import hashlib
import re
from dataclasses import dataclass, field
from email.parser import BytesHeaderParser, BytesParser

from pbem.mail.automatic import Automatic, recognise
from pbem.mail.charsets import decode_bytes
from pbem.mail.html_text import html_to_text
from pbem.mail.limits import UNBOUNDED, ReadingTime, TooLongToRead, bound_lines, tame_header_fields
from pbem.mail.order_text import UnmarkedQuote, read_reply
from pbem.mail.policies import DEFAULT as DEFAULT_POLICY

__all__ = ["InboundMail", "MailRejected", "human_size", "parse_message"]

# Markers delimiting the ready-to-edit order block at the end of every prompt.
# When a reply still carries them, only the lines between them are orders.


class MailRejected(Exception):
    """The message cannot be accepted at all; `reason` is written for the sender."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class InboundMail:
    message_id: str
    from_addr: str
    from_name: str
    reply_to: str | None
    to_addrs: list[str]
    subject: str
    in_reply_to: str | None
    references: list[str]
    body: str
    problems: tuple[str, ...] = field(default=())
    senders: int = 1  # mailboxes the From header names: anything but one cannot prove who sent it
    automatic: Automatic | None = None  # an auto-reply or a bounce: never played, never answered
    quoted: tuple[str, ...] = ()  # the quoted lines, marks taken off (see order_text.Reply)
    unmarked: UnmarkedQuote | None = None  # an unmarked quote, to be read against the letter it copies
    date: str = ""  # the Date header as the sender's client wrote it: what a dispute quotes back to him


# --------------------------------------------------------------------------
# sizes

def human_size(n: int) -> str:
    """1_000_000 -> '1 MB', 2_345_678 -> '2.3 MB', 12_345 -> '12 kB'."""
    if n >= 1_000_000:
        text = f"{n / 1_000_000:.1f}"
        if text.endswith(".0"):
            text = text[:-2]
        return f"{text} MB"
    if n >= 1_000:
        return f"{round(n / 1_000)} kB"
    return f"{n} bytes"


# --------------------------------------------------------------------------
# headers (robust to malformed ones)

_MSGID_RE = re.compile(r"<([^<>\s]*)>")


class _Headers:
    """Header access through the modern policy, falling back to compat32."""

    def __init__(self, raw: bytes, msg: email.message.Message) -> None:
        self._raw = raw
        self._msg = msg
        self._compat: email.message.Message | None = None

    @property
    def compat(self) -> email.message.Message:
        if self._compat is None:
            try:
                self._compat = BytesParser(policy=email.policy.compat32).parsebytes(self._raw)
            except RecursionError:  # nested too deeply: its headers are all that can be read
                self._compat = BytesHeaderParser(policy=email.policy.compat32).parsebytes(self._raw)
        return self._compat

    def text(self, name: str) -> str | None:
        """The decoded, unfolded value of the first `name` header, or None."""
        raw = self.raw_text(name)
        if raw is not None and _has_8bit(raw):
            # Unencoded 8-bit header (not allowed, but common): decode it ourselves.
            return _fix_text(_unfold(_decode_rfc2047(_fix_8bit(raw))))
        try:
            value = self._msg[name]
            if value is None:
                return None
            return _fix_text(_unfold(str(value)))
        except Exception:
            pass
        if raw is None:
            return None
        return _fix_text(_unfold(_decode_rfc2047(raw)))

    def raw_text(self, name: str) -> str | None:
        """The undecoded, unfolded value (8-bit bytes kept as surrogates)."""
        wanted = name.lower()
        try:
            for key, value in self.compat.raw_items():
                if key.lower() == wanted:
                    return _unfold(str(value))
        except Exception:
            return None
        return None

    def addresses(self, name: str) -> list[tuple[str, str]]:
        """[(display name, addr-spec)] of every header `name` (To may repeat).

        Only plausible addr-specs are returned; when the header is too
        broken for both parsers, addresses are picked out of it by pattern.
        """
        try:
            result = [
                (address.display_name or "", address.addr_spec or "")
                for header in (self._msg.get_all(name) or [])
                for address in header.addresses
            ]
            result = [(_fix_text(_fix_8bit(n)), a) for n, a in result if _ADDR_RE.match(a)]
            if result:
                return result
        except Exception:
            pass
        try:
            values = [str(v) for key, v in self.compat.raw_items() if key.lower() == name.lower()]
        except Exception:
            values = []
        result = []
        try:
            pairs = email.utils.getaddresses(values)
        except Exception:
            pairs = []
        for display, addr in pairs:
            addr = _fix_8bit(addr.strip())
            if _ADDR_RE.match(addr):
                result.append((_fix_text(_decode_rfc2047(_fix_8bit(display))).strip(), addr))
        if result:
            return result
        for value in values:
            for addr in _ADDR_SCAN_RE.findall(_fix_8bit(value)):
                if _ADDR_RE.match(addr):
                    result.append(("", addr))
        return result


#: An angle address: what stands between "<" and ">", read once (`_angle_addresses` keeps those with an "@"
#: inside). "<([^<>\s]+@[^<>\s]+?)>" tried every "@" of a long run against every end: cubic in the run.
_ANGLE_RE = re.compile(r"<\s*([^<>\s]+)\s*>")


def _angle_addresses(value: str) -> list[str]:
    """The angle addresses of ``value`` with something on either side of an "@"."""
    return [found for found in _ANGLE_RE.findall(value) if "@" in found[1:-1]]


def _from_mailboxes(raw: bytes) -> list[str]:
    """The mailboxes every From header of the message names, each read from its angle address if it has one.

    ``bob@example.org <mallory@attacker.example>`` is one mailbox, mallory's:
    what stands before the angle address is only a display name (RFC 5322
    name-addr). ``Bob <bob@...>, Mallory <mallory@...>`` is two.
    """
    try:
        head = BytesHeaderParser(policy=email.policy.compat32).parsebytes(raw)
        values = [_fix_8bit(str(v)) for k, v in head.raw_items() if k.lower() == "from"]
    except Exception:
        return []
    out: list[str] = []
    for value in values:
        value = " ".join(value.split())
        angles = _angle_addresses(value)
        if angles:
            out.extend(angles)
            continue
        try:
            found = [a.strip() for _, a in email.utils.getaddresses([value]) if "@" in a]
        except Exception:
            found = []
        if not all(_ADDR_RE.match(a) for a in found) or not found:  # too broken to parse: pick them out by pattern
            found = [a for a in _ADDR_SCAN_RE.findall(value) if _ADDR_RE.match(a)]
        out.extend(found)
    return [_unescape(a).lower() for a in out]


_ADDR_RE = re.compile(r'^[^\s@<>()\[\],;:"\\]+@[^\s@<>()\[\],;:"\\]+$')
#: Picks addresses out of a header too broken to parse. A match starts only where a run of address
#: characters starts (the look-behind) and takes the run whole (possessive): else each character of a long
#: run without an "@" read the rest of the run again.
_ADDR_SCAN_RE = re.compile(r'(?<![^\s@<>()\[\],;:"\\])[^\s@<>()\[\],;:"\\]++@[^\s@<>()\[\],;:"\\]++')


def _has_8bit(value: str) -> bool:
    return any("\udc80" <= c <= "\udcff" for c in value)


def _fix_8bit(value: str) -> str:
    """Raw 8-bit header bytes (kept as surrogates by the parser) -> text."""
    if not _has_8bit(value):
        return value
    data = value.encode("utf-8", "surrogateescape")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _fix_text(value: str) -> str:
    """C1 controls come from Windows-1252 text labelled ISO-8859-1: map them back."""
    if not any("\x80" <= c <= "\x9f" for c in value):
        return value
    return "".join(
        bytes([ord(c)]).decode("cp1252", errors="replace") if "\x80" <= c <= "\x9f" else c
        for c in value
    )


def _unfold(value: str) -> str:
    return _BLANKS.sub(_one_space_if_folded, value).strip()


#: A run of blanks, taken whole: "\s*\r?\n\s*" read a long run of spaces again from each of them.
_BLANKS = re.compile(r"\s+")


def _one_space_if_folded(run: re.Match[str]) -> str:
    """A run of blanks holding a line break is one space; any other is kept as it is."""
    return " " if "\n" in run.group() else run.group()


def _decode_rfc2047(value: object) -> str:
    if isinstance(value, email.header.Header):
        value = str(value)
    text = str(value)
    try:
        parts = email.header.decode_header(text)
    except Exception:
        return text
    out: list[str] = []
    for chunk, charset in parts:
        if isinstance(chunk, bytes):
            out.append(decode_bytes(chunk, charset)[0])
        else:
            out.append(chunk)
    return "".join(out)


def _message_ids(value: str | None) -> list[str]:
    if not value:
        return []
    found = _MSGID_RE.findall(value)
    if found:
        return [f for f in found if f]
    return [v.strip("<>") for v in value.split() if v.strip("<>")]


def _unescape(value: str) -> str:
    """A header value with raw 8-bit bytes (kept by the parser as surrogates) read as UTF-8, else Windows-1252.

    Surrogates must never leave the parser: encoding them later (the store,
    an acknowledgement) raised.
    """
    if not any("\udc80" <= ch <= "\udcff" for ch in value):
        return value
    data = value.encode("utf-8", errors="surrogateescape")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


# --------------------------------------------------------------------------
# format=flowed (RFC 3676)

def _unflow(text: str, delsp: bool) -> str:
    out: list[str] = []
    pending: str | None = None
    for line in text.split("\n"):
        if line == "-- ":  # signature separator is never flowed
            if pending is not None:
                out.append(pending)
                pending = None
            out.append(line)
            continue
        if line.startswith(" "):  # space-stuffing
            line = line[1:]
        flowed = line.endswith(" ") and not line.startswith(">")
        if flowed and delsp:
            line = line[:-1]
        pending = line if pending is None else pending + line
        if not flowed:
            out.append(pending)
            pending = None
    if pending is not None:
        out.append(pending)
    return "\n".join(out)


# --------------------------------------------------------------------------
# body selection

@dataclass
class _Collected:
    plain: list[str] = field(default_factory=list)
    html: list[str] = field(default_factory=list)
    attachments: int = 0
    problems: list[str] = field(default_factory=list)


def _is_attachment(part: email.message.Message) -> bool:
    try:
        disposition = part.get_content_disposition()
    except Exception:
        disposition = None
    if disposition == "attachment":
        return True
    try:
        filename = part.get_filename()
    except Exception:
        filename = None
    return bool(filename)


def _leaf_text(part: email.message.Message, acc: _Collected) -> str:
    try:
        payload = part.get_payload(decode=True)
    except Exception:
        payload = None
    if payload is None:
        raw = part.get_payload()
        payload = raw.encode("utf-8", "surrogateescape") if isinstance(raw, str) else b""
    try:
        charset = part.get_content_charset()
    except Exception:
        charset = None
    text, problem = decode_bytes(payload, charset)
    if problem and problem not in acc.problems:
        acc.problems.append(problem)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        fmt = (part.get_param("format") or "")
        delsp = (part.get_param("delsp") or "")
    except Exception:
        fmt, delsp = "", ""
    if str(fmt).lower() == "flowed":
        text = _unflow(text, str(delsp).lower() == "yes")
    return text


def _collect(part: email.message.Message, acc: _Collected) -> None:
    try:
        ctype = part.get_content_type()
    except Exception:
        ctype = "text/plain"
    if ctype.startswith("message/"):
        # a forwarded or bounced message: not this player's orders
        acc.attachments += 1
        return
    if part.is_multipart():
        children = part.get_payload()
        if not isinstance(children, list):
            return
        if ctype == "multipart/alternative":
            subs = []
            for child in children:
                sub = _Collected()
                _collect(child, sub)
                subs.append(sub)
            chosen = next((s for s in subs if s.plain), None) or next((s for s in subs if s.html), None)
            if chosen is None:
                chosen = subs[0] if subs else _Collected()
            acc.plain.extend(chosen.plain)
            acc.html.extend(chosen.html)
            acc.attachments += chosen.attachments
            acc.problems.extend(p for p in chosen.problems if p not in acc.problems)
        elif ctype == "multipart/related":
            # The root is the body; the other parts are its images/styles.
            if children:
                _collect(children[0], acc)
        else:
            for child in children:
                _collect(child, acc)
        return
    if _is_attachment(part):
        acc.attachments += 1
        return
    if ctype == "text/plain":
        acc.plain.append(_leaf_text(part, acc))
    elif ctype == "text/html":
        acc.html.append(_leaf_text(part, acc))
    else:
        acc.attachments += 1


# --------------------------------------------------------------------------
# the entry point

#: More MIME parts than any mail client writes: such a message is read for its headers only,
#: since the standard parser recurses once per level and a deep enough nesting exhausts the stack.
MAX_MIME_PARTS = 200


def _parse(raw: bytes) -> email.message.Message:
    if raw.lower().count(b"boundary=") > MAX_MIME_PARTS:
        return BytesHeaderParser(policy=email.policy.compat32).parsebytes(raw)
    try:
        return BytesParser(policy=DEFAULT_POLICY).parsebytes(raw)
    except RecursionError:
        return BytesHeaderParser(policy=email.policy.compat32).parsebytes(raw)
    except Exception:
        return BytesParser(policy=email.policy.compat32).parsebytes(raw)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def parse_message(raw: bytes, *, max_bytes: int = 1_000_000, null_return_path: bool = False,
                  time: ReadingTime = UNBOUNDED) -> InboundMail:
    """Parse one raw message; raise MailRejected if it cannot be accepted.

    ``null_return_path``: the envelope sender was ``<>`` (see `automatic`).
    ``time``: how long reading may take; past it the message is refused as unreadable
    (`ReadingTime` is looked at between the steps of reading).
    """
    try:
        return _parse_message(raw, max_bytes, null_return_path, time)
    except TooLongToRead as exc:
        raise MailRejected(
            f"Your message could not be read: {exc}. It is kept; send your orders again as plain text, "
            "without the quoted letter."
        ) from exc


def _parse_message(raw: bytes, max_bytes: int, null_return_path: bool, time: ReadingTime) -> InboundMail:
    if not isinstance(raw, (bytes, bytearray, memoryview)):
        raise TypeError("parse_message expects the raw message as bytes")
    raw = bytes(raw)
    if len(raw) > max_bytes:
        raise MailRejected(
            f"Your message is {human_size(len(raw))}; the limit is {human_size(max_bytes)}. "
            "Send orders as plain text."
        )
    if not raw.strip():
        raise MailRejected("The message was empty.")
    raw, cut = bound_lines(raw)
    raw, _ = tame_header_fields(raw)

    msg = _parse(raw)
    time.check()
    try:
        header_names = list(msg.keys())
    except Exception:
        header_names = []
    if not header_names:
        raise MailRejected("This could not be read as an email message (it has no headers).")

    headers = _Headers(raw, msg)

    senders = headers.addresses("From")
    if not senders or "@" not in senders[0][1]:
        # Sender: is what a few gateways set when From is missing.
        senders = headers.addresses("Sender")
    if not senders or "@" not in senders[0][1]:
        raise MailRejected(
            "The message has no From address, so it cannot be attributed to a player."
        )
    from_name, from_addr = _unescape(senders[0][0]), _unescape(senders[0][1]).lower()
    mailboxes = _from_mailboxes(raw)
    if len(mailboxes) == 1 and mailboxes[0] != from_addr:  # the angle address is the sender, whatever the name says
        from_name, from_addr = (from_addr if not from_name else from_name), mailboxes[0]

    reply_tos = [_unescape(a) for _, a in headers.addresses("Reply-To") if "@" in a]
    reply_to = reply_tos[0].lower() if reply_tos else None

    to_addrs: list[str] = []
    for name in ("To", "Cc"):
        for _, addr in headers.addresses(name):
            addr = _unescape(addr).lower()
            if addr and addr not in to_addrs:
                to_addrs.append(addr)

    ids = [_unescape(i) for i in _message_ids(headers.raw_text("Message-ID"))]
    message_id = ids[0] if ids else "sha256:" + hashlib.sha256(raw).hexdigest()
    in_reply_to_ids = [_unescape(i) for i in _message_ids(headers.raw_text("In-Reply-To"))]
    in_reply_to = in_reply_to_ids[0] if in_reply_to_ids else None
    references = [_unescape(i) for i in _message_ids(headers.raw_text("References"))]

    subject = _unescape(headers.text("Subject") or "")
    date = _unescape(headers.text("Date") or "")

    acc = _Collected()
    if raw.lower().count(b"boundary=") > MAX_MIME_PARTS:
        acc.problems.append("The message is built of too many nested parts to read; write your orders as plain text.")
    else:
        try:
            _collect(msg, acc)
        except RecursionError:
            acc = _Collected()
            acc.problems.append("The message is nested too deeply to read; write your orders as plain text.")
        except Exception:
            acc = _Collected()
            _collect(headers.compat, acc)

    time.check()
    problems: list[str] = []
    if acc.plain:
        body_text = "\n".join(acc.plain)
    elif acc.html:
        body_text = "\n".join(html_to_text(h) for h in acc.html)
    else:
        body_text = ""
    if not acc.plain and not acc.html:
        problems.append("The message had no text part" + (
            f"; {_plural(acc.attachments, 'attachment')} {'was' if acc.attachments == 1 else 'were'} ignored."
            if acc.attachments else "."
        ))
    elif acc.attachments:
        problems.append(
            f"{_plural(acc.attachments, 'attachment')} {'was' if acc.attachments == 1 else 'were'} "
            "ignored; orders are read only from the message text."
        )
    problems.extend(acc.problems)
    if cut:
        problems.append(cut)

    time.check()
    automatic = recognise(msg, from_addr, body_text, null_return_path=null_return_path)
    time.check()
    reply = read_reply(body_text, time)

    return InboundMail(
        message_id=message_id,
        from_addr=from_addr,
        from_name=from_name,
        reply_to=reply_to,
        to_addrs=to_addrs,
        subject=subject,
        in_reply_to=in_reply_to,
        references=references,
        body=reply.own,
        problems=tuple(problems),
        senders=max(1, len(mailboxes)),
        automatic=automatic,
        quoted=reply.quoted,
        unmarked=reply.unmarked,
        date=date,
    )

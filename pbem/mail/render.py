"""Outbound mail: jinja2 templates -> subject, text and HTML -> MIME bytes.

Nothing here reads a clock or the network: the Date header and the
Message-ID come from the caller, so re-running a transaction yields the same
bytes.

Every letter shows the text players wrote with its control characters
escaped (`pbem.escaping`): `Renderer.render` escapes each rendered part
whole, once, and `build_message` escapes any header field that still holds
one (an address or a Message-ID as a stranger wrote it).
"""

from __future__ import annotations

import email.policy
import email.utils
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from functools import lru_cache
from pathlib import Path

import jinja2

from pbem.escaping import escape_controls, holds_controls
from pbem.mail.order_text import ORDERS_BEGIN, ORDERS_END
from pbem.mail.policies import SMTP as SMTP_POLICY
from pbem.shipped import shipped

__all__ = [
    "MAIL_KINDS",
    "RenderedMail",
    "Renderer",
    "build_message",
    "default_templates_dir",
    "make_message_id",
]

MAIL_KINDS = ("ack", "prompt", "report", "start", "notice", "reminder")
_KIND_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def default_templates_dir() -> Path:
    """The repository's top-level `templates/` (beside the `pbem` package), or an installed wheel's copy."""
    return shipped("templates")


@dataclass(frozen=True)
class RenderedMail:
    subject: str
    text: str
    html: str


def _autoescape(name: str | None) -> bool:
    return bool(name) and name.endswith(".html")


def _tidy_text(text: str) -> str:
    # "-- " (with its space) is the standard signature separator: keep it.
    lines = [line if line == "-- " else line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    out: list[str] = []
    for line in lines:
        if not line and out and not out[-1]:
            continue  # at most one blank line in a row
        out.append(line)
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"


class Renderer:
    """Renders `templates/<kind>.subject.txt`, `<kind>.txt` and `<kind>.html`, control characters escaped.

    Why each part is escaped whole, after rendering, rather than each
    variable (jinja2's ``finalize``): a macro's output is a variable of the
    template that calls it, so escaping variables would escape what a macro
    shows twice, and escaping is not idempotent (`pbem.escaping`). The
    templates themselves hold no control character and no backslash, so
    escaping the whole part changes only what the context brought in. The
    subject is one line: a line feed or a tab in it is escaped too, so a
    name can never end the header; the text and HTML parts keep theirs.
    """

    def __init__(self, templates_dir: Path | None = None) -> None:
        self.templates_dir = Path(templates_dir) if templates_dir is not None else default_templates_dir()
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(self.templates_dir)),
            autoescape=_autoescape,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=False,
            auto_reload=False,  # compiled once per process: a changed template is read at the next start
        )
        self.env.globals.update(orders_begin=ORDERS_BEGIN, orders_end=ORDERS_END)
        #: The three templates of each kind, compiled at their first use and kept: even without reloading,
        #: jinja2 would look each one up again on every letter.
        self._kinds: dict[str, tuple[jinja2.Template, jinja2.Template, jinja2.Template]] = {}

    def _templates(self, kind: str) -> tuple[jinja2.Template, jinja2.Template, jinja2.Template]:
        found = self._kinds.get(kind)
        if found is None:
            if not _KIND_RE.match(kind):
                raise ValueError(f"invalid mail kind {kind!r}")
            found = tuple(self.env.get_template(f"{kind}{suffix}") for suffix in (".subject.txt", ".txt", ".html"))
            self._kinds[kind] = found  # type: ignore[assignment]
        return found  # type: ignore[return-value]

    def render(self, kind: str, context: Mapping) -> RenderedMail:
        subject_template, text_template, html_template = self._templates(kind)
        ctx = dict(context)
        subject = escape_controls(subject_template.render(ctx), one_line=True)
        text = escape_controls(text_template.render(ctx))
        html = escape_controls(html_template.render(ctx))
        return RenderedMail(
            subject=" ".join(subject.split()),
            text=_tidy_text(text),
            html=html.strip() + "\n",
        )


def make_message_id(seed: str, domain: str) -> str:
    """A Message-ID (without angle brackets) derived only from `seed`.

    The same seed (e.g. "<game>/<event position>/<recipient>/<kind>") always
    gives the same id, so a retried transaction cannot mint a second one.
    """
    digest = hashlib.sha256(seed.encode("utf-8")).hexdigest()[:40]
    return f"pbem.{digest}@{domain.lower()}"


#: What a Message-ID may not hold: white space (as `str.isspace` tells it) and angle brackets.
_NOT_IN_MESSAGE_ID = re.compile(r"[\s<>]")


def _bracket(message_id: str) -> str:
    mid = message_id.strip().strip("<>").strip()
    if not mid or _NOT_IN_MESSAGE_ID.search(mid):
        raise ValueError(f"invalid message id {message_id!r}")
    return f"<{mid}>"


def _parent(in_reply_to: str | None) -> str | None:
    """The bracketed id of the message a letter answers, or None when no header can name it.

    The id comes from the incoming message, as its sender wrote it: a broken
    client or a forger may put a no-break space or raw 8-bit bytes in it. The
    answer still goes, only not threaded under that message (the game's
    thread root still threads it). A control character stays: the header's
    writer shows it escaped.
    """
    if not in_reply_to:
        return None
    mid = in_reply_to.strip().strip("<>").strip()
    if not mid or not mid.isascii() or _NOT_IN_MESSAGE_ID.search(mid):
        return None
    return f"<{mid}>"


def build_message(
    *,
    sender: str,
    recipient: str,
    rendered: RenderedMail,
    message_id: str,
    date: datetime,
    reply_to: str | None = None,
    in_reply_to: str | None = None,
    references: Sequence[str] = (),
    extra_headers: Mapping[str, str] | None = None,
    auto_submitted: str | None = None,
    picture: Picture | None = None,
) -> bytes:
    """One UTF-8 multipart/alternative (text + HTML) message, CRLF line ends.

    `date` is the Date header (a naive datetime is taken as UTC).
    `message_id`, `in_reply_to` and `references` may be given with or without
    angle brackets.  `in_reply_to` is appended to References when missing.
    Auto-Submitted is `auto_submitted` if given, else "auto-replied" when the
    mail answers a message (`in_reply_to` set: acknowledgements, notices) and
    "auto-generated" otherwise (prompts, reports).  `extra_headers` are
    added last and replace headers of the same name.  No header field holds
    a control character, nor a part any but line feed and tab: one in any
    value given is escaped (`pbem.escaping`; what `Renderer` gives holds
    none), but a line break in an address or a Message-ID is refused
    (ValueError).
    """
    if date.tzinfo is None:
        date = date.replace(tzinfo=timezone.utc)
    given = [sender, recipient, rendered.subject, reply_to or "", in_reply_to or "", *references,
             *(extra_headers or {}).values()]
    if holds_controls(" ".join(given), one_line=True):  # one scan for the letter that needs none of this
        sender, recipient = _address(sender, "sender"), _address(recipient, "recipient")
        reply_to = _address(reply_to, "Reply-To") if reply_to else reply_to
        in_reply_to = _address(in_reply_to, "In-Reply-To") if in_reply_to else in_reply_to
        references = [_address(r, "reference") for r in references]
        extra_headers = {name: _field(value) for name, value in (extra_headers or {}).items()}
        rendered = RenderedMail(_field(rendered.subject), rendered.text, rendered.html)
    if holds_controls(rendered.text) or holds_controls(rendered.html):
        rendered = RenderedMail(rendered.subject, _part(rendered.text), _part(rendered.html))
    if picture is None:
        fields = _header_fields(sender, recipient, rendered.subject, date, message_id, reply_to, in_reply_to,
                                references, extra_headers, auto_submitted)
        if fields is not None:
            return _assemble(fields, rendered, _bracket(message_id))
    return _composed(sender=sender, recipient=recipient, rendered=rendered, message_id=message_id, date=date,
                     reply_to=reply_to, in_reply_to=in_reply_to, references=references, extra_headers=extra_headers,
                     auto_submitted=auto_submitted, picture=picture)


def _field(value: str) -> str:
    """A header field's value with no control character: one as a stranger wrote it (a From address or a
    Message-ID echoed back) escaped, so no line break can end the field; one escaped already left alone."""
    return escape_controls(value, one_line=True) if holds_controls(value, one_line=True) else value


def _address(value: str, what: str) -> str:
    """An address or a Message-ID for a header field: a line break refused (ValueError), any other control
    character escaped. Mail read never yields a line break in either (its header fields are unfolded), and an
    address also goes on the envelope, where one would end the SMTP command; an ESC from a stranger's From
    line does come, and is only shown."""
    if "\r" in value or "\n" in value:
        raise ValueError(f"{what} {value!r} holds a line break")
    return _field(value)


def _part(text: str) -> str:
    """A text or HTML part with no control character but line feed and tab (one rendered is so already)."""
    return escape_controls(text) if holds_controls(text) else text


def _composed(
    *, sender: str, recipient: str, rendered: RenderedMail, message_id: str, date: datetime, reply_to: str | None,
    in_reply_to: str | None, references: Sequence[str], extra_headers: Mapping[str, str] | None,
    auto_submitted: str | None, picture: Picture | None,
) -> bytes:
    """`build_message` through the standard library's MIME classes: any header, pictures included."""
    msg = EmailMessage(policy=SMTP_POLICY)
    msg["From"] = sender
    msg["To"] = recipient
    msg["Subject"] = rendered.subject
    msg["Date"] = email.utils.format_datetime(date)
    msg["Message-ID"] = _bracket(message_id)
    if reply_to:
        msg["Reply-To"] = reply_to
    refs = [_bracket(r) for r in references]
    if (parent := _parent(in_reply_to)) is not None:
        msg["In-Reply-To"] = parent
        if parent not in refs:
            refs.append(parent)
    if refs:
        msg["References"] = " ".join(refs)
    msg["Auto-Submitted"] = auto_submitted or ("auto-replied" if in_reply_to else "auto-generated")
    # Ask Exchange & co. not to send out-of-office replies to the server.
    msg["X-Auto-Response-Suppress"] = "All"
    msg["MIME-Version"] = "1.0"
    for name, value in (extra_headers or {}).items():
        del msg[name]
        msg[name] = value

    msg.set_content(rendered.text, subtype="plain", charset="utf-8", cte="quoted-printable")
    seed = hashlib.sha256(msg["Message-ID"].encode("utf-8")).hexdigest()[:24]
    if rendered.html:
        msg.add_alternative(rendered.html, subtype="html", charset="utf-8", cte="quoted-printable")
        if picture is not None:  # shown inline in the HTML part: <img src="cid:...">
            html = msg.get_payload()[1]
            html.add_related(picture.png, maintype="image", subtype="png", cid=_bracket(picture.content_id),
                             disposition="inline", filename=picture.name + ".png")
            html.set_boundary(f"=_pbem_r_{seed}")
        # A deterministic boundary (same mail -> same bytes).  "=_" can never
        # occur in quoted-printable text, so it cannot collide with the body.
        msg.set_boundary(f"=_pbem_{seed}")
    if picture is not None and picture.svg:  # attached for a reader of the text part (MAP); a report's or prompt's has none
        msg.add_attachment(picture.svg.encode("utf-8"), maintype="image", subtype="svg+xml", filename=picture.name + ".svg")
        msg.set_boundary(f"=_pbem_m_{seed}")
    return msg.as_bytes(policy=SMTP_POLICY)


def _header_fields(
    sender: str, recipient: str, subject: str, date: datetime, message_id: str, reply_to: str | None,
    in_reply_to: str | None, references: Sequence[str], extra_headers: Mapping[str, str] | None,
    auto_submitted: str | None,
) -> list[tuple[str, str]] | None:
    """The header fields `build_message` writes, in its order, each as its written line(s); None unless each is
    plain ASCII that fits on one line, or a Subject or References folded at its spaces.

    Those need no encoding, so they can be written as they are; anything
    else (a name with an accent, a long address field) goes through the
    standard library's header machinery instead.
    """
    fields = [("From", sender), ("To", recipient), ("Subject", subject), ("Date", _date_field(date)),
              ("Message-ID", _bracket(message_id))]
    if reply_to:
        fields.append(("Reply-To", reply_to))
    refs = [_bracket(r) for r in references]
    if (parent := _parent(in_reply_to)) is not None:
        fields.append(("In-Reply-To", parent))
        if parent not in refs:
            refs.append(parent)
    if refs:
        fields.append(("References", " ".join(refs)))
    fields.append(("Auto-Submitted", auto_submitted or ("auto-replied" if in_reply_to else "auto-generated")))
    fields.append(("X-Auto-Response-Suppress", "All"))
    fields.append(("MIME-Version", "1.0"))
    for name, value in (extra_headers or {}).items():
        fields = [(n, v) for n, v in fields if n.lower() != name.lower()]
        fields.append((name, value))
    out = []
    for name, value in fields:
        if not value.isascii() or not value.isprintable() or value != value.strip() or "  " in value:
            return None
        line = f"{name}: {value}"
        if len(line) > 78:
            if name not in ("Subject", "References", "X-Pbem-Topic"):
                return None
            folded = _folded(line)
            if folded is None:
                return None
            line = folded
        out.append((name, line))
    return out


def _date_field(date: datetime) -> str:
    """The Date header's text, remembered: every letter of one step is dated the same. Keyed by the offset
    too: the same instant in another zone is equal as a datetime, and written otherwise."""
    return _formatted_date(date, date.utcoffset())


@lru_cache(maxsize=64)
def _formatted_date(date: datetime, offset: timedelta | None) -> str:
    return email.utils.format_datetime(date)


def _folded(line: str) -> str | None:
    """A long header line folded at its spaces into lines of at most 78 characters (RFC 5322 §2.2.3): reading it
    back removes each CRLF and keeps the space after it. None if a word alone is too long."""
    lines: list[str] = []
    current = ""
    for word in line.split(" "):
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= 78:
            current += " " + word
        else:
            lines.append(current)
            current = " " + word
        if len(current) > 78:
            return None
    lines.append(current)
    return "\r\n".join(lines)


#: The longest line of a quoted-printable body as `build_message` writes it (the soft break's "=" included).
QP_LINE = 78
#: The bytes a quoted-printable body carries as they are (RFC 2045 §6.7): printable ASCII but "=", tab, line end.
_QP_PLAIN = bytes(range(32, 127)).replace(b"=", b"") + b"\t\n"
#: Each byte's escape.
_QP_ESCAPES = [b"=%02X" % byte for byte in range(256)]
_QP_WHITE = (" ", "\t")


def _qp_line(line: str) -> str:
    """One escaped line cut by soft line breaks, its final white space escaped: `quoprimime.body_encode`'s rules.

    A cut falls after 77 characters, or before an escape ("=XX") that would
    otherwise be cut in two: that escape's "=" ends the line as the soft break
    and is written again at the start of the next.
    """
    pieces = []
    start, last_start = 0, len(line) - 1 - QP_LINE
    find = line.find
    while start <= last_start:
        stop = start + QP_LINE - 1  # room for the "=" of the soft break
        cut = find("=", stop - 2, stop)
        if cut < 0:
            cut = stop
        pieces.append(line[start:cut])
        start = cut
    if line and line[-1] in " \t":
        room = start - last_start
        if room >= 3:
            tail = _qp_escape_char(line[-1])
        elif room == 2:
            tail = line[-1] + "=\n"
        else:
            tail = "=\n" + _qp_escape_char(line[-1])
        pieces.append(line[start:-1] + tail)
    else:
        pieces.append(line[start:])
    return "=\n".join(pieces)


def _qp_escape_char(char: str) -> str:
    return "=%02X" % ord(char)


def qp_body(text: str) -> str:
    """``text`` as UTF-8 in quoted-printable, lines cut at 78 characters, each line ended by "\\n": the same
    characters as ``quoprimime.body_encode`` gives for what `EmailMessage.set_content` hands it.

    The standard library maps every character through a table and walks every
    line in Python: a third of the CPU of writing a letter. Here the few kinds
    of byte to escape are found by deleting the plain ones, each kind is
    replaced in one pass, and only the lines that need cutting or end in white
    space are walked (tests/mail/test_render.py compares the two).
    """
    data = text.encode("utf-8")
    if b"\r" in data:  # every line end as one "\n", as the standard library reads them
        data = b"\n".join(data.splitlines()) + b"\n"
    elif not data.endswith(b"\n"):
        data += b"\n"
    escaped = data.translate(None, _QP_PLAIN)  # the bytes to escape, each as often as it occurs
    if escaped:
        if b"=" in escaped:  # first: the other escapes bring their own "="
            data = data.replace(b"=", b"=3D")
        for byte in set(escaped) - {ord("=")}:
            data = data.replace(bytes((byte,)), _QP_ESCAPES[byte])
    body = data.decode("ascii")
    lines = body.split("\n")
    if max(map(len, lines)) <= QP_LINE and " \n" not in body and "\t\n" not in body:
        return body
    return "\n".join([_qp_line(line) if len(line) > QP_LINE or line[-1:] in _QP_WHITE else line for line in lines])


def _qp_part(text: str, subtype: str) -> str:
    """A text part's header lines and quoted-printable body, as `EmailMessage.set_content` writes them."""
    return (f'Content-Type: text/{subtype}; charset="utf-8"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n'
            + qp_body(text).replace("\n", "\r\n"))


def _assemble(fields: list[tuple[str, str]], rendered: RenderedMail, message_id: str) -> bytes:
    """The letter written out directly: plain header fields, the text (and HTML) in quoted-printable.

    The standard library's MIME classes parse every header they are given
    and fold every one they write; for a letter whose headers need neither,
    that was most of the time of answering a mail (docs/performance.md).
    What comes out reads back the same (tests/mail/test_render.py compares
    the two ways on the same letters).
    """
    head = [line for _, line in fields]
    if not rendered.html:
        out = [*head, _qp_part(rendered.text, "plain")]
    else:
        boundary = f"=_pbem_{hashlib.sha256(message_id.encode('utf-8')).hexdigest()[:24]}"
        out = [*head, "Content-Type: multipart/alternative;", f' boundary="{boundary}"', "", f"--{boundary}",
               _qp_part(rendered.text, "plain"), f"--{boundary}", _qp_part(rendered.html, "html"), f"--{boundary}--", ""]
    return "\r\n".join(out).encode("ascii")


@dataclass(frozen=True)
class Picture:
    """The board as a picture for a letter: the PNG shown in the HTML part, the SVG attached."""

    svg: str | None  # attached when asked for (MAP); None: the PNG alone
    png: bytes
    content_id: str  # a Message-ID-like id the HTML refers to as cid:
    name: str = "board"

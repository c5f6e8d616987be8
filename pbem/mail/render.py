"""Outbound mail: jinja2 templates -> subject, text and HTML -> MIME bytes.

Nothing here reads a clock or the network: the Date header and the
Message-ID come from the caller, so re-running a transaction yields the same
bytes.
"""

from __future__ import annotations

import email.policy
import email.utils
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from email import quoprimime
from email.message import EmailMessage
from pathlib import Path

import jinja2

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
    """Renders `templates/<kind>.subject.txt`, `<kind>.txt` and `<kind>.html`."""

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
        subject = subject_template.render(ctx)
        text = text_template.render(ctx)
        html = html_template.render(ctx)
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
    added last and replace headers of the same name.
    """
    if date.tzinfo is None:
        date = date.replace(tzinfo=timezone.utc)
    if picture is None:
        fields = _header_fields(sender, recipient, rendered.subject, date, message_id, reply_to, in_reply_to,
                                references, extra_headers, auto_submitted)
        if fields is not None:
            return _assemble(fields, rendered, _bracket(message_id))
    return _composed(sender=sender, recipient=recipient, rendered=rendered, message_id=message_id, date=date,
                     reply_to=reply_to, in_reply_to=in_reply_to, references=references, extra_headers=extra_headers,
                     auto_submitted=auto_submitted, picture=picture)


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
    if in_reply_to:
        parent = _bracket(in_reply_to)
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
    if picture is not None:  # attached for a reader of the text part
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
    fields = [("From", sender), ("To", recipient), ("Subject", subject), ("Date", email.utils.format_datetime(date)),
              ("Message-ID", _bracket(message_id))]
    if reply_to:
        fields.append(("Reply-To", reply_to))
    refs = [_bracket(r) for r in references]
    if in_reply_to:
        parent = _bracket(in_reply_to)
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
            if name not in ("Subject", "References"):
                return None
            folded = _folded(line)
            if folded is None:
                return None
            line = folded
        out.append((name, line))
    return out


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


def _qp_part(text: str, subtype: str) -> list[str]:
    """A text part's header lines and quoted-printable body, as `EmailMessage.set_content` writes them."""
    lines = text.encode("utf-8").splitlines()
    body = quoprimime.body_encode((b"\n".join(lines) + b"\n").decode("latin-1"), 78)
    return [f'Content-Type: text/{subtype}; charset="utf-8"', "Content-Transfer-Encoding: quoted-printable", "",
            *body.split("\n")]


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
        out = head + _qp_part(rendered.text, "plain")
    else:
        boundary = f"=_pbem_{hashlib.sha256(message_id.encode('utf-8')).hexdigest()[:24]}"
        out = head + ["Content-Type: multipart/alternative;", f' boundary="{boundary}"', "", f"--{boundary}",
                      *_qp_part(rendered.text, "plain"), f"--{boundary}", *_qp_part(rendered.html, "html"),
                      f"--{boundary}--", ""]
    return "\r\n".join(out).encode("ascii")


@dataclass(frozen=True)
class Picture:
    """The board as a picture for a letter: the PNG shown in the HTML part, the SVG attached."""

    svg: str
    png: bytes
    content_id: str  # a Message-ID-like id the HTML refers to as cid:
    name: str = "board"

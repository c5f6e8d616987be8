"""How five mail clients lay out a reply: the header set, MIME structure, transfer encoding and quote of each.

Used by `make_people.py` to write the `.eml` files of this corpus. A case says what the player typed and
where (above the quote, below it, or inside it); this module wraps it the way Gmail, Outlook, Apple Mail,
iPhone Mail or Thunderbird would, so the server meets the bytes those clients really send: quoted-printable
with soft breaks, format=flowed, HTML blockquotes, unmarked Outlook quotes, iPhone footers.

Placeholders (`{{FROM}}`, `{{REPLY_TO}}`, `{{PROMPT_ID}}`, `{{SUBJECT}}`) only ever stand in header lines,
so a plain byte replace at test time is safe whatever the body's encoding.
"""

from __future__ import annotations

import hashlib
import html
import quopri
from dataclasses import dataclass

PBEM = "pbem@pbem.localhost"
#: When the quoted letter was sent, as each client writes it in its attribution line.
SENT = {
    "gmail": "On Wed, 25 Nov 2026 at 08:00, <pbem@pbem.localhost> wrote:",
    "thunderbird": "On 25/11/2026 09:00, pbem@pbem.localhost wrote:",
    "applemail": "On 25 Nov 2026, at 09:00, pbem <pbem@pbem.localhost> wrote:",
    "iphone": "> On 25 Nov 2026, at 09:00, pbem <pbem@pbem.localhost> wrote:",
}


@dataclass(frozen=True)
class Reply:
    """What the player wrote and the letter the reply quotes."""

    name: str  #: the case's name; seeds the Message-ID and boundaries so each file is stable and unique
    top: list[str]  #: lines typed above the quote
    quote: list[str]  #: the quoted letter's text, unmarked
    bottom: list[str]  #: lines typed below the quote
    edited_quote: list[str] | None = None  #: the quote as the player edited it (orders typed inside it)


def _hex(name: str, n: int) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:n]


def _crlf(text: str) -> bytes:
    return text.replace("\r\n", "\n").replace("\n", "\r\n").encode("utf-8")


def _qp(text: str) -> str:
    return quopri.encodestring(text.replace("\n", "\r\n").encode("utf-8")).decode("ascii").replace("\r\n", "\n")


def _quoted(lines: list[str], mark: str = "> ") -> list[str]:
    return [(mark + ln).rstrip() if ln else mark.rstrip() for ln in lines]


def _plain(reply: Reply, attribution: str, mark: str = "> ") -> str:
    quote = reply.edited_quote if reply.edited_quote is not None else reply.quote
    parts = list(reply.top)
    if parts:
        parts.append("")
    parts.append(attribution)
    if not attribution.startswith(">"):
        parts.append("")
    parts += _quoted(quote, mark)
    if reply.bottom:
        parts += ["", *reply.bottom]
    return "\n".join(parts) + "\n"


def _html(reply: Reply, attribution: str, div: str = "div") -> str:
    quote = reply.edited_quote if reply.edited_quote is not None else reply.quote

    def block(lines: list[str]) -> str:
        return "".join(f"<{div}>{html.escape(ln) or '<br>'}</{div}>" for ln in lines)

    return (
        f'<div dir="ltr">{block(reply.top)}</div><br><div class="gmail_quote"><div dir="ltr" class="gmail_attr">'
        f"{html.escape(attribution)}<br></div><blockquote class=\"gmail_quote\" style=\"margin:0px 0px 0px 0.8ex;"
        f'border-left:1px solid rgb(204,204,204);padding-left:1ex">{block(quote)}</blockquote></div>'
        + (f"<div>{block(reply.bottom)}</div>" if reply.bottom else "")
        + "\n"
    )


def gmail(reply: Reply) -> bytes:
    """Gmail web: multipart/alternative, both parts quoted-printable, the HTML quote a blockquote."""
    b = "000000000000" + _hex(reply.name, 16)
    mid = f"CAJ{_hex(reply.name, 24)}+Q{_hex(reply.name + 'g', 10)}@mail.gmail.com"
    plain = _plain(reply, SENT["gmail"])
    head = (
        "MIME-Version: 1.0\n"
        "Date: Wed, 25 Nov 2026 10:12:41 +0100\n"
        "References: <{{PROMPT_ID}}>\n"
        "In-Reply-To: <{{PROMPT_ID}}>\n"
        f"Message-ID: <{mid}>\n"
        "Subject: Re: {{SUBJECT}}\n"
        "From: Ben Example <{{FROM}}>\n"
        "To: {{REPLY_TO}}\n"
        f'Content-Type: multipart/alternative; boundary="{b}"\n\n'
    )
    body = (
        f"--{b}\nContent-Type: text/plain; charset=\"UTF-8\"\nContent-Transfer-Encoding: quoted-printable\n\n"
        f"{_qp(plain)}\n--{b}\nContent-Type: text/html; charset=\"UTF-8\"\n"
        f"Content-Transfer-Encoding: quoted-printable\n\n{_qp(_html(reply, SENT['gmail']))}\n--{b}--\n"
    )
    return _crlf(head + body)


def thunderbird(reply: Reply) -> bytes:
    """Thunderbird: text/plain, format=flowed, 8bit, the attribution with a numeric date."""
    mid = f"{_hex(reply.name, 8)}-{_hex(reply.name + 't', 4)}-4{_hex(reply.name, 3)}-9{_hex(reply.name + 'u', 3)}-{_hex(reply.name + 'v', 12)}@example.net"
    head = (
        f"Message-ID: <{mid}>\n"
        "Date: Wed, 25 Nov 2026 10:15:09 +0100\n"
        "MIME-Version: 1.0\n"
        "User-Agent: Mozilla Thunderbird\n"
        "Subject: Re: {{SUBJECT}}\n"
        "To: {{REPLY_TO}}\n"
        "References: <{{PROMPT_ID}}>\n"
        "Content-Language: en-GB\n"
        "From: Ben Example <{{FROM}}>\n"
        "In-Reply-To: <{{PROMPT_ID}}>\n"
        "Content-Type: text/plain; charset=UTF-8; format=flowed\n"
        "Content-Transfer-Encoding: 8bit\n\n"
    )
    return _crlf(head + _plain(reply, SENT["thunderbird"]))


def applemail(reply: Reply) -> bytes:
    """Apple Mail on a Mac: text/plain quoted-printable, 'On <date>, at <time>, <who> wrote:'."""
    mid = f"{_hex(reply.name, 8).upper()}-{_hex(reply.name + 'a', 4).upper()}-{_hex(reply.name + 'b', 4).upper()}-{_hex(reply.name + 'c', 12).upper()}@example.net"
    head = (
        "Content-Type: text/plain;\n\tcharset=utf-8\n"
        "Mime-Version: 1.0 (Mac OS X Mail 16.0 \\(3776.700.51\\))\n"
        "Subject: Re: {{SUBJECT}}\n"
        "From: Ben Example <{{FROM}}>\n"
        "In-Reply-To: <{{PROMPT_ID}}>\n"
        "Date: Wed, 25 Nov 2026 10:21:33 +0100\n"
        "Content-Transfer-Encoding: quoted-printable\n"
        f"Message-Id: <{mid}>\n"
        "References: <{{PROMPT_ID}}>\n"
        "To: {{REPLY_TO}}\n"
        "X-Mailer: Apple Mail (2.3776.700.51)\n\n"
    )
    return _crlf(head + _qp(_plain(reply, SENT["applemail"])))


def iphone(reply: Reply) -> bytes:
    """iPhone Mail: the 'Sent from my iPhone' footer, then a quoted attribution; 8bit or quoted-printable."""
    mid = f"{_hex(reply.name, 8).upper()}-{_hex(reply.name + 'i', 4).upper()}-{_hex(reply.name + 'j', 4).upper()}-{_hex(reply.name + 'k', 12).upper()}@example.net"
    top = [*reply.top, "", "Sent from my iPhone"] if reply.top else []
    text = _plain(Reply(reply.name, top, reply.quote, reply.bottom, reply.edited_quote), SENT["iphone"])
    qp = int(_hex(reply.name, 2), 16) % 2 == 0
    head = (
        "Content-Type: text/plain;\n\tcharset=utf-8\n"
        f"Content-Transfer-Encoding: {'quoted-printable' if qp else '8bit'}\n"
        "From: Ben Example <{{FROM}}>\n"
        "Mime-Version: 1.0 (1.0)\n"
        "Date: Wed, 25 Nov 2026 10:30:02 +0100\n"
        "Subject: Re: {{SUBJECT}}\n"
        f"Message-Id: <{mid}>\n"
        "References: <{{PROMPT_ID}}>\n"
        "In-Reply-To: <{{PROMPT_ID}}>\n"
        "To: {{REPLY_TO}}\n"
        "X-Mailer: iPhone Mail (22B83)\n\n"
    )
    return _crlf(head + (_qp(text) if qp else text))


def _outlook_header(subject: str) -> list[str]:
    return [
        "-----Original Message-----",
        "From: pbem <pbem@pbem.localhost>",
        "Sent: Wednesday, November 25, 2026 9:00 AM",
        "To: Ben Example <ben@example.net>",
        f"Subject: {subject}",
        "",
    ]


def outlook(reply: Reply, subject_line: str = "[g1] your orders") -> bytes:
    """Outlook desktop: multipart/alternative, us-ascii or windows-1252 quoted-printable, and a quote
    with no '>' marks under '-----Original Message-----' and a From:/Sent:/To:/Subject: block."""
    b = f"_000_{_hex(reply.name, 8).upper()}EXAMPLENET_"
    mid = f"DB{_hex(reply.name, 4).upper()}PR0{_hex(reply.name + 'o', 6).upper()}{_hex(reply.name + 'p', 16).upper()}@DB9PR03MB.eurprd03.prod.outlook.com"
    lines = [*reply.top]
    if lines:
        lines.append("")
    lines += _outlook_header(subject_line) + list(reply.quote)
    if reply.bottom:
        lines += ["", *reply.bottom]
    plain = "\n".join(lines) + "\n"
    body_html = (
        '<html xmlns:o="urn:schemas-microsoft-com:office:office"><head><meta http-equiv="Content-Type" '
        'content="text/html; charset=utf-8"></head><body lang="EN-GB"><div class="WordSection1">'
        + "".join(f'<p class="MsoNormal">{html.escape(ln) or "&nbsp;"}<o:p></o:p></p>' for ln in lines)
        + "</div></body></html>\n"
    )
    head = (
        "From: Ben Example <{{FROM}}>\n"
        "To: \"{{REPLY_TO}}\" <{{REPLY_TO}}>\n"
        "Subject: RE: {{SUBJECT}}\n"
        "Thread-Topic: {{SUBJECT}}\n"
        f"Thread-Index: AQH{_hex(reply.name, 20)}==\n"
        "Date: Wed, 25 Nov 2026 09:41:17 +0000\n"
        f"Message-ID: <{mid}>\n"
        "References: <{{PROMPT_ID}}>\n"
        "In-Reply-To: <{{PROMPT_ID}}>\n"
        "Accept-Language: en-GB, en-US\n"
        "Content-Language: en-GB\n"
        "X-MS-Has-Attach:\n"
        "X-MS-TNEF-Correlator:\n"
        f'Content-Type: multipart/alternative;\n\tboundary="{b}"\n'
        "MIME-Version: 1.0\n\n"
    )
    body = (
        f"--{b}\nContent-Type: text/plain; charset=\"utf-8\"\nContent-Transfer-Encoding: quoted-printable\n\n"
        f"{_qp(plain)}\n--{b}\nContent-Type: text/html; charset=\"utf-8\"\n"
        f"Content-Transfer-Encoding: quoted-printable\n\n{_qp(body_html)}\n--{b}--\n"
    )
    return _crlf(head + body)


CLIENTS = {"gmail": gmail, "thunderbird": thunderbird, "applemail": applemail, "iphone": iphone, "outlook": outlook}

"""MAIL DIGEST: a turn's news in one letter, beside the letters that ask something.

A reader who chose the digest (and every observer, unless he chose
otherwise) gets at once only what needs him now: a prompt, and an answer
that refused a line of his. Reports, and answers that only say his orders are
on file, join one letter of the turn instead. That letter waits in the
outbox, held until the turn is over (a report that reaches into the next
turn, or the end of the game, sends it); each piece written meanwhile is
added to it in the same transaction as the events that caused it, so the
digest is as safe from a crash as any letter.

Adding to a held letter across units of work reads its parts back from the
message itself (its text, its HTML, its picture), so nothing beside the
outbox row is kept: the row is the digest.
"""

from __future__ import annotations

import email
from collections.abc import Callable
from datetime import datetime, timedelta
from email.policy import default as default_policy

from pbem.mail.render import Picture, RenderedMail, make_message_id
from pbem.store.outbox import Outbox

from .combined import HTML_DIVIDER, PART_BEGIN, TEXT_DIVIDER, Part, combine
from .waiting import joinable

#: How far ahead a digest is held: until its turn ends, which releases it; never by the clock.
HELD = timedelta(days=3650)
#: The kinds a digest gathers; anything else goes out as it is written.
GATHERED = ("report", "ack")


def held_until(now: datetime) -> datetime:
    return now + HELD


def part_of(raw: bytes, message_id: str, turn: int) -> Part:
    """A held digest read back as a part of a letter, so a new piece can join it."""
    letter = email.message_from_bytes(raw, policy=default_policy)
    text_part = letter.get_body(preferencelist=("plain",))
    html_part = letter.get_body(preferencelist=("html",))
    # the parts as written, their line ends as `build_message` had them before it made them CRLF
    text = text_part.get_content().replace("\r\n", "\n") if text_part is not None else ""
    html = html_part.get_content().replace("\r\n", "\n") if html_part is not None else ""
    picture = None
    for piece in letter.walk():
        if piece.get_content_type() == "image/png" and piece["Content-ID"]:
            name = (piece.get_filename() or "board.png").removesuffix(".png")
            picture = Picture(None, piece.get_content(), str(piece["Content-ID"]).strip("<>"), name)
    topic = str(letter.get("X-Pbem-Topic") or letter["Subject"] or "")
    return Part("digest", RenderedMail(topic, text, html), message_id, letter["Reply-To"], None,
                str(letter["Auto-Submitted"] or "") or None, picture, "", turn)


def digest_id(game_id: str, recipient: str, turn: int, domain: str) -> str:
    """The Message-ID of a reader's digest of one turn: the same however many pieces join it."""
    return make_message_id(f"{game_id}:digest:{turn}:{recipient}", domain)


def title(turn: int) -> str:
    return f"Turn {turn} in one letter" if turn else "The setup in one letter"


def digest_of(pieces: list[Part], turn: int) -> tuple[RenderedMail, Picture | None]:
    """The digest letter of ``pieces``: opening with what it is, unless the first piece is the digest so far
    (read back from the outbox, which opens so already)."""
    rendered, picture = combine(pieces)
    if pieces[0].kind != "digest":
        line = f"{title(turn)}: what happened, and your orders that are on file."
        escaped = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        text = line + "\n" + TEXT_DIVIDER + rendered.text
        cut = rendered.html.find(PART_BEGIN)
        at = cut + len(PART_BEGIN) if cut >= 0 else 0
        html = (rendered.html[:at] + f'<p style="font-size:18px;margin:0 0 8px 0;"><strong>{escaped}</strong></p>'
                + HTML_DIVIDER + rendered.html[at:])
        rendered = RenderedMail(rendered.subject, text, html)
    return RenderedMail(title(turn), rendered.text, rendered.html), picture


def gather(outbox: Outbox, pieces: list[Part] | None, part: Part, where: tuple[str, str, int], now: datetime,
           build: Callable[[Part, RenderedMail, Picture | None], bytes], domain: str, lease: int) -> list[Part] | None:
    """Add ``part`` to the reader's held digest of ``turn`` (``pieces``: what this unit of work put in it so
    far, else None); the digest's parts now, or None when that digest went out already (a late piece then
    goes as a letter of its own). ``where``: the game, the reader's address, the turn."""
    game_id, recipient, turn = where
    message_id = digest_id(game_id, recipient, turn, domain)
    new = False
    if pieces is None:
        row = outbox.by_message_id(message_id)
        if row is not None and not joinable(row, now, lease):  # sent, or released and maybe being sent
            return None
        pieces, new = ([part_of(bytes(row.raw), message_id, turn)] if row is not None else []), row is None
    pieces = [*pieces, part]
    rendered, picture = digest_of(pieces, turn)
    head = Part("report", rendered, message_id, part.reply_to, None, "auto-generated", None, "", turn)
    raw = build(head, rendered, picture)
    if new:
        if turn:  # a digest of the turn before still held (its end wrote no report): it goes now
            outbox.release(digest_id(game_id, recipient, turn - 1, domain), now)
        outbox.enqueue(message_id=message_id, recipient=recipient, raw=raw, kind="digest", game_id=game_id, now=now,
                       send_at=held_until(now))
    else:
        outbox.rewrite(message_id, raw, "digest")
    return pieces


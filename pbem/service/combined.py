"""What one event of processing tells one reader travels as one letter.

A player's orders can end a phase: he was acknowledged, every player got
the phase's report, and whoever is asked next got a prompt, three letters
to the same mailbox within a second. Over a months-long game that was 21
letters a turn (issue 31). Here they become one: the acknowledgement, the
report and the prompt, in the order they were written, under the subject
of the most pressing of them (what is asked of him, else what happened,
else what he sent), with a first line saying what is asked and by when.
The order block of the prompt stays the letter's last part, where a reply
edits it.

Each part is rendered by its own templates as before; the parts are then
put together as text (each part's signature but the last dropped) and as
HTML (each part's content between the layout's ``<!--part-->`` marks; the
last part's footer kept). Only letters the same `Letters` writes in one unit
of work are combined: the outbox row of the first is rewritten as parts
join it, in the same transaction, so nothing is ever sent half-made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pbem.mail.render import Picture, RenderedMail

#: The kinds that combine, by how pressing each is: the subject and the kind of the letter are the most
#: pressing part's. Notices (press, the moderator's news) and reminders travel alone.
RANK = {"ack": 1, "report": 2, "prompt": 3}
#: The layout's marks around a part's content (templates/_layout.html).
PART_BEGIN = "<!--part-->"
PART_END = "<!--/part-->"
#: Between two parts of a letter.
TEXT_DIVIDER = "\n" + "_" * 40 + "\n\n"
HTML_DIVIDER = '<hr style="border:0;border-top:2px solid #bbb;margin:20px 0;">'
#: The signature separator of a text part ("-- " alone on its line): a part's own, dropped when another follows.
SIGNATURE = "\n-- \n"


@dataclass(frozen=True)
class Part:
    """One letter as written, before it joins others: what `build_message` needs of it."""

    kind: str
    rendered: RenderedMail
    message_id: str
    reply_to: str | None
    in_reply_to: str | None
    auto_submitted: str | None
    picture: Picture | None
    asked: str = ""  # a prompt's first line: what is asked of the reader, and by when
    turn: int | None = None  # the game's turn when it was written: the thread it joins


def _text_body(text: str) -> str:
    cut = text.rfind(SIGNATURE)
    return text[:cut].rstrip() + "\n" if cut >= 0 else text


def _html_inner(html: str, keep_footer: bool) -> tuple[str, str, str]:
    """(what precedes the part's content, its content, what follows): the layout's marks split it."""
    begin, end = html.find(PART_BEGIN), html.find(PART_END)
    if begin < 0 or end < begin:  # a template without the layout: the whole of it is the content
        return "", html, ""
    return html[:begin], html[begin + len(PART_BEGIN):end], html[end + len(PART_END):] if keep_footer else ""


def most_pressing(parts: Sequence[Part]) -> Part:
    """The part whose subject and kind the letter takes: the first of the highest rank."""
    return max(parts, key=lambda p: RANK.get(p.kind, 0))


def combine(parts: Sequence[Part]) -> tuple[RenderedMail, Picture | None]:
    """The parts as one letter, and the picture it carries (a prompt's, else a report's, else an answer's)."""
    if len(parts) == 1:
        return parts[0].rendered, parts[0].picture
    lead = most_pressing(parts)
    asked = [p.asked for p in parts if p.asked]
    opening = "\n".join(asked) + "\n" + TEXT_DIVIDER if asked else ""
    texts = [_text_body(p.rendered.text) for p in parts[:-1]] + [parts[-1].rendered.text]
    text = opening + TEXT_DIVIDER.join(texts)
    head, _, _ = _html_inner(parts[0].rendered.html, keep_footer=False)
    inners = [_html_inner(p.rendered.html, keep_footer=False)[1] for p in parts[:-1]]
    _, last, tail = _html_inner(parts[-1].rendered.html, keep_footer=True)
    first = "".join(f'<p style="font-size:18px;margin:0 0 8px 0;"><strong>{line}</strong></p>' for line in
                    _escaped(asked))
    html = head + PART_BEGIN + first + HTML_DIVIDER.join([*inners, last]) + PART_END + tail
    pictures = sorted((p for p in parts if p.picture is not None), key=lambda p: -RANK.get(p.kind, 0))
    return RenderedMail(lead.rendered.subject, text, html), (pictures[0].picture if pictures else None)


def _escaped(lines: Sequence[str]) -> list[str]:
    return [line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for line in lines]

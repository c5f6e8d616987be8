"""Templates and MIME construction."""

from __future__ import annotations

import dataclasses
import email
import email.policy
import email.utils
import random
import re
from datetime import datetime, timedelta, timezone
from email import quoprimime

import jinja2
import pytest

from pbem.mail import render as render_module
from pbem.mail.inbound import parse_message
from pbem.mail.order_text import ORDERS_BEGIN, ORDERS_END
from pbem.mail.render import (
    MAIL_KINDS,
    RenderedMail,
    Renderer,
    build_message,
    make_message_id,
    qp_body,
)

from .contexts import ACK, CONTEXTS, NOTICE, PROMPT, REPORT, SEAT, START

DATE = datetime(2024, 6, 10, 9, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def renderer() -> Renderer:
    return Renderer()


@pytest.mark.parametrize("kind", MAIL_KINDS)
def test_every_template_renders_with_a_full_context(renderer, kind):
    mail = renderer.render(kind, CONTEXTS[kind])
    assert mail.subject and "\n" not in mail.subject
    assert mail.text.endswith("\n") and not mail.text.startswith("\n")
    assert "<html" in mail.html
    assert "\n\n\n" not in mail.text
    # short lines for phones (only the order-language help or long data may exceed)
    assert max(len(line) for line in mail.text.splitlines()) <= 100


@pytest.mark.parametrize("kind, key", [(k, key) for k in MAIL_KINDS for key in CONTEXTS[k]])
def test_strict_undefined_catches_every_missing_variable(renderer, kind, key):
    context = dict(CONTEXTS[kind])
    del context[key]
    with pytest.raises(jinja2.UndefinedError):
        renderer.render(kind, context)


def test_a_replacements_start_letter_tells_the_seat_what_is_asked_and_the_position_first(renderer):
    mail = renderer.render("start", {**START, "player": "Eve", "seat": SEAT})
    assert mail.subject == "[nile-1] You take over Babylon"
    opening = " ".join(mail.text.split("\n\n")[0].split())
    assert opening.startswith('Eve: you take over Babylon in the game of Advanced Civilization "nile-1", from Bob. '
                              "The moderator's reason: Bob has moved abroad")
    assert mail.text.index("WHAT IS ASKED OF YOU") < mail.text.index("YOUR POSITION") < mail.text.index("HOW TO SEND ORDERS")
    assert "  HAND of Babylon: trade cards none." in mail.text
    assert max(len(line) for line in mail.text.splitlines()) <= 100
    assert "You take over Babylon" in mail.html and "HAND of Babylon" in mail.html and "your orders, due" in mail.html
    assert "is starting" not in mail.text and "is starting" not in mail.html


def test_subjects(renderer):
    assert renderer.render("ack", ACK).subject == "[nile-1] Orders received with 2 errors"
    assert renderer.render("ack", {**ACK, "errors": ACK["errors"][:1], "error_count": 1}).subject == (
        "[nile-1] Orders received with 1 error"
    )
    assert renderer.render("ack", {**ACK, "errors": [], "error_count": 0}).subject == "[nile-1] Orders received"
    empty = renderer.render(
        "ack",
        {**ACK, "errors": [], "error_count": 0, "accepted": [], "nothing_found": "Still needed from you: Which nation?",
         "template": "NATION Africa"},
    )
    assert empty.subject == "[nile-1] No orders found in your message"
    assert empty.text.startswith("No orders found in your message, Egypt. Still needed from you: Which nation?")
    assert "NATION Africa" in empty.text and "ACCEPTED FROM THIS MESSAGE" not in empty.text
    held = renderer.render("ack", {**ACK, "held_subject": "Step still open: 2 lines refused",
                                   "held": "Your step is still open: lines 3 and 5 were refused, so HALT was not played."})
    assert held.subject == "[nile-1] Step still open: 2 lines refused"
    assert held.text.startswith("Your step is still open: lines 3 and 5 were refused") and "Correct them" not in held.text
    assert "Your step is still open: lines 3 and 5" in held.html
    assert renderer.render("prompt", PROMPT).subject == "[nile-1] T3 Movement: your orders, due Fri 14 Jun 18:00 UTC"
    assert renderer.render("prompt", {**PROMPT, "turn": None, "phase": "Choose a nation", "due": ""}).subject == (
        "[nile-1] Setup, Choose a nation: your orders"
    )
    assert renderer.render("report", REPORT).subject == "[nile-1] Report: Movement"
    over = renderer.render("report", {**REPORT, "result": "Egypt wins"})
    assert over.subject == "[nile-1] Game over: Egypt wins" and "Game over: Egypt wins" in over.html
    assert renderer.render("start", START).subject == "[nile-1] A new game of Advanced Civilization"
    assert renderer.render("notice", NOTICE).subject == "[pbem] Your message was not accepted"
    assert renderer.render("notice", {**NOTICE, "game": "nile-1"}).subject == (
        "[nile-1] Your message was not accepted"
    )


def test_ack_text_names_each_rejected_line_first(renderer):
    text = renderer.render("ack", ACK).text
    lines = text.splitlines()
    assert lines[0] == "Egypt: 2 lines were NOT accepted. Correct them and send them again."
    assert "Line 3: MOVE 1 FROM Memfis TO Giza" in lines
    assert "  There is no area called Memfis." in lines
    assert "  Did you mean: Memphis?" in lines
    assert "Deadline: Fri 14 June 18:00 UTC" in lines
    assert "  BUILD CITY IN Thebes" in lines
    assert "3f9a1c2b" in text
    assert "  1 attachment was ignored; orders are read only from the message text." in lines
    ok = renderer.render("ack", {**ACK, "errors": [], "deadline": None}).text
    assert ok.splitlines()[0] == "Egypt: your orders are on file."
    assert "Deadline: none set" in ok
    # nothing asked of this player: no deadline (it would be another player's), and it says so
    idle = renderer.render("ack", {**ACK, "errors": [], "asked": False}).text
    assert "Deadline" not in idle and "Nothing is asked of you now." in idle.splitlines()


def test_prompt_ends_with_the_order_template(renderer):
    text = renderer.render("prompt", PROMPT).text
    assert "Reply to this message with the lines you want, one order per line." in text
    assert text.endswith(f"{ORDERS_BEGIN}\nMOVE 2 FROM Memphis TO Thebes\nBUILD CITY IN Thebes\n{ORDERS_END}\n")
    # the first line: what is asked and by when; the rules come under "How to write orders"
    assert text.splitlines()[0] == "Movement, your turn: move your tokens, then HALT. Due Fri 14 Jun 18:00 UTC."
    assert text.index("YOUR POSITION") < text.index("YOUR CHOICES") < text.index("HOW TO WRITE ORDERS")
    assert text.index("HOW TO WRITE ORDERS") < text.index("Each token moves once")
    # every choice is a complete order on its own line
    choices = text.split("YOUR CHOICES\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert choices == ["  MOVE 2 Memphis Thebes", "  MOVE 1 Thebes Sinai", "  HALT"]
    assert "... and 40 more like these" in renderer.render("prompt", {**PROMPT, "choices_left": 40}).text
    assert max(len(line) for line in text.splitlines()) <= 76


def test_prompt_template_survives_a_reply_that_keeps_the_markers(renderer):
    text = renderer.render("prompt", PROMPT).text
    block = text[text.index(ORDERS_BEGIN):]
    reply = "Hi!\n" + block.replace("BUILD CITY IN Thebes\n", "")
    raw = (
        "From: a@example.org\r\nSubject: Re: x\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
        + reply.replace("\n", "\r\n")
    ).encode("utf-8")
    assert parse_message(raw).body == "MOVE 2 FROM Memphis TO Thebes"


def test_report_cites_rules(renderer):
    text = renderer.render("report", REPORT).text
    assert "- Conflict in Sinai: Egypt lost 1 token, Babylon lost 2. [§22.1, §22.3]" in text
    assert "- Nothing else moved.\n" in text
    assert "77aa0c1d" in text


def test_start_mail_has_the_secret_and_reply_address(renderer):
    mail = renderer.render("start", START)
    assert "  SECRET tulip-quarry-88" in mail.text.splitlines()
    assert START["reply_address"] in mail.text and START["reply_address"] in mail.html
    assert "  small_cities: yes" in mail.text.splitlines()
    assert "  no_trading: no" in mail.text.splitlines()
    assert "  Zoë Ångström - Egypt" in mail.text.splitlines()
    assert START["seed_commitment"] in mail.text


def test_html_is_escaped_and_text_is_not(renderer):
    mail = renderer.render("notice", {**NOTICE, "lines": ["<b>MOVE</b> & co"]})
    assert "&lt;b&gt;MOVE&lt;/b&gt; &amp; co" in mail.html
    assert "<b>MOVE</b> & co" in mail.text


def test_renderer_accepts_another_directory(tmp_path):
    (tmp_path / "hello.subject.txt").write_text("Hi {{ name }}")
    (tmp_path / "hello.txt").write_text("Hello {{ name }}\n")
    (tmp_path / "hello.html").write_text("<p>{{ name }}</p>")
    mail = Renderer(tmp_path).render("hello", {"name": "<Zoë>"})
    assert mail == RenderedMail(subject="Hi <Zoë>", text="Hello <Zoë>\n", html="<p>&lt;Zoë&gt;</p>\n")
    with pytest.raises(ValueError):
        Renderer(tmp_path).render("../hello", {"name": "x"})


# --------------------------------------------------------------------------
# build_message


def build(rendered: RenderedMail, **overrides) -> bytes:
    kwargs = dict(
        sender="Advanced Civ <pbem@civ.example.org>",
        recipient="Zoë Ångström <zoe@example.fr>",
        rendered=rendered,
        message_id=make_message_id("nile-1/42/zoe@example.fr/ack", "civ.example.org"),
        date=DATE,
        reply_to="pbem+nile-1.1.0123456789abcdef@civ.example.org",
        in_reply_to="CAF=abc@mail.gmail.com",
        references=["<pbem.1@civ.example.org>"],
    )
    kwargs.update(overrides)
    return build_message(**kwargs)


def test_build_message_reparses_to_the_same_text(renderer):
    rendered = renderer.render("ack", ACK)
    raw = build(rendered)
    assert b"\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b"")
    assert all(len(line) <= 998 for line in raw.split(b"\r\n"))
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert msg.get_content_type() == "multipart/alternative"
    # (the wire format has CRLF line ends; the text is otherwise identical)
    assert msg.get_body(("plain",)).get_content().replace("\r\n", "\n") == rendered.text
    assert msg.get_body(("html",)).get_content().replace("\r\n", "\n") == rendered.html
    assert msg.get_body(("plain",)).get_content_charset() == "utf-8"
    assert msg["Subject"] == rendered.subject
    assert msg["From"].addresses[0].addr_spec == "pbem@civ.example.org"
    assert msg["To"].addresses[0].display_name == "Zoë Ångström"
    assert email.utils.parsedate_to_datetime(msg["Date"]) == DATE
    assert msg["Message-ID"] == "<" + make_message_id("nile-1/42/zoe@example.fr/ack", "civ.example.org") + ">"
    assert msg["In-Reply-To"] == "<CAF=abc@mail.gmail.com>"
    assert msg["References"] == "<pbem.1@civ.example.org> <CAF=abc@mail.gmail.com>"
    assert msg["Reply-To"] == "pbem+nile-1.1.0123456789abcdef@civ.example.org"
    assert msg["Auto-Submitted"] == "auto-replied"
    assert msg["MIME-Version"] == "1.0"
    assert len(msg.get_all("MIME-Version")) == 1


def test_build_message_is_deterministic(renderer):
    rendered = renderer.render("prompt", PROMPT)
    assert build(rendered) == build(rendered)
    other_date = build(rendered, date=DATE + timedelta(seconds=1))
    assert other_date != build(rendered)


def test_prompts_are_auto_generated_and_headers_can_be_added(renderer):
    rendered = renderer.render("prompt", PROMPT)
    raw = build(rendered, in_reply_to=None, references=[], extra_headers={"X-Pbem-Game": "nile-1"})
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert msg["Auto-Submitted"] == "auto-generated"
    assert msg["In-Reply-To"] is None and msg["References"] is None
    assert msg["X-Pbem-Game"] == "nile-1"
    raw = build(rendered, auto_submitted="auto-replied", extra_headers={"Auto-Submitted": "no"})
    assert email.message_from_bytes(raw, policy=email.policy.default).get_all("Auto-Submitted") == ["no"]


def test_naive_date_is_utc(renderer):
    rendered = renderer.render("notice", NOTICE)
    naive = build(rendered, date=DATE.replace(tzinfo=None))
    assert naive == build(rendered)


def test_the_same_instant_in_another_zone_is_dated_in_that_zone(renderer):
    """The Date header's text is remembered per date: an equal datetime with another offset is written its way."""
    rendered = renderer.render("notice", NOTICE)
    utc = build(rendered, recipient="zoe@example.fr")
    paris = build(rendered, recipient="zoe@example.fr", date=DATE.astimezone(timezone(timedelta(hours=2))))
    assert b"Date: Mon, 10 Jun 2024 09:12:00 +0000\r\n" in utc
    assert b"Date: Mon, 10 Jun 2024 11:12:00 +0200\r\n" in paris
    assert build(rendered, recipient="zoe@example.fr") == utc


def test_build_message_parses_back_through_inbound(renderer):
    rendered = renderer.render("notice", {**NOTICE, "game": "nile-1"})
    mail = parse_message(build(rendered))
    assert mail.subject == "[nile-1] Your message was not accepted"
    assert mail.from_addr == "pbem@civ.example.org"
    assert mail.from_name == "Advanced Civ"
    # the plain part is preferred; the footer after "-- " is a signature
    assert mail.body == "Your message was not accepted\n\nWe do not know the address you wrote from.\nNothing was changed."


def test_header_injection_is_refused(renderer):
    rendered = renderer.render("notice", NOTICE)
    with pytest.raises(ValueError):
        build(rendered, recipient="a@example.org\r\nBcc: everyone@example.org")
    for bad in ("a b@c", "a\u00a0b@c", "a\u2003b@c", "a<b@c", "<a>b>@c", "  ", ""):  # any white space, or brackets
        with pytest.raises(ValueError):
            build(rendered, message_id=bad)


#: What a player may put in a name or a press message to take over a reader's terminal.
HOSTILE = "\x1b[2J\x1b[31mEVIL\x1b[0m \x1b]0;title\x07 a\rb \x08 \x9b31m \u202e"
HOSTILE_SHOWN = "\\x1b[2J\\x1b[31mEVIL\\x1b[0m \\x1b]0;title\\x07 a\\rb \\x08 \\x9b31m \\u202e"


def _controls(text: str, allowed: str = "") -> list[str]:
    return [c for c in text if (c < " " or "\x7f" <= c <= "\x9f" or c == "\u202e") and c not in allowed]


def test_control_characters_from_the_context_are_escaped_in_every_part(renderer):
    """A name and a press line carrying ANSI escapes: shown written out, in the subject on one line."""
    mail = renderer.render("notice", {**NOTICE, "game": "nile-1", "title": f"Press from {HOSTILE}\nBcc: x",
                                      "lines": [f"{HOSTILE}\nsecond line\twith a tab"]})
    assert mail.subject == f"[nile-1] Press from {HOSTILE_SHOWN}\\nBcc: x"
    assert f"{HOSTILE_SHOWN}\nsecond line\twith a tab" in mail.text  # a body keeps its line feeds and tabs
    assert f"{HOSTILE_SHOWN}\nsecond line\twith a tab" in mail.html
    assert _controls(mail.subject) == [] and _controls(mail.text, "\n\t") == [] and _controls(mail.html, "\n\t") == []
    raw = build(mail)
    head, _, _ = raw.partition(b"\r\n\r\n")
    assert _controls(head.decode("ascii"), "\r\n") == [] and b"\r\nBcc:" not in head
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    assert str(parsed["Subject"]) == mail.subject
    assert f"{HOSTILE_SHOWN}\nsecond line" in parsed.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")


def test_a_macro_shows_the_text_it_is_given_escaped_once(renderer):
    """Each part is escaped whole: what a macro shows (the HTML ack's `lines`, `turn_line`) is not escaped twice."""
    mail = renderer.render("ack", {**ACK, "phase": "Move\x1bment", "player": "Zo\x1b"})
    assert "Turn 3, Move\\x1bment" in mail.text and "Turn 3, Move\\x1bment" in mail.html
    assert "\\\\x1b" not in mail.text + mail.html


def test_no_template_holds_a_control_character_or_a_backslash_of_its_own():
    """So escaping a rendered part changes only what the context brought in (the subject templates are one line)."""
    folder = render_module.default_templates_dir()
    for path in sorted(folder.rglob("*.txt")) + sorted(folder.rglob("*.html")):
        source = path.read_text(encoding="utf-8")
        outside_tags = re.sub(r"\{[{%#].*?[}%#]\}", "", source, flags=re.S)
        assert "\\" not in outside_tags and _controls(outside_tags, "\n") == [], path
        if path.name.endswith(".subject.txt"):
            assert len(source.rstrip("\n").splitlines()) == 1, path


def test_build_message_escapes_a_control_character_in_any_header_field(renderer):
    """An address or a Message-ID as a stranger wrote it (ESC in a From line) is shown escaped, never raw."""
    raw = build(RenderedMail("Hi \x1b[2J\r\nBcc: x", "body \x1b[31m\n", "<p>\x9b</p>\n"), recipient="e\x1b[2j@evil.example",
                in_reply_to="a\x1bb@x", extra_headers={"X-Note": "\x07"})
    head, _, body = raw.partition(b"\r\n\r\n")
    assert _controls(head.decode("ascii"), "\r\n") == []
    assert b"To: e\\x1b[2j@evil.example\r\n" in head and b"In-Reply-To: <a\\x1bb@x>\r\n" in head
    assert b"Subject: Hi \\x1b[2J\\r\\nBcc: x\r\n" in head and b"X-Note: \\x07\r\n" in head
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    assert parsed.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n") == "body \\x1b[31m\n"
    assert "\\x9b" in parsed.get_body(preferencelist=("html",)).get_content()


@pytest.mark.parametrize("parent", ["6A9D-8\xa0H9@x", "a b@x", "\u00fcber@x", "a<b>@x", "<>", "   "])
def test_a_parent_id_no_header_can_carry_leaves_the_letter_unthreaded_under_it(renderer, parent):
    """A Message-ID as a broken client wrote it (a no-break space, 8-bit text): the answer goes, without In-Reply-To.

    The fuzz found it: such an id crashed the acknowledgement, and with it the message's handling.
    """
    raw = build(RenderedMail("Hi", "body\n", "<p>body</p>\n"), in_reply_to=parent, references=["root@pbem.example"])
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    assert parsed["In-Reply-To"] is None
    assert parsed["References"] == "<root@pbem.example>"
    assert parsed["Auto-Submitted"] == "auto-replied"


def test_make_message_id():
    a = make_message_id("seed-1", "Civ.Example.org")
    assert a == make_message_id("seed-1", "civ.example.org")
    assert a != make_message_id("seed-2", "civ.example.org")
    assert a.endswith("@civ.example.org") and "<" not in a


@pytest.mark.parametrize("kind, context", [("ack", ACK), ("prompt", PROMPT), ("notice", NOTICE)])
@pytest.mark.parametrize("extra", [
    {},
    {"in_reply_to": None, "references": [], "extra_headers": {"X-Pbem-Game": "nile-1", "List-Id": "<nile-1.civ>"}},
    {"reply_to": None, "auto_submitted": "auto-replied", "extra_headers": {"Auto-Submitted": "no"}},
    {"references": [f"<pbem.{'%040d' % n}@civ.example.org>" for n in range(6)], "subject": (
        "[nile-1] Setup, Nations and start areas: your orders, due Sat 03 Jan 00:00 UTC, and a few more words")},
])
def test_a_letter_written_out_directly_reads_back_as_the_mime_classes_write_it(renderer, kind, context, extra):
    """The direct writer (plain ASCII headers) and the standard library's classes give the same letter."""
    rendered = renderer.render(kind, context)
    extra = dict(extra)
    if "subject" in extra:
        rendered = dataclasses.replace(rendered, subject=extra.pop("subject"))
    kwargs = dict(sender="Advanced Civ <pbem@civ.example.org>", recipient="zoe@example.fr", rendered=rendered,
                  message_id=make_message_id(f"nile-1/42/{kind}", "civ.example.org"), date=DATE,
                  reply_to="pbem+nile-1.1.0123456789abcdef@civ.example.org", in_reply_to="CAF=abc@mail.gmail.com",
                  references=["<pbem.1@civ.example.org>"], extra_headers=None, auto_submitted=None)
    kwargs.update(extra)
    direct = build_message(**kwargs)
    composed = render_module._composed(**kwargs, picture=None)
    assert render_module._header_fields(
        kwargs["sender"], kwargs["recipient"], rendered.subject, DATE, kwargs["message_id"], kwargs["reply_to"],
        kwargs["in_reply_to"], kwargs["references"], kwargs["extra_headers"], kwargs["auto_submitted"]) is not None
    a, b = (email.message_from_bytes(raw, policy=email.policy.default) for raw in (direct, composed))
    assert a.items() == b.items()
    def parts(message):  # (the classes also write MIME-Version into the HTML part; RFC 2045 asks it at the top only)
        return [(p.get_content_type(), [(k, v) for k, v in p.items() if p is message or k != "MIME-Version"],
                 None if p.is_multipart() else p.get_content()) for p in message.walk()]

    assert parts(a) == parts(b) and len(parts(a)) == 3
    assert all(len(line) <= 78 for line in direct.split(b"\r\n"))


def _qp_as_the_standard_library_writes_it(text: str) -> str:
    """What `EmailMessage.set_content(text, cte="quoted-printable")` hands to quoprimime, and what it gets back."""
    lines = text.encode("utf-8").splitlines()
    return quoprimime.body_encode((b"\n".join(lines) + b"\n").decode("latin-1"), 78)


#: Pieces that meet the quoted-printable rules at their edges: escapes at a cut, white space at a line's end,
#: line ends of every kind, bytes outside ASCII, control characters.
_QP_PIECES = ["a", "b", " ", "\t", "=", "==", "é", "€", "§", "\r", "\n", "\r\n", "\x0b", "\x0c", "\x85", "\u2028",
              "\x00", "\x7f", "~", "<", ">", "-- ", "x" * 10, " " * 3, '<li style="margin:0">']


@pytest.mark.parametrize("text", [
    "", "\n", "\n\n", "-- ", "plain\n", "no end", "a\r\nb\rc\n",
    *("a" * n + " " for n in range(74, 82)), *("a" * n + "\t" for n in range(74, 82)),
    *("a" * n + "=" + "b" * 20 for n in range(70, 80)), *("a" * n + "é" * 3 + "b" * 80 for n in range(70, 80)),
])
def test_quoted_printable_is_written_as_the_standard_library_writes_it(text):
    assert qp_body(text) == _qp_as_the_standard_library_writes_it(text)


def test_quoted_printable_of_random_texts_is_written_as_the_standard_library_writes_it():
    rng = random.Random(2045)
    for _ in range(3000):
        length = rng.choice([3, 30, 76, 77, 78, 79, 80, 160, 400])
        text = "".join(rng.choice(_QP_PIECES) for _ in range(rng.randint(0, length)))
        if rng.random() < 0.3:
            text = "y" * rng.randint(60, 170) + text
        assert qp_body(text) == _qp_as_the_standard_library_writes_it(text), repr(text)


def test_the_start_letter_says_who_picks_when_who_moderates_and_what_comes_next(renderer):
    text = renderer.render("start", START).text
    assert "chosen in the order of the place cards: Bob, Zoë Ångström (first to last)" in " ".join(text.split())
    assert "This game is moderated by the server's operator." in text
    assert "When it is your turn, a letter asks for your orders" in text
    html = renderer.render("start", START).html
    assert "<li>Bob</li>" in html and "moderated by the server&#39;s operator" in html

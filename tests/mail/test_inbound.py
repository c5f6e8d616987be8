"""Inbound parsing against messages as real mail clients write them."""

from __future__ import annotations

import hashlib
from email.message import EmailMessage
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.mail.html_text import html_to_text
from pbem.mail.inbound import InboundMail, MailRejected, human_size, parse_message
from pbem.mail.limits import tame_header_fields
from pbem.mail.order_text import ORDERS_BEGIN, ORDERS_END, extract_order_text

MESSAGES = Path(__file__).parent / "messages"


def load(name: str) -> InboundMail:
    return parse_message((MESSAGES / name).read_bytes())


# --------------------------------------------------------------------------
# fixtures written like the clients write them


def test_gmail_quoted_printable_reply_with_wrapped_attribution():
    mail = load("gmail_reply.eml")
    assert mail.body == (
        "MOVE 2 FROM Memphis TO Thebes\n"
        "BUILD CITY IN Thebes\n"
        "TRADE Ochre Ochre Hides WITH Babylon FOR Salt Salt Salt Iron AND 2 Grain please"
    )
    assert mail.message_id == "CAF=k9Zp8QvQ2cX7xYQ1-0bWm5q6vJc9Yp+9b3kLh5m7fHqgKzA@mail.gmail.com"
    assert mail.from_addr == "alice.smith@gmail.com"
    assert mail.from_name == "Alice Smith"
    assert mail.reply_to is None
    assert mail.to_addrs == ["pbem+nile-1.1.0123456789abcdef@civ.example.org", "bob@example.net"]
    assert mail.subject == "Re: [nile-1] Turn 3: Movement — your orders"
    assert mail.in_reply_to == "pbem.6b1d0c2f@civ.example.org"
    assert mail.references == ["pbem.6b1d0c2f@civ.example.org"]
    assert mail.problems == ()


def test_gmail_html_alternative_alone_gives_the_same_orders():
    raw = (MESSAGES / "gmail_reply.eml").read_bytes()
    import email
    import email.policy

    msg = email.message_from_bytes(raw, policy=email.policy.default)
    html = msg.get_body(("html",)).get_content()
    assert extract_order_text(html_to_text(html)) == (
        "MOVE 2 FROM Memphis TO Thebes\n"
        "BUILD CITY IN Thebes\n"
        "TRADE Ochre Ochre Hides WITH Babylon FOR Salt Salt Salt Iron AND 2 Grain please"
    )


def test_iphone_format_flowed_and_sent_from_my_iphone():
    mail = load("iphone_flowed.eml")
    assert mail.body == (
        "BUILD CITY IN Judah\n"
        "MOVE 3 FROM Sinai TO Judah, and if that fails keep them in Sinai\n"
        "PASS"
    )
    assert mail.from_addr == "bruno@icloud.com"
    assert mail.to_addrs == ["pbem+nile-1.2.aa23456789abcdef@civ.example.org"]
    assert mail.message_id == "5E1B7A8C-33F0-4F7A-9F1C-2D8E6C2B9A11@icloud.com"
    assert mail.problems == ()


def test_outlook_html_only_windows_1252_with_from_sent_block():
    mail = load("outlook_html.eml")
    assert mail.body == (
        "MOVE 1 FROM Crete TO Cyprus\n"
        "BUILD CITY IN Cyprus\n"
        "\n"
        "Thanks \u2013 Ren\u00e9e\u2019s last order this turn"
    )
    assert mail.from_addr == "renee.dupont@outlook.com"
    assert mail.from_name == "Renée Dupont"
    # =97 in an ISO-8859-1 encoded word is Windows-1252's em dash in practice
    assert mail.subject == "RE: [nile-1] Turn 3: Movement — your orders"
    assert mail.message_id == (
        "AM0PR02MB54916C1F0E2B5A1C9D8E7F6AB1234@AM0PR02MB5491.eurprd02.prod.outlook.com"
    )
    assert mail.problems == ()


def test_outlook_original_message_separator_and_8bit_header():
    mail = load("outlook_original_message.eml")
    assert mail.body == "ACQUIRE Pottery\nACQUIRE Cloth Making\n\nGrüße"
    assert mail.from_name == "Klaus Müller"  # raw latin-1 byte in the header
    assert mail.from_addr == "klaus@example.de"
    assert mail.message_id == "000001dabb12$4f3e2c10$edba8430$@example.de"


def test_base64_utf8_body_with_non_ascii_names_and_signature():
    mail = load("base64_utf8.eml")
    assert mail.body == (
        "Ordres pour ce tour :\n"
        "MOVE 1 FROM Crète TO Cyprus\n"
        "NOTE Zoë et Ångström sont d’accord — ça marche"
    )
    assert mail.from_addr == "zoe@example.fr"
    assert mail.from_name == "Zoë Ångström"
    assert mail.reply_to == "zoe.reply@example.fr"
    assert mail.to_addrs == ["pbem+nile-1@civ.example.org"]
    assert mail.subject == "Ordres — tour 3 (ça marche)"
    assert mail.message_id == "20240610110000.GA1234@example.fr"  # spaces and <> stripped
    assert mail.in_reply_to is None
    assert mail.references == []


def test_attachments_are_ignored_and_reported():
    mail = load("attachment.eml")
    assert mail.body == "MOVE 4 FROM Thrace TO Macedon\nI attached my map notes."
    assert mail.problems == ("2 attachments were ignored; orders are read only from the message text.",)


def test_garbled_headers_and_no_message_id():
    raw = (MESSAGES / "garbled_headers.eml").read_bytes()
    mail = parse_message(raw)
    assert mail.message_id == "sha256:" + hashlib.sha256(raw).hexdigest()
    assert mail.from_addr == "eve@example.com"
    assert mail.to_addrs == ["pbem+nile-1@civ.example.org"]
    assert mail.in_reply_to == "pbem.6b1d0c2f@civ.example.org"
    assert "Déplacement urgent" in mail.subject
    assert mail.body == "PASS\nD\ufffdplacement: none"
    assert mail.problems == (
        "The message declared an unknown character set (x-no-such-charset); it was read as UTF-8.",
    )


# --------------------------------------------------------------------------
# refusals


def test_oversized_message_is_refused_politely():
    msg = EmailMessage()
    msg["From"] = "a@example.org"
    msg["To"] = "pbem+g@x.org"
    msg["Subject"] = "big"
    msg.set_content("MOVE 1 FROM A TO B\n")
    msg.add_attachment(b"\0" * 1_700_000, maintype="application", subtype="octet-stream", filename="x.bin")
    raw = msg.as_bytes()
    assert 2_250_000 <= len(raw) < 2_350_000  # base64 grows it by a third
    with pytest.raises(MailRejected) as info:
        parse_message(raw)
    assert info.value.reason == "Your message is 2.3 MB; the limit is 1 MB. Send orders as plain text."
    # the same message is fine under a larger limit
    assert parse_message(raw, max_bytes=5_000_000).body == "MOVE 1 FROM A TO B"


@pytest.mark.parametrize("raw", [b"", b"   \r\n\r\n", b"\x00\x01\x02 binary junk\xff\xfe", b"just some words\nand more\n"])
def test_bytes_that_are_not_a_message(raw):
    with pytest.raises(MailRejected):
        parse_message(raw)


@pytest.mark.parametrize("from_header", [None, "", "undisclosed-recipients:;", "Nobody"])
def test_no_from_address(from_header):
    lines = ["To: pbem+g@x.org", "Subject: orders"]
    if from_header is not None:
        lines.insert(0, f"From: {from_header}")
    raw = ("\r\n".join(lines) + "\r\n\r\nPASS\r\n").encode()
    with pytest.raises(MailRejected) as info:
        parse_message(raw)
    assert "From" in info.value.reason


def test_human_size():
    assert human_size(1_000_000) == "1 MB"
    assert human_size(2_345_678) == "2.3 MB"
    assert human_size(12_345) == "12 kB"
    assert human_size(512) == "512 bytes"


# --------------------------------------------------------------------------
# structure


def test_no_text_part_only_an_attachment():
    msg = EmailMessage()
    msg["From"] = "a@example.org"
    msg["Message-ID"] = "<x1@example.org>"
    msg.make_mixed()
    msg.add_attachment(b"%PDF", maintype="application", subtype="pdf", filename="orders.pdf")
    mail = parse_message(msg.as_bytes())
    assert mail.body == ""
    assert mail.problems == ("The message had no text part; 1 attachment was ignored.",)


def test_html_only_message_is_converted():
    msg = EmailMessage()
    msg["From"] = "A <a@example.org>"
    msg.set_content(
        "<html><head><style>p{color:red}</style><title>x</title></head><body>"
        "<p>MOVE 1 FROM A&amp;B TO C</p><div>BUILD CITY IN C<br>PASS</div>"
        "<ul><li>ACQUIRE Pottery</li><li>ACQUIRE   Mysticism</li></ul>"
        "<blockquote>MOVE 9 FROM Quoted TO Nowhere</blockquote>"
        "<script>alert(1)</script></body></html>",
        subtype="html",
    )
    mail = parse_message(msg.as_bytes())
    assert mail.body == "MOVE 1 FROM A&B TO C\nBUILD CITY IN C\nPASS\nACQUIRE Pottery\nACQUIRE Mysticism"


def test_plain_part_preferred_over_html_in_alternative():
    msg = EmailMessage()
    msg["From"] = "a@example.org"
    msg.set_content("PASS\n")
    msg.add_alternative("<p>SOMETHING ELSE</p>", subtype="html")
    assert parse_message(msg.as_bytes()).body == "PASS"


def test_forwarded_message_part_is_not_read_as_orders():
    inner = EmailMessage()
    inner["From"] = "x@example.org"
    inner.set_content("MOVE 5 FROM Forwarded TO Elsewhere\n")
    outer = EmailMessage()
    outer["From"] = "a@example.org"
    outer.set_content("PASS\n")
    outer.add_attachment(inner)
    mail = parse_message(outer.as_bytes())
    assert mail.body == "PASS"
    assert len(mail.problems) == 1 and "1 attachment was ignored" in mail.problems[0]


def test_sender_header_used_when_from_is_missing():
    raw = b"Sender: s@example.org\r\nTo: p@x.org\r\n\r\nPASS\r\n"
    assert parse_message(raw).from_addr == "s@example.org"


def test_references_and_message_id_forms():
    raw = (
        b"From: a@example.org\r\n"
        b"Message-ID: <abc@x>\r\n"
        b"References: <r1@x>\r\n <r2@x> <r3@x>\r\n"
        b"In-Reply-To: <r3@x> (comment)\r\n"
        b"\r\nPASS\r\n"
    )
    mail = parse_message(raw)
    assert mail.message_id == "abc@x"
    assert mail.references == ["r1@x", "r2@x", "r3@x"]
    assert mail.in_reply_to == "r3@x"


def test_crlf_and_lf_give_the_same_result():
    raw = (MESSAGES / "gmail_reply.eml").read_bytes()
    assert parse_message(raw.replace(b"\r\n", b"\n")).body == parse_message(raw).body


# --------------------------------------------------------------------------
# quote and signature removal


@pytest.mark.parametrize(
    "text, expected",
    [
        ("PASS\n\nOn Tue, 11 Jun 2024, Bob wrote:\n> hi\n", "PASS"),
        ("PASS\nLe mar. 11 juin 2024 à 10:00, Bob <b@x.org> a écrit :\n> salut\n", "PASS"),
        ("PASS\nLe 11/06/2024 à 10:00, Bob a\nécrit :\n> salut\n", "PASS"),
        ("PASS\nAm 11.06.2024 um 10:00 schrieb Bob:\n> hallo\n", "PASS"),
        ("PASS\n\n-----Original Message-----\nFrom: pbem\nMOVE 1 FROM A TO B\n", "PASS"),
        ("PASS\n\n________________________________\nFrom: pbem <p@x.org>\nSent: Monday\nTo: me\nSubject: x\n\nMOVE 1 FROM A TO B\n", "PASS"),
        ("PASS\n\nFrom: pbem <p@x.org>\nDate: Monday\nTo: me\nMOVE 1 FROM A TO B\n", "PASS"),
        ("PASS\n-- \nAlice\nMOVE 1 FROM A TO B\n", "PASS"),
        ("PASS\n--\nAlice\n", "PASS"),
        ("PASS\n\nSent from my Android\n", "PASS"),
        ("PASS\n\nGet Outlook for iOS\n", "PASS"),
        ("PASS\nSent from my iPad\n", "PASS"),
        ("\n\n  \nPASS\n\n\n", "PASS"),
        ("MOVE 1 FROM A TO B\n> quoted line\nPASS\n", "MOVE 1 FROM A TO B\nPASS"),
        ("MOVE\u00a01 FROM A TO B\u200b  \r\nPASS\r\n", "MOVE 1 FROM A TO B\nPASS"),
        # "From:" alone (no Sent:/Date: after it) is not a reply header
        ("NOTE From: the east\nPASS\n", "NOTE From: the east\nPASS"),
        # a line merely starting with two dashes and text is kept
        ("--PASS\nPASS\n", "--PASS\nPASS"),
    ],
)
def test_extract_order_text(text, expected):
    assert extract_order_text(text) == expected


def test_bottom_posted_reply_keeps_the_lines_below_the_quote():
    text = (
        "On Mon, 10 Jun 2024, pbem <p@x.org> wrote:\n"
        "> Egypt: Which tokens do you move?\n"
        "> MOVE 2 FROM Memphis TO Thebes\n"
        "\n"
        "MOVE 3 FROM Memphis TO Sinai\n"
        "-- \n"
        "Alice\n"
    )
    assert extract_order_text(text) == "MOVE 3 FROM Memphis TO Sinai"


def test_order_block_markers_select_the_block():
    text = (
        "Hi all, here we go.\n"
        f"{ORDERS_BEGIN}\n"
        "MOVE 2 FROM Memphis TO Thebes\n"
        "\n"
        "PASS\n"
        f"  {ORDERS_END}  \n"
        "cheers\n"
    )
    assert extract_order_text(text) == "MOVE 2 FROM Memphis TO Thebes\n\nPASS"
    assert extract_order_text(f"{ORDERS_BEGIN.lower()}\nPASS\n") == "PASS"


def test_html_to_text_line_breaks():
    assert html_to_text("a<br>b<br><br>c") == "a\nb\n\nc"
    assert html_to_text("<div>a</div><div>b</div>") == "a\nb"
    assert html_to_text("<p>a\n  b</p><p>c</p>") == "a b\nc"
    assert html_to_text("<ol><li>one</li><li>two</li></ol>") == "one\ntwo"
    assert html_to_text("<pre>x  y\nz</pre>") == "x y\nz"


# --------------------------------------------------------------------------
# robustness


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000))
def test_arbitrary_bytes_parse_or_are_rejected(raw):
    try:
        mail = parse_message(raw)
    except MailRejected as exc:
        assert exc.reason
    else:
        assert "@" in mail.from_addr
        assert isinstance(mail.body, str)


header_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)


@settings(max_examples=300, deadline=None)
@given(
    from_value=header_text,
    subject=header_text,
    to_value=header_text,
    msgid=header_text,
    body=st.text(max_size=300),
    charset=st.sampled_from(["utf-8", "latin-1", "x-bogus", "us-ascii", ""]),
)
def test_malformed_headers_never_crash(from_value, subject, to_value, msgid, body, charset):
    def clean(v: str) -> str:
        return v.replace("\r", " ").replace("\n", " ")

    head = (
        f"From: {clean(from_value)} <player@example.org>\r\n"
        f"To: {clean(to_value)}\r\n"
        f"Subject: {clean(subject)}\r\n"
        f"Message-ID: {clean(msgid)}\r\n"
        f"Content-Type: text/plain; charset={charset}\r\n\r\n"
    )
    raw = head.encode("utf-8", "surrogatepass") + body.encode("utf-8", "surrogatepass")
    try:
        mail = parse_message(raw)
    except MailRejected:
        return
    assert mail.message_id
    assert isinstance(mail.subject, str)


@pytest.mark.parametrize(
    "from_value",
    [
        # each of these makes the modern header parser raise (IndexError / AttributeError)
        'a.:< @:<(\\ <alice@example.org>',
        '.\x00:?= alice@example.org',
        'alice@example.org, :;\\:)@\\:),',
    ],
)
def test_headers_that_break_the_default_policy_fall_back(from_value):
    import email as stdlib_email

    raw = (
        f"From: {from_value}\r\n"
        "To: :;\\:)@\\:), pbem+nile-1@civ.example.org\r\n"
        'Message-ID: <>a,"@[]\\]\r\n'
        "\r\nPASS\r\n"
    ).encode()
    modern = stdlib_email.message_from_bytes(raw, policy=stdlib_email.policy.default)
    with pytest.raises(Exception):
        modern["To"]
    mail = parse_message(raw)
    assert mail.from_addr == "alice@example.org"
    assert mail.to_addrs == ["pbem+nile-1@civ.example.org"]
    assert mail.message_id.startswith("sha256:")
    assert mail.body == "PASS"


@pytest.mark.parametrize(("name", "raw", "from_addr", "message_id"), [
    ("raw UTF-8 in From", "From: Jürgen <jürgen@example.org>\r\nTo: pbem+g1@x.org\r\nMessage-ID: <a@b>\r\n\r\nHALT\r\n".encode(),
     "jürgen@example.org", "a@b"),
    ("raw UTF-8 in Message-ID", "From: j@example.org\r\nTo: pbem+g1@x.org\r\nMessage-ID: <ä@b>\r\n\r\nHALT\r\n".encode(),
     "j@example.org", "ä@b"),
    ("raw Latin-1 in headers", "From: J\xfcrgen <j@example.org>\r\nTo: x@y.org\r\nMessage-ID: <\xe4@b>\r\n\r\nHALT\r\n".encode("latin-1"),
     "j@example.org", "ä@b"),
    ("charset=punycode", b"From: j@example.org\r\nMessage-ID: <p@b>\r\nContent-Type: text/plain; charset=punycode\r\n\r\nHALT \xff\r\n",
     "j@example.org", "p@b"),
    ("charset=idna", b"From: j@example.org\r\nMessage-ID: <i@b>\r\nContent-Type: text/plain; charset=idna\r\n\r\nHALT \xff\r\n",
     "j@example.org", "i@b"),
    ("MIME nested 1,000 deep", b"From: j@example.org\r\nMessage-ID: <d@b>\r\n" + b"".join(
        b"Content-Type: multipart/mixed; boundary=b%d\r\n\r\n--b%d\r\n" % (i, i) for i in range(1000)) + b"HALT\r\n",
     "j@example.org", "d@b"),
])
def test_hostile_bytes_are_read_without_crashing_and_without_surrogates(name, raw, from_addr, message_id):
    mail = parse_message(raw)
    assert (mail.from_addr, mail.message_id) == (from_addr, message_id), name
    for text in (mail.from_addr, mail.from_name, mail.message_id, mail.subject, mail.body, *mail.problems):
        text.encode("utf-8")  # a surrogate left in any of them would raise here


# --------------------------------------------------------------------------
# orders wherever the player wrote them


QUOTED_PROMPT = [
    "Ben: Choose your nation.",
    "",
    f"{ORDERS_BEGIN}",
    "NATION Africa",
    "PLACE Sahara",
    f"{ORDERS_END}",
]


def _marked(lines):
    return "\n".join("> " + ln if ln else ">" for ln in lines)


def _plain(lines):
    return "\n".join(lines)


@pytest.mark.parametrize(
    "header",
    [
        "On Wed, Nov 25, 2026 at 10:00 AM pbem <pbem+g1.2.abc@pbem.localhost> wrote:",
        "On Wed, Nov 25, 2026 at 10:00 AM pbem <\npbem+g1.2.abc@pbem.localhost> wrote:",  # Gmail, wrapped
        "--- On Wed, 11/25/26, pbem <pbem@pbem.localhost> wrote:",  # old Yahoo
        "-----Original Message-----\nFrom: pbem <pbem@pbem.localhost>\nTo: ben <ben@example.net>\nSent: Wed, Nov 25, 2026 10:00 am\nSubject: [g1] your orders",  # AOL
        "----- Original Message -----\nFrom: \"pbem\" <pbem@pbem.localhost>\nTo: \"ben\" <ben@example.net>\nSent: Wednesday, November 25, 2026 10:00:00 AM\nSubject: [g1] your orders",  # Zimbra
        "________________________________\nFrom: pbem <pbem@pbem.localhost>\nSent: Wednesday, November 25, 2026 10:00\nTo: Ben\nSubject: [g1] your orders",  # Outlook
        "Date: Wed, 25 Nov 2026 10:00:00 +0000\nSubject: [g1] your orders\nFrom: pbem@pbem.localhost\nTo: ben@example.net",  # Hotmail
        "От: pbem [mailto:pbem@pbem.localhost]\nОтправлено: 25 ноября 2026 г. 10:00\nКому: ben@example.net\nТема: [g1] your orders",  # Windows Mail, Russian
        "Von: pbem <pbem@pbem.localhost>\nGesendet: Mittwoch, 25. November 2026 10:00\nAn: Ben\nBetreff: [g1] your orders",  # Outlook, German
        "25.11.2026, 10:00, pbem <pbem@pbem.localhost> пишет:",  # Yandex
    ],
)
def test_orders_below_a_marked_quote_are_read_under_every_client_header(header):
    text = f"{header}\n{_marked(QUOTED_PROMPT)}\n\nNATION Crete\nPLACE Phaestos\n\nThanks,\nAlex\n"
    assert extract_order_text(text) == "NATION Crete\nPLACE Phaestos\n\nThanks,\nAlex"
    top = f"NATION Crete\nPLACE Phaestos\n\n{header}\n{_marked(QUOTED_PROMPT)}\n"
    assert extract_order_text(top) == "NATION Crete\nPLACE Phaestos"


def test_orders_between_quoted_lines_are_read():
    text = (
        "On Wed, Nov 25, 2026 at 10:00 AM pbem <pbem@pbem.localhost> wrote:\n"
        "> Ben: Choose your nation.\n> NATION Africa\nNATION Crete\n> PLACE Sahara\nPLACE Phaestos\n> -- \n> g1\n"
    )
    assert extract_order_text(text) == "NATION Crete\nPLACE Phaestos"


def test_an_unmarked_quote_is_the_rest_of_the_message_but_for_what_follows_the_prompt():
    outlook = "________________________________\nFrom: pbem <pbem@pbem.localhost>\nSent: Wednesday\nTo: Ben\nSubject: x\n\n"
    assert extract_order_text("NATION Crete\n\n" + outlook + _plain(QUOTED_PROMPT) + "\n") == "NATION Crete"
    below = outlook + _plain(QUOTED_PROMPT) + "\n\nNATION Crete\nPLACE Phaestos\n"
    assert extract_order_text(below) == "NATION Crete\nPLACE Phaestos"
    older = outlook + "Ben (Crete): your orders are on file.\nMOVE 1 FROM A TO B\n"
    assert extract_order_text(older) == ""


def test_html_blockquote_then_orders_below_it():
    html = (
        "<div>On Wed, pbem &lt;pbem@pbem.localhost&gt; wrote:</div><blockquote><div>NATION Africa</div>"
        "<div>PLACE Sahara</div></blockquote><div>NATION Crete</div><div>PLACE Phaestos</div>"
    )
    assert extract_order_text(html_to_text(html)) == "NATION Crete\nPLACE Phaestos"


def test_fullwidth_and_compatibility_letters_are_normalised():
    assert extract_order_text("ＮＡＴＩＯＮ Ｃｒｅｔｅ\nPLACE\u00a0Phaes\u00adtos\n") == "NATION Crete\nPLACE Phaestos"


def test_signature_runs_to_the_next_quote():
    text = "NATION Crete\n-- \nAlex\n+44 20 7946 0000\nOn Wed, pbem <p@x.org> wrote:\n> NATION Africa\nPLACE Phaestos\n"
    assert extract_order_text(text) == "NATION Crete\nPLACE Phaestos"


@pytest.mark.parametrize(
    "field",
    [
        "To: " + "(c)" * 22_000,
        "To: ben@example.net, " + ", ".join(f"u{i} (x) <u{i}@example.org>" for i in range(3_000)),
        "Content-Type: text/plain; charset=utf-8; x=" + "(c)" * 22_000,
        "Content-Disposition: inline; " + "(c)" * 22_000,
        "Cc: a@b.org,\r\n " + "(c)\r\n " * 20_000 + "c@d.org",
    ],
)
def test_an_oversized_header_field_is_cut_down_before_it_is_parsed(field):
    raw = f"From: Ben <ben@example.net>\r\n{field}\r\nSubject: x\r\n\r\nNATION Crete\r\n".encode()
    assert tame_header_fields(raw)[1] == 1  # rewritten before the slow structured parser sees it
    mail = parse_message(raw, max_bytes=10_000_000)
    assert mail.from_addr == "ben@example.net" and mail.body == "NATION Crete"


def test_a_long_field_in_a_mime_part_is_cut_down_too():
    raw = (
        "From: ben@example.net\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"
        "--b\r\nContent-Type: text/plain; charset=utf-8; x=" + "(c)" * 22_000 + "\r\n\r\nNATION Crete\r\n--b--\r\n"
    ).encode()
    assert parse_message(raw, max_bytes=10_000_000).body == "NATION Crete"

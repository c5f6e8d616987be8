"""Orders written below an unmarked copy of the letter (Outlook and its kin) reach the game (issue 29).

Outlook, Windows Mail, Lotus Notes, Yahoo and AOL copy the letter answered below a header block, without
``>`` marks. Each message here is built as Outlook writes it from the letter the server really sent:
multipart/alternative, both parts quoted-printable, CRLF line ends, Windows-1252 for the French and German
ones, the plain part made from the letter's HTML the way Outlook makes it (a paragraph on one line, list items
as ``  *   ``, a blank line between blocks). It goes through the real SMTP server on loopback.
"""

from __future__ import annotations

import asyncio
import html
import quopri
import re
from email.header import Header
from email.message import EmailMessage
from email.utils import make_msgid

import pytest

from pbem.rules.engine import pending
from pbem.service.demo import reply_to_prompt, suggested_orders
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.server import PostOffice, utc_now
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import holding, last_ack, latest, send, text_of, topic

BEN = "ben@example.net"
PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", BEN), NewPlayer("Cy", "cy@example.com")]

#: Each client's header block above the copy, and the charset its plain part is written in.
HEADERS = {
    "outlook": ("________________________________\nFrom: pbem <{sender}>\nSent: Wednesday, November 25, 2026 5:28 AM\n"
                "To: Ben Example <ben@example.net>\nSubject: {subject}", "utf-8"),
    "outlook-classic": ("-----Original Message-----\nFrom: pbem [mailto:{sender}]\nSent: Wednesday, November 25, 2026 5:28 AM\n"
                        "To: Ben Example\nSubject: {subject}", "us-ascii"),
    "outlook-fr": ("________________________________\nDe : pbem <{sender}>\nEnvoyé : mercredi 25 novembre 2026 05:28\n"
                   "À : Ben Example <ben@example.net>\nObjet : {subject}", "windows-1252"),
    "outlook-de": ("-----Ursprüngliche Nachricht-----\nVon: pbem <{sender}>\nGesendet: Mittwoch, 25. November 2026 05:28\n"
                   "An: Ben Example <ben@example.net>\nBetreff: {subject}", "windows-1252"),
    "outlook-es": ("________________________________\nDe: pbem <{sender}>\nEnviado: miércoles, 25 de noviembre de 2026 5:28\n"
                   "Para: Ben Example <ben@example.net>\nAsunto: {subject}", "utf-8"),
    "outlook-it": ("________________________________\nDa: pbem <{sender}>\nInviato: mercoledì 25 novembre 2026 05:28\n"
                   "A: Ben Example <ben@example.net>\nOggetto: {subject}", "utf-8"),
    "lotus-notes": ("From:\tpbem <{sender}>\nTo:\tBen Example <ben@example.net>\nDate:\t25/11/2026 05:28\n"
                    "Subject:\t{subject}", "utf-8"),
    "yahoo": ("----- Original Message -----\nFrom: pbem <{sender}>\nTo: Ben Example <ben@example.net>\n"
              "Sent: Wednesday, November 25, 2026 5:28 AM\nSubject: {subject}", "utf-8"),
    "aol": ("-----Original Message-----\nFrom: pbem <{sender}>\nTo: ben@example.net\nSent: Wed, Nov 25, 2026 5:28 am\n"
            "Subject: {subject}", "utf-8"),
}


def outlook_plain(letter: EmailMessage) -> str:
    """The letter's HTML part as Outlook writes it into a reply's plain part."""
    page = letter.get_body(preferencelist=("html",)).get_content()
    body = page.split("<body", 1)[1].split(">", 1)[1].split("</body>", 1)[0]
    body = re.sub(r"<li[^>]*>", "\n  *   ", body)
    body = re.sub(r"<br\s*/?>", "\n", body)
    body = re.sub(r"</(?:p|h2|ul|pre|div)>", "\n\n", body)
    body = html.unescape(re.sub(r"<[^>]+>", "", body))
    lines: list[str] = []
    for line in (ln.rstrip() for ln in body.split("\n")):
        if line or (lines and lines[-1]):
            lines.append(line)
    return "\n".join(lines).strip("\n")


def _qp(text: str, charset: str) -> str:
    return quopri.encodestring(text.encode(charset, errors="replace")).decode("ascii")


def outlook_reply(letter: EmailMessage, client: str, below: str, *, above: str = "", copy: str | None = None,
                  threaded: bool = True) -> bytes:
    """A reply to ``letter`` as ``client`` writes it: ``above``, the header block, the copy, ``below``."""
    template, charset = HEADERS[client]
    subject = topic(letter)
    header = template.format(sender=letter["From"].addresses[0].addr_spec, subject=subject)
    copy = outlook_plain(letter) if copy is None else copy
    plain = f"{above}\n\n{header}\n\n{copy}\n\n{below}\n"
    paragraphs = "".join(f"<p class=MsoNormal>{html.escape(line) or '&nbsp;'}</p>\n" for line in below.splitlines())
    header_html = "<br>\n".join(html.escape(line) for line in header.splitlines()[1:])
    original = letter.get_body(preferencelist=("html",)).get_content()
    original = original.split("<body", 1)[1].split(">", 1)[1].split("</body>", 1)[0]
    page = (
        "<html><head><meta http-equiv=Content-Type content=\"text/html; charset=utf-8\"></head><body>\n"
        f"<div class=WordSection1><p class=MsoNormal>{html.escape(above) or '&nbsp;'}</p>\n"
        f"<div id=divRplyFwdMsg><hr><p class=MsoNormal>{header_html}</p></div>\n{original}\n{paragraphs}</div>"
        "</body></html>"
    )
    threading = f"In-Reply-To: {letter['Message-ID']}\nReferences: {letter['Message-ID']}\n" if threaded else ""
    raw = (
        f"From: Ben Example <{BEN}>\n"
        f"To: \"{letter['Reply-To']}\" <{letter['Reply-To']}>\n"
        f"Subject: {Header('RE: ' + subject, 'utf-8').encode()}\n"
        "Thread-Index: AQHbXk3zN5c0l7q2S0G0rkFj4JqX8w==\n"
        "Date: Wed, 25 Nov 2026 09:02:55 +0000\n"
        f"Message-ID: {make_msgid(domain='AM9PR02MB7420.eurprd02.prod.outlook.com')}\n"
        f"{threading}"
        "Content-Language: en-GB\n"
        "X-MS-Has-Attach:\n"
        "Content-Type: multipart/alternative;\n\tboundary=\"_000_AM9PR02MB7420_\"\n"
        "MIME-Version: 1.0\n\n"
        "--_000_AM9PR02MB7420_\n"
        f"Content-Type: text/plain; charset=\"{charset}\"\nContent-Transfer-Encoding: quoted-printable\n\n"
        f"{_qp(plain, charset)}\n"
        "--_000_AM9PR02MB7420_\n"
        "Content-Type: text/html; charset=\"utf-8\"\nContent-Transfer-Encoding: quoted-printable\n\n"
        f"{_qp(page, 'utf-8')}\n"
        "--_000_AM9PR02MB7420_--\n"
    )
    return raw.replace("\n", "\r\n").encode("ascii")


def _run(db, settings, steps):
    """Create game g1 on a running server, then let ``steps(office)`` send what it sends."""

    async def scenario():
        office = PostOffice(db, settings, outbox_every=0.05)
        await office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="s1", now=utc_now())
            await office.idle()
            await steps(office)
        finally:
            await office.stop()

    asyncio.run(scenario())
    with UnitOfWork(db) as uow:
        return load_state(uow, "g1")


def _accepted(ack: EmailMessage) -> list[str]:
    lines = [line.strip() for line in text_of(ack).splitlines()]
    start = lines.index("ACCEPTED FROM THIS MESSAGE") + 1
    return lines[start:lines.index("", start)]


def _clean_ack(settings) -> EmailMessage:
    ack = last_ack(settings.maildir, BEN)
    assert "NOT ACCEPTED" not in text_of(ack) and "Step still open" not in topic(ack), text_of(ack)
    assert "NOT ACCEPTED" not in text_of(ack) and "No orders found" not in text_of(ack), text_of(ack)
    return ack


@pytest.mark.parametrize("client", sorted(HEADERS))
def test_orders_below_the_copied_prompt_are_played(world, client):
    db, settings = world

    async def steps(office):
        prompt = latest(settings.maildir, BEN, "your orders")
        raw = outlook_reply(prompt, client, "NATION Crete\nPLACE Phaestos\n\nThanks,\nBen")
        send(office.port, raw, BEN, [str(prompt["Reply-To"])])
        await office.idle()

    state = _run(db, settings, steps)
    assert state.player(2).nation == "Crete" and state.areas["Phaestos"].tokens == {"Crete": 1}
    assert _accepted(_clean_ack(settings)) == ["NATION Crete", "PLACE Phaestos"]


def test_the_order_block_edited_inside_the_copy_is_played(world):
    db, settings = world

    async def steps(office):
        prompt = latest(settings.maildir, BEN, "your orders")
        copy = outlook_plain(prompt).replace("NATION Africa\nPLACE Sahara\n=====", "NATION Crete\nPLACE Phaestos\n=====")
        send(office.port, outlook_reply(prompt, "outlook", "", copy=copy), BEN, [str(prompt["Reply-To"])])
        await office.idle()

    state = _run(db, settings, steps)
    assert state.areas["Phaestos"].tokens == {"Crete": 1}
    assert _accepted(_clean_ack(settings)) == ["NATION Crete", "PLACE Phaestos"]


def test_orders_above_the_copy_are_read_as_before(world):
    db, settings = world

    async def steps(office):
        prompt = latest(settings.maildir, BEN, "your orders")
        raw = outlook_reply(prompt, "outlook-fr", "", above="NATION Crete\nPLACE Phaestos\n\nMerci,\nBen")
        send(office.port, raw, BEN, [str(prompt["Reply-To"])])
        await office.idle()

    state = _run(db, settings, steps)
    assert state.areas["Phaestos"].tokens == {"Crete": 1}
    assert _accepted(_clean_ack(settings)) == ["NATION Crete", "PLACE Phaestos"]


def test_without_in_reply_to_the_reply_address_names_the_letter(world):
    db, settings = world

    async def steps(office):
        prompt = latest(settings.maildir, BEN, "your orders")
        raw = outlook_reply(prompt, "aol", "NATION Crete\nPLACE Phaestos", threaded=False)
        send(office.port, raw, BEN, [str(prompt["Reply-To"])])
        await office.idle()

    state = _run(db, settings, steps)
    assert state.areas["Phaestos"].tokens == {"Crete": 1}
    assert _accepted(_clean_ack(settings)) == ["NATION Crete", "PLACE Phaestos"]


def _answer_the_acknowledgement(db, settings, client: str, below: str, *, threaded: bool = True):
    """Ben chooses Crete plainly, then answers the acknowledgement (which echoes NATION Crete) below its copy."""

    async def steps(office):
        prompt = latest(settings.maildir, BEN, "your orders")
        send(office.port, reply_to_prompt(prompt, BEN, "NATION Crete"), BEN, [str(prompt["Reply-To"])])
        await office.idle()
        ack = last_ack(settings.maildir, BEN)
        assert "NATION Crete" in text_of(ack)
        send(office.port, outlook_reply(ack, client, below, threaded=threaded), BEN, [str(ack["Reply-To"])])
        await office.idle()

    return _run(db, settings, steps)


@pytest.mark.parametrize("threaded", [True, False], ids=["threaded", "by-reply-address"])
def test_the_acknowledgement_answered_below_its_copy(world, threaded):
    """Only what Ben wrote below the copy is read, not the echoed order; without In-Reply-To his reply
    address names him, and his newest letters are compared with the copy."""
    db, settings = world
    state = _answer_the_acknowledgement(db, settings, "outlook-de", "PLACE Phaestos\n\nGruß,\nBen", threaded=threaded)
    assert state.areas["Phaestos"].tokens == {"Crete": 1}
    assert _accepted(_clean_ack(settings)) == ["PLACE Phaestos"]


def test_a_mistake_below_the_copy_is_answered_as_one(world):
    """The lines below the copy are the player's own: a wrong one is refused with its reason, not passed over."""
    db, settings = world
    state = _answer_the_acknowledgement(db, settings, "outlook", "PLACE Atlantis")
    assert state.player(2).nation == "Crete"
    answer = text_of(last_ack(settings.maildir, BEN))
    assert "NOT ACCEPTED" in answer and "PLACE Atlantis" in answer, answer


def test_the_turn_report_answered_below_its_copy(world):
    """Setup played plainly by all; Ben answers the report of it, his next orders below its copy."""
    db, settings = world
    sent: list[str] = []

    async def steps(office):
        for _ in range(len(PLAYERS)):
            with UnitOfWork(db) as uow:
                state = load_state(uow, "g1")
            (asked,) = pending(state).values()
            address = next(p.email for p in PLAYERS if p.name == state.player(asked.player_id).name)
            prompt = latest(settings.maildir, address, "your orders")
            send(office.port, reply_to_prompt(prompt, address, suggested_orders(text_of(prompt))), address,
                 [str(prompt["Reply-To"])])
            await office.idle()
        report = holding(settings.maildir, BEN, "WHAT HAPPENED")[-1]  # with the prompt it caused
        orders = suggested_orders(text_of(latest(settings.maildir, BEN, "your orders")))
        sent.extend(line.strip() for line in orders.splitlines() if line.strip())
        send(office.port, outlook_reply(report, "yahoo", orders), BEN, [str(report["Reply-To"])])
        await office.idle()

    state = _run(db, settings, steps)
    assert state.phase != "setup" and sent
    accepted = _accepted(_clean_ack(settings))  # in canonical form ("MOVE 2 Sahara > Sabrata")
    assert [line.split()[0] for line in accepted] == [line.split()[0] for line in sent], (accepted, sent)


def test_a_quote_of_another_message_is_not_read_as_orders(world):
    """Ben quotes an older message of his own, not our letter: its orders are not sent again."""
    db, settings = world

    async def steps(office):
        prompt = latest(settings.maildir, BEN, "your orders")
        older = "NATION Italy\nPLACE Latium\n\nThanks,\nBen"
        raw = outlook_reply(prompt, "outlook", "", above="NATION Crete", copy=older, threaded=False)
        send(office.port, raw, BEN, [str(prompt["Reply-To"])])
        await office.idle()

    state = _run(db, settings, steps)
    assert state.player(2).nation == "Crete"
    assert _accepted(_clean_ack(settings)) == ["NATION Crete"]

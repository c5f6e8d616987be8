"""Replies to press are press (issue 29), through the running server: a player presses Reply on a press letter.

The replies are written as Gmail, Apple Mail and Outlook write them: "Re:" subject, the player's lines on
top, the press letter below (quoted with ">" under an attribution line, or Outlook's unmarked header block).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

import pytest

from pbem.rules.table import timezone_of
from pbem.service.games import create_game
from pbem.service.server import utc_now
from pbem.store import schema
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import last_ack, latest, letters, send, text_of, topic
from .test_mail_loop import PLAYERS, email_of, run, started, state_of
from .test_press_by_mail import _setup_by_mail

DEAL = "Deal if you add one more card"


def client_reply(letter: EmailMessage, sender: str, own: str, client: str, to: str | None = None) -> EmailMessage:
    """A reply as ``client`` writes it: ``own`` on top, ``letter`` below as that client quotes it."""
    reply = EmailMessage()
    reply["From"] = sender
    reply["To"] = to or str(letter["Reply-To"])
    reply["Subject"] = "Re: " + str(letter["Subject"])
    reply["In-Reply-To"] = letter["Message-ID"]
    reply["References"] = letter["Message-ID"]
    reply["Message-ID"] = make_msgid(domain=sender.split("@", 1)[1])
    reply["Date"] = formatdate(localtime=False)
    original = text_of(letter)
    marked = "\n".join("> " + line if line else ">" for line in original.splitlines())
    if client == "gmail":
        attribution = f"On {letter['Date']}, {letter['From']} wrote:"
        reply.set_content(f"{own}\n\n{attribution}\n\n{marked}\n")
        quoted_html = original.replace("&", "&amp;").replace("<", "&lt;").replace("\n", "<br>")
        reply.add_alternative(
            f'<div dir="ltr">{own}</div><br><div class="gmail_quote"><div class="gmail_attr">{attribution}</div>'
            f'<blockquote class="gmail_quote" style="margin:0 0 0 .8ex">{quoted_html}</blockquote></div>',
            subtype="html",
        )
    elif client == "apple":
        reply.set_content(f"{own}\n\nSent from my iPhone\n\n> On 28 Nov 2026, at 05:00, {letter['From']} wrote:\n>\n{marked}\n")
    else:  # Outlook: the original below a header block, not marked
        reply.set_content(
            f"{own}\n\n________________________________\nFrom: {letter['From']}\nSent: Saturday, November 28, 2026 5:00 AM\n"
            f"To: {sender}\nSubject: {letter['Subject']}\n\n{original}\n"
        )
    return reply


def _press(settings, name: str) -> list[EmailMessage]:
    return [m for m in letters(settings.maildir, email_of(name)) if "ress" in topic(m).split("]", 1)[1][:16]]


async def _opened(db, settings, kind: str):
    """A server with game g1 set up by mail, and Ann's press TO ALL delivered to Ben and Cy."""
    office = await started(db, settings)
    await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="s1", options={"press": kind}, now=utc_now())
    await office.idle()
    await _setup_by_mail(office, db, settings)
    start = latest(settings.maildir, email_of("Ann"), "new game")
    body = "PRESS TO ALL\nI offer you Ochre for Bronze, Ben.\nEND"
    send(office.port, client_reply(start, email_of("Ann"), body, "gmail"), email_of("Ann"), [str(start["Reply-To"])])
    await office.idle()
    return office


def _nations(db) -> dict[str, str]:
    return {p.name: p.nation for p in state_of(db).players}


def _answer(office, settings, name: str, own: str, client: str = "gmail", to: str | None = None) -> None:
    letter = _press(settings, name)[-1]
    reply = client_reply(letter, email_of(name), own, client, to)
    send(office.port, reply, email_of(name), [str(reply["To"])])


@pytest.mark.parametrize("client", ["gmail", "apple", "outlook"])
def test_a_reply_to_press_goes_to_its_writer_alone_and_its_writer_is_told(world, client):
    db, settings = world

    async def scenario():
        office = await _opened(db, settings, "on")
        try:
            _answer(office, settings, "Ben", DEAL, client)
            await office.idle()
            _answer(office, settings, "Ann", "Agreed: two Ochre then.")  # a reply to the reply goes back to Ben
            await office.idle()
        finally:
            await office.stop()

    run(scenario())
    nation = _nations(db)
    letter_to_ben = text_of(_press(settings, "Ben")[0])
    assert f"Reply to this letter to answer {nation['Ann']} by press" in letter_to_ben
    to_ann = [text_of(m) for m in _press(settings, "Ann")]
    assert len(to_ann) == 1 and f"Press from {nation['Ben']} in reply to your press: {DEAL}" in to_ann[0]
    assert "Ochre for Bronze" not in to_ann[0] and "wrote:" not in to_ann[0] and "iPhone" not in to_ann[0]
    assert len(_press(settings, "Cy")) == 1  # Cy read the press TO ALL, never Ben's answer
    ack = text_of(last_ack(settings.maildir, email_of("Ben")))
    assert f"PRESS in reply to {nation['Ann']}: relayed to {nation['Ann']} alone ({len(DEAL)} characters)" in ack and "NOT ACCEPTED" not in ack and "No orders found" not in ack
    to_ben = [text_of(m) for m in _press(settings, "Ben")]
    assert len(to_ben) == 2 and f"Press from {nation['Ann']} in reply to your press: Agreed: two Ochre then." in to_ben[1]


def test_grey_press_stays_anonymous_both_ways(world):
    db, settings = world

    async def scenario():
        office = await _opened(db, settings, "grey")
        try:
            _answer(office, settings, "Ben", DEAL, "apple")
            await office.idle()
        finally:
            await office.stop()

    run(scenario())
    nation = _nations(db)
    letter_to_ben = _press(settings, "Ben")[0]
    assert "Reply to this letter to answer its writer by press" in text_of(letter_to_ben)
    assert nation["Ann"] not in text_of(letter_to_ben) and "Ann" not in str(letter_to_ben["Reply-To"])
    (to_ann,) = _press(settings, "Ann")
    assert f"Press from Anonymous in reply to your press: {DEAL}" in text_of(to_ann)
    assert nation["Ben"] not in text_of(to_ann) and "Ben" not in text_of(to_ann)
    ack = text_of(last_ack(settings.maildir, email_of("Ben")))
    assert "PRESS in reply to the anonymous press you read: relayed anonymously to its writer alone (29 characters)" in ack
    assert nation["Ann"] not in ack and "Ann" not in ack

    def log(viewer: str) -> str:
        cli = [sys.executable, "-m", "pbem.cli", "--db", settings.db_url, "log", "g1", "--as", viewer]
        return subprocess.run(cli, capture_output=True, text=True, check=True).stdout

    (told,) = [line for line in log(f"player:{nation['Ben'].lower()}").splitlines() if "Press from" in line and DEAL in line]
    assert f"Press from {nation['Ben']} in reply to the writer of the anonymous press you read: {DEAL}" in told
    assert f"Press from Anonymous in reply to your press: {DEAL}" in log(f"player:{nation['Ann'].lower()}")
    assert DEAL not in log(f"player:{nation['Cy'].lower()}")
    assert f"Press from {nation['Ben']} in reply to {nation['Ann']}: {DEAL}" in log("moderator")


def test_an_auto_reply_to_a_press_letter_is_not_relayed(world):
    db, settings = world

    async def scenario():
        office = await _opened(db, settings, "on")
        try:
            letter = _press(settings, "Ben")[-1]
            reply = client_reply(letter, email_of("Ben"), "I am away until Monday.", "outlook")
            reply["Auto-Submitted"] = "auto-replied"
            send(office.port, reply, email_of("Ben"), [str(letter["Reply-To"])])
            await office.idle()
        finally:
            await office.stop()

    run(scenario())
    assert _press(settings, "Ann") == []


def test_a_reply_to_press_when_press_is_off_is_answered_so(world):
    db, settings = world

    async def scenario():
        office = await _opened(db, settings, "on")
        try:
            with UnitOfWork(db) as uow:  # the game's press turned off since the letter was written
                uow.conn.execute(schema.games.update().where(schema.games.c.game_id == "g1").values(
                    options={**uow.games.get("g1").options, "press": "off"}))
            _answer(office, settings, "Ben", DEAL, "outlook")
            await office.idle()
        finally:
            await office.stop()

    run(scenario())
    assert _press(settings, "Ann") == []
    ack = text_of(last_ack(settings.maildir, email_of("Ben")))
    assert "press is off in this game" in ack


def test_orders_in_a_reply_to_press_are_played_and_not_relayed(world):
    db, settings = world

    async def scenario():
        office = await _opened(db, settings, "on")
        try:
            _answer(office, settings, "Ben", f"TIMEZONE Europe/Berlin\n{DEAL}")
            await office.idle()
        finally:
            await office.stop()

    run(scenario())
    assert _press(settings, "Ann") == []
    ack = text_of(last_ack(settings.maildir, email_of("Ben")))
    assert "TIMEZONE Europe/Berlin" in ack and "nothing was relayed" in ack
    ben = next(p for p in state_of(db).players if p.name == "Ben")
    assert timezone_of(state_of(db), ben.id) == "Europe/Berlin"


@pytest.mark.parametrize("tamper", ["token", "version", "stranger"])
def test_a_forged_press_reply_relays_nothing(world, tamper):
    db, settings = world

    async def scenario():
        office = await _opened(db, settings, "on")
        try:
            genuine = str(_press(settings, "Ben")[-1]["Reply-To"])
            local, domain = genuine.split("@")
            head, version, token = local.rsplit(".", 2)
            if tamper == "token":
                address = f"{head}.{version}.{'0' if token[0] != '0' else '1'}{token[1:]}@{domain}"
            elif tamper == "version":
                address = f"{head}.p{int(version[1:]) - 1}.{token}@{domain}"
            else:
                address = genuine
            sender = "mallory@example.org" if tamper == "stranger" else email_of("Ben")
            reply = client_reply(_press(settings, "Ben")[-1], sender, DEAL, "gmail", to=address)
            send(office.port, reply, sender, [address])
            await office.idle()
        finally:
            await office.stop()

    run(scenario())
    assert _press(settings, "Ann") == []
    refusal = text_of(latest(settings.maildir, email_of("Ben"), "Orders ignored"))
    assert ("did not verify" in refusal) if tamper != "stranger" else ("mallory@example.org" in refusal)

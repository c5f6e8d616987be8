"""A player's side of the mail loop, for tests: read the Maildir, reply like a mail client."""

from __future__ import annotations

import email
import mailbox
import smtplib
from email.message import EmailMessage
from email.policy import default as default_policy
from pathlib import Path

from pbem.mail.outbound import MaildirDelivery


def letters(maildir: Path, address: str) -> list[EmailMessage]:
    """Every letter delivered to ``address``, oldest first."""
    folder = MaildirDelivery(maildir).folder(address)
    if not folder.exists():
        return []
    box = mailbox.Maildir(folder, factory=None, create=False)
    def delivered(key: str) -> tuple[int, str]:
        return int(key.split(".", 1)[0]), key  # <arrival time in ns>.<letter key>.pbem (MaildirDelivery)

    return [email.message_from_bytes(box.get_bytes(k), policy=default_policy) for k in sorted(box.keys(), key=delivered)]


def topic(message: EmailMessage) -> str:
    """What a letter is: its X-Pbem-Topic (a letter of a turn bears the turn's subject, "[g1] Turn 3", so a
    mail client shows the turn as one conversation), else its subject."""
    return str(message["X-Pbem-Topic"] or message["Subject"]).strip()


def subjects(maildir: Path, address: str) -> list[str]:
    """What each letter to ``address`` is (its topic), oldest first."""
    return [topic(m) for m in letters(maildir, address)]


def latest(maildir: Path, address: str, word: str) -> EmailMessage:
    matching = [m for m in letters(maildir, address) if word in topic(m)]
    assert matching, f"no letter with {word!r} for {address}: {subjects(maildir, address)}"
    return matching[-1]


def text_of(message: EmailMessage) -> str:
    return message.get_body(preferencelist=("plain",)).get_content()


def send(port: int, message: EmailMessage | bytes, mail_from: str, to: list[str]) -> None:
    """Submit as a mail client does (CRLF line ends on the wire)."""
    with smtplib.SMTP("127.0.0.1", port) as smtp:
        if isinstance(message, bytes):
            smtp.sendmail(mail_from, to, message)
        else:
            smtp.send_message(message, mail_from, to)


#: What only an acknowledgement's text says, whether it travels alone or with the report and prompt the
#: same reply caused (pbem.service.combined).
ACK_MARKS = ("ACCEPTED FROM THIS MESSAGE", "the answers to your questions are below", "No orders found in your message")


def acks(maildir: Path, address: str) -> list[EmailMessage]:
    """The letters to ``address`` that acknowledge a message of his, alone or with other parts."""
    return [m for m in letters(maildir, address) if any(mark in text_of(m) for mark in ACK_MARKS)]


def holding(maildir: Path, address: str, words: str) -> list[EmailMessage]:
    """The letters to ``address`` whose text holds ``words``, oldest first."""
    return [m for m in letters(maildir, address) if words in text_of(m)]


def last_ack(maildir: Path, address: str) -> EmailMessage:
    """The newest letter to ``address`` acknowledging a message of his."""
    found = acks(maildir, address)
    assert found, f"no acknowledgement for {address}: {subjects(maildir, address)}"
    return found[-1]

"""The letter a reply answers, and the reply read against it: what the player wrote inside or below its quote.

A reply quoting one of our letters can be read better with that letter in
hand: every line of the quote the letter did not have is the player's. For a
quote marked with ``>``, those lines are taken when they are legal orders
(`order_text.added_lines`). For an unmarked quote (Outlook, Windows Mail,
Lotus Notes, Yahoo, AOL copy the letter below a header block, without
marks), the reader alone cannot tell where the copy ends, and a player who
wrote below it was not heard; with the letter, what he wrote below the copy
and his changes to its order block are his own text, and other lines of the
copy the letter did not have are taken when legal, as in a marked quote
(`order_text.own_against_letter`).

The letter is found by the reply's In-Reply-To or References among the
letters sent; a client that drops them (or a player who starts a new message
and pastes) still writes to his reply address, whose token names him: his
newest letters are then compared, and the one the quote copies best is
taken. All of it is read in one short read transaction, before the message's
own write transaction opens, and compared outside any (docs/mail.md,
"Reading before writing").
"""

from __future__ import annotations

import email
from dataclasses import dataclass

from sqlalchemy import Engine

from pbem.mail.html_text import html_to_text
from pbem.mail.inbound import InboundMail
from pbem.mail.order_text import added_lines, copied_lines, own_against_letter
from pbem.mail.policies import DEFAULT as DEFAULT_POLICY
from pbem.mail.tokens import MODERATOR, parse_reply_address
from pbem.rules.table import seat_generation
from pbem.store.unit_of_work import UnitOfWork

from .projector import load_state
from .settings import Settings

#: Identifiers of a reply's References looked up for the letter it quotes (its newest ones).
REFERENCES_LOOKED_UP = 20
#: A player's newest letters compared with an unmarked quote when the reply names none of ours: the prompt,
#: the acknowledgement and the turn report he may be answering, and a few before them.
LATEST_LETTERS = 6


@dataclass(frozen=True)
class Answered:
    """What the reply says once read against the letter it answers."""

    body: str  # the player's text: the reader's, or, under an unmarked quote, his lines in it and below it too
    quoted_orders: tuple[str, ...] = ()  # lines written inside a marked quote: orders if legal, else nothing


def read_answered(db: Engine, settings: Settings, mail: InboundMail, envelope_to: list[str]) -> Answered:
    """The reply's text and the lines written inside its quotes, read against the letter it answers.

    Without a quote, or without a letter of ours it answers, the reader's text stands as it is."""
    if not mail.quoted and mail.unmarked is None:
        return Answered(mail.body)
    named, candidates = _letters(db, settings, mail, envelope_to)
    if not candidates:
        return Answered(mail.body)
    if mail.unmarked is None:
        return Answered(mail.body, tuple(added_lines(mail.quoted, candidates[0])))
    # The letter the quote copies best: the most of its lines found whole in it (the first, newest, on a tie).
    unmarked = mail.unmarked
    chosen = max(candidates, key=lambda texts: copied_lines(unmarked, texts)) if len(candidates) > 1 else candidates[0]
    read = own_against_letter(unmarked, chosen)
    if not read.copies:  # another text quoted: the reader's reading stands, and the quote is read as it was
        return Answered(mail.body, tuple(added_lines(mail.quoted, chosen)) if named else ())
    marked = added_lines(mail.unmarked.marked, chosen) if mail.unmarked.marked else []
    return Answered(read.own, (*marked, *read.inside))


def _letters(db: Engine, settings: Settings, mail: InboundMail, envelope_to: list[str]) -> tuple[bool, list[list[str]]]:
    """(whether the reply names the letter, the texts of each letter it may answer): the one it names, or
    the player's newest (for an unmarked quote only)."""
    asked = [m for m in [mail.in_reply_to, *reversed(mail.references[-REFERENCES_LOOKED_UP:])] if m]
    with UnitOfWork(db) as uow:
        sent = next((found for m in asked if (found := uow.outbox.by_message_id(m)) is not None), None)
        if sent is not None:
            raws = [bytes(sent.raw)]
        elif mail.unmarked is not None:
            raws = [bytes(row.raw) for row in _latest_to_sender(uow, settings, [*envelope_to, *mail.to_addrs])]
        else:
            raws = []
    return sent is not None, [_texts(raw) for raw in raws]


def _latest_to_sender(uow: UnitOfWork, settings: Settings, addresses: list[str]) -> list:
    """The newest letters to the player (or moderator) whose genuine reply address the reply was sent to."""

    def key_for(game_id: str) -> bytes | None:
        game = uow.games.get(game_id)
        return bytes.fromhex(game.reply_secret) if game else None

    def generation_for(game_id: str, player_id: int) -> int:
        return seat_generation(load_state(uow, game_id), player_id) if player_id else 0

    for address in addresses:
        found = parse_reply_address(address, key_for, settings.local_part, generation_for)
        if found is None:
            continue
        game_id, player_id = found
        if player_id == MODERATOR:
            game = uow.games.get(game_id)
            recipient = game.moderator_email if game is not None else None
        else:
            recipient = next((p.email for p in uow.players.list(game_id) if p.id == player_id), None)
        return uow.outbox.latest_to(game_id, recipient, LATEST_LETTERS) if recipient else []
    return []


def _texts(raw: bytes) -> list[str]:
    """A letter's texts as a reader sees them: its plain part, and its HTML part as text."""
    letter = email.message_from_bytes(raw, policy=DEFAULT_POLICY)
    texts = []
    for kind in ("plain", "html"):
        part = letter.get_body(preferencelist=(kind,))
        if part is not None:
            texts.append(part.get_content() if kind == "plain" else html_to_text(part.get_content()))
    return texts

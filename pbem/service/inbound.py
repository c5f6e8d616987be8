"""From a stored email to recorded orders, or to a clear refusal.

The raw message is stored first (`accept`), in its own transaction, before the
SMTP/LMTP server answers 250; processing happens after, so a crash in
between loses nothing: `process_backlog` picks up whatever was stored and not
yet handled. Authentication is layered: a reply address carrying the
player's HMAC token (with the From matching the address of record), or the
player's SECRET written in the body. Anything else changes nothing and is
answered only to an address of record, never to the claimed sender.
"""

from __future__ import annotations

import email
import email.parser
import email.policy
import hashlib
import hmac
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, Row

from pbem.mail.inbound import InboundMail, MailRejected, parse_message
from pbem.mail.limits import ReadingTime, TooLongToRead
from pbem.mail.tokens import (
    MODERATOR,
    moderator_secret,
    parse_game_address,
    parse_press_reply_address,
    parse_reply_address,
    press_reply_shaped,
    secret_in,
)
from pbem.orders.language import Actor, Written, written_lines
from pbem.rules.table import seat_generation
from pbem.store.faults import StorageFault, storage_fault
from pbem.store.inbox import message_key
from pbem.store.unit_of_work import UnitOfWork

from . import telemetry
from .answered import read_answered
from .batch import GameError, letters_for, mail_source, retrying, sync_nations
from .bounces import record_bounce
from .games import take_orders
from .letters import Letters
from .observers import handle_observer_mail, observer_verb
from .origins import Letter
from .press_replies import PressReply, relay_text
from .projector import load_state
from .seats import answer_former_player
from .senders import Senders
from .settings import Settings

log = logging.getLogger("pbem.inbound")

_SUBJECT_GAME = re.compile(r"\[([a-z0-9][a-z0-9-]*)\]", re.IGNORECASE)


def _message_id_of(raw: bytes) -> str:
    try:
        headers = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(raw)
        value = (headers.get("Message-ID") or "").strip().strip("<>").strip()
    except Exception:  # a header block too broken to read still gets stored
        value = ""
    return value or message_key(raw)


#: Header fields a relay adds or changes when it delivers the same message again.
_TRACE_FIELDS = re.compile(
    rb"^(received|return-path|delivered-to|x-original-to|x-envelope-[a-z-]*|authentication-results|arc-[a-z-]*|"
    rb"x-spam-[a-z-]*|x-virus-[a-z-]*|x-ms-exchange-[a-z-]*|x-gm-[a-z-]*|x-received|dkim-signature|received-spf)$",
    re.I,
)


def content_key(raw: bytes) -> str:
    """The message without what a relay adds on each delivery: equal for a second delivery, not for a new message."""
    head, sep, body = raw.replace(b"\r\n", b"\n").partition(b"\n\n")
    fields = re.split(rb"\n(?![ \t])", head)
    kept = [f for f in fields if not _TRACE_FIELDS.match(f.split(b":", 1)[0].strip())]
    return hashlib.sha256(b"\n".join(kept) + sep + body.rstrip()).hexdigest()


def accept(db: Engine, raw: bytes, mail_from: str, rcpt_tos: list[str], now: datetime) -> tuple[int, bool]:
    """Store one delivered message durably; (inbox id, is it new).

    A message is the same as one stored before when its Message-ID and its
    content (`content_key`) both match: a relay's second delivery. A different
    message reusing a Message-ID (a client bug, or a forger's) is stored
    under the Message-ID with its content's key appended, and handled.
    """
    message_id = _message_id_of(raw)
    with UnitOfWork(db) as uow:
        earlier = uow.inbox.by_message_id(message_id)
        if earlier is not None and content_key(bytes(earlier.raw)) != content_key(raw):
            message_id = f"{message_id}#{content_key(raw)[:16]}"
        return uow.inbox.store(raw, message_id, mail_from or "", list(rcpt_tos), now, looked_up=earlier is None)


@dataclass(frozen=True)
class Outcome:
    status: str
    detail: str
    game: str | None = None


def _game_of(mail: InboundMail, envelope_to: list[str], uow: UnitOfWork, settings: Settings,
             game_row: Callable[[str], Row | None]) -> tuple[str | None, int | None, bool, int | None]:
    """(game, player id from a valid token, whether a token was present but invalid, the press version a press
    reply address names); ``game_row`` reads a game."""

    def key_for(game_id: str) -> bytes | None:
        game = game_row(game_id)
        return bytes.fromhex(game.reply_secret) if game else None

    def generation_for(game_id: str, player_id: int) -> int:
        return seat_generation(load_state(uow, game_id), player_id) if player_id else 0

    forged = False
    for address in [*envelope_to, *mail.to_addrs]:
        found = parse_reply_address(address, key_for, settings.local_part, generation_for)
        if found:
            return found[0], found[1], False, None
        press = parse_press_reply_address(address, key_for, settings.local_part, generation_for)
        if press:  # a reply to a press letter (pbem.service.press_replies)
            return press[0], press[1], False, press[2]
        shaped = press_reply_shaped(address, settings.local_part)
        if shaped and game_row(shaped) is not None:  # a press reply address that did not verify: forged or mangled
            return shaped, None, True, None
        game_id = parse_game_address(address, settings.local_part)
        if game_id and game_row(game_id) is not None:
            local = address.split("@", 1)[0]
            forged = forged or local.count(".") >= 2  # a token was there and did not verify
            return game_id, None, forged, None
    match = _SUBJECT_GAME.search(mail.subject or "")
    if match and game_row(match.group(1).lower()) is not None:
        return match.group(1).lower(), None, False, None
    return None, None, False, None


def _refuse(letters: Letters, recipients: set[str], game: str | None, title: str, lines: list[str], purpose: str) -> None:
    for address in sorted(recipients):
        letters.notice(address, game, title, lines, purpose)


@dataclass(frozen=True)
class Reading:
    """All a message says, read before its transaction opens: the transaction only decides and appends.

    Reading is the slow part (a megabyte of text, quotes stripped, lines found); it holds no lock, so a
    stranger's long message never delays another's ``250`` or orders (docs/mail.md, "Reading before
    writing"). What needs the game, the sender's player and the rules, is left to the transaction.
    """

    mail: InboundMail | MailRejected
    secret: str | None = None  # the word of the body's SECRET line
    observer: tuple[str, str] | None = None  # OBSERVE <name> or UNOBSERVE near the top
    written: Written = Written()  # the lines that may be orders
    quoted_orders: tuple[str, ...] = ()  # lines the sender wrote inside a quote of a letter of ours


def read_message(db: Engine, settings: Settings, row) -> Reading:
    """Read a stored message within `Settings.reading_limit` seconds; past it, the message is unreadable.

    Each step is linear in the message (the pattern audit in docs/mail.md), so the limit is a backstop, not
    a schedule: a megabyte of the worst shapes reads in a fraction of a second."""
    time_left = ReadingTime(settings.reading_limit)
    try:
        mail = parse_message(bytes(row.raw), max_bytes=settings.max_message_bytes,
                             null_return_path=row.envelope_from == "<>", time=time_left)
    except MailRejected as exc:
        return Reading(exc)
    try:
        # First the letter it answers: under an unmarked quote, the player's lines below it are his body too.
        answered = read_answered(db, settings, mail, list(row.envelope_to or []))
        time_left.check()
        body = answered.body or ""
        secret = secret_in(body)
        observer = observer_verb(body)
        time_left.check()
        written = written_lines(body)
        time_left.check()
    except TooLongToRead as exc:
        return Reading(MailRejected(_too_long(exc, settings)))
    return Reading(mail, secret, observer, written, answered.quoted_orders)


def _too_long(exc: TooLongToRead, settings: Settings) -> str:
    return (f"Your message could not be read: {exc}, the limit for one message ({settings.reading_limit} s). "
            "It is kept; send your orders again as plain text, without the quoted letter.")


def _handle(uow: UnitOfWork, settings: Settings, row, reading: Reading, now: datetime) -> Outcome:
    mail = reading.mail
    if isinstance(mail, MailRejected):
        return _refuse_unreadable(uow, settings, row, mail.reason, now)
    key = row.message_id  # the stored key: the Message-ID, or it and the content's key when it was reused
    if mail.automatic is not None and mail.automatic.kind == "bounce":
        bounced = record_bounce(uow, settings, mail, list(row.envelope_to or []), now, key=row.message_id)
        return Outcome("rejected", f"not answered: {bounced.detail}", bounced.game_id)
    read: dict[str, Row | None] = {}  # each game row once (the orders themselves read it again under the game's lock)

    def game_row(game_id: str) -> Row | None:
        if game_id not in read:
            read[game_id] = uow.games.get(game_id)
        return read[game_id]

    game_id, token_player, forged_token, press_version = _game_of(mail, list(row.envelope_to or []), uow, settings, game_row)
    if mail.automatic is not None:
        return Outcome("rejected", f"auto-reply ({mail.automatic.sign}): recorded, not played, not answered", game_id)
    if game_id is None:
        return Outcome("rejected", "no game named by the recipient address or the subject")
    game = game_row(game_id)
    letters = letters_for(uow, settings, game, now)
    known = {p.id: p for p in uow.players.list(game_id)}
    by_sender = [p for p in known.values() if p.email == mail.from_addr]
    if mail.senders != 1:  # two mailboxes in From prove nobody: refused, and the player named by the token is told
        if token_player in known:
            _refuse(
                letters,
                {known[token_player].email},
                game_id,
                "Orders ignored: more than one sender",
                [
                    f"A message to your reply address named {mail.senders} senders in its From line; orders must come "
                    "from one mailbox, your address of record.",
                    "Nothing was changed. If it was you, send it again from your usual address alone.",
                ],
                f"senders:{key}",
            )
        return Outcome("rejected", f"From names {mail.senders} mailboxes", game_id)
    moderator = _moderator(uow, letters, game, mail, reading.secret, token_player, key)
    if isinstance(moderator, Outcome):
        return moderator
    if moderator:
        take_orders(
            uow, settings, game_id, Actor(moderator=True), reading.written, now=now, source=mail_source(key), message_id=key,
            in_reply_to=mail.message_id, recipient=game.moderator_email, notes=list(mail.problems),
            origin=moderator if isinstance(moderator, str) else "", letter=Letter(mail.subject, mail.date),
        )
        sync_nations(uow, game_id)
        return Outcome("done", "orders from the moderator", game_id)
    player = None
    if token_player is not None and token_player in known:
        if known[token_player].email == mail.from_addr:
            player = known[token_player]
        else:
            _refuse(
                letters,
                {known[token_player].email},
                game_id,
                "Orders ignored: sender does not match",
                [
                    f"A message to your reply address came from {mail.from_addr}, not from your address of record.",
                    "Nothing was changed. If it was you, reply from your usual address or add your SECRET line.",
                ],
                f"forged:{key}",
            )
            return Outcome("rejected", f"token for player {token_player} but sender {mail.from_addr}", game_id)
    if player is None and reading.secret:
        # The sender's own players first: each check is a deliberately slow scrypt.
        candidates = by_sender + [p for p in known.values() if p not in by_sender]
        player = next((p for p in candidates if uow.players.verify_secret(p.id, reading.secret)), None)
    if player is None and token_player is None and reading.observer:
        return Outcome("done", handle_observer_mail(uow, settings, mail, game_id, now, key, reading.observer), game_id)
    if player is None and not by_sender and answer_former_player(uow, letters, game_id, mail.from_addr, mail.message_id, key):
        return Outcome("rejected", f"{mail.from_addr} no longer plays in this game: told so, nothing applied", game_id)
    if player is None:
        recipients = {p.email for p in by_sender}
        reason = "the reply address did not verify" if forged_token else "it was not a reply to a prompt and had no SECRET line"
        _refuse(
            letters,
            recipients,
            game_id,
            "Orders ignored: could not tell who sent them",
            [
                f"A message for game {game_id} from {mail.from_addr} was ignored: {reason}.",
                "Nothing was changed. Reply to your latest prompt, or write your SECRET line (from the game-start mail) in the message.",
            ],
            f"unauth:{key}",
        )
        return Outcome("rejected", f"unauthenticated sender {mail.from_addr}: {reason}", game_id)
    origin = ""
    if mail.from_addr != player.email:
        origin = (
            f"These orders came from {mail.from_addr}, not from your address of record; "
            "they were accepted because the message carried your SECRET."
        )
    take_orders(
        uow,
        settings,
        game_id,
        Actor(player_id=player.id),
        reading.written,
        now=now,
        quoted_orders=reading.quoted_orders,
        source=mail_source(key),
        message_id=key,
        in_reply_to=mail.message_id,
        recipient=player.email,
        notes=list(mail.problems),
        origin=origin,
        press_reply=PressReply(press_version, relay_text(mail.body or "")) if press_version and token_player == player.id else None,
        letter=Letter(mail.subject, mail.date),
    )
    sync_nations(uow, game_id)
    return Outcome("done", f"orders from player {player.id}", game_id)


def _moderator(uow: UnitOfWork, letters, game, mail: InboundMail, secret: str | None, token_player: int | None,
               key: str) -> bool | str | Outcome:
    """Whether the moderator sent this: from his address to his reply address, or with his SECRET.

    True, or the line the acknowledgement adds when the SECRET came from another
    address, or an Outcome when his reply address was used by someone else.
    """
    # Compared as bytes: compare_digest refuses str holding letters outside ASCII, which a phone may type.
    expected = moderator_secret(bytes.fromhex(game.reply_secret), game.game_id).encode("utf-8")
    if secret and hmac.compare_digest(secret.encode("utf-8"), expected):
        if mail.from_addr == game.moderator_email:
            return True
        return f"These orders came from {mail.from_addr}, not from your address; they were accepted because the message carried your SECRET."
    if token_player != MODERATOR:
        return False
    if mail.from_addr == game.moderator_email:
        return True
    _refuse(
        letters,
        {game.moderator_email},
        game.game_id,
        "Orders ignored: sender does not match",
        [
            f"A message to your moderator's reply address came from {mail.from_addr}, not from your address.",
            "Nothing was changed. If it was you, reply from your usual address or add your SECRET line.",
        ],
        f"forged:{key}",
    )
    return Outcome("rejected", f"moderator's token but sender {mail.from_addr}", game.game_id)


def _refuse_unreadable(uow: UnitOfWork, settings: Settings, row, reason: str, now: datetime) -> Outcome:
    """Garbled or oversized mail: tell the sender only if it is a known address of record."""
    sender = (row.envelope_from or "").strip().lower()
    games = {p.game_id for g in uow.games.list() for p in uow.players.by_email(g.game_id, sender)} if sender else set()
    for game_id in sorted(games):
        letters = letters_for(uow, settings, uow.games.get(game_id), now)
        letters.notice(sender, game_id, "Your message could not be read", [reason, "Nothing was changed."], f"garbled:{row.message_id}")
    return Outcome("rejected", reason)


def process(db: Engine, settings: Settings, inbox_id: int, now: datetime) -> Outcome:
    """Handle one stored message exactly once, after what its sender sent before it; log one line each.

    Workers, and the threads of one, take stored messages from a shared
    queue, so a player's second order can reach a free worker while his
    first still waits in another's queue; applied the other way round, his
    correction would be overridden by what it corrected. So the messages
    the same sender had stored before this one and that are still waiting
    are handled first, oldest first (one another worker holds is waited for:
    see `_process_one`). The same sender is the same key
    (pbem.service.senders): a forger giving a player's address as envelope
    sender has his messages neither handled in the player's turn nor put
    before the player's genuine replies. One that fails is kept as failed, for
    the operator, and does not hold back the later ones.

    A storage fault (a full disk, a read-only database) raises `StorageFault`
    and leaves the message 'received': it is kept, and handled again when the
    disk allows (`pbem serve` retries it, and the earlier ones first).
    """
    try:
        with UnitOfWork(db) as uow:
            first = uow.inbox.get(inbox_id)
            waiting = first is not None and first.status == "received" and (first.envelope_from or "<>") != "<>"
            earlier = _earlier_of_the_same_sender(uow, settings, first, inbox_id) if waiting else []  # a bounce: none
    except Exception as exc:
        _raise_if_storage(db, exc)
        raise
    for other in earlier:
        try:
            _process_one(db, settings, other, now)
        except StorageFault:  # the disk: this one and the later ones wait, in their order
            raise
        except Exception:  # kept as failed, with its reason, by _process_one
            log.exception("processing inbox message %s failed; it is kept as failed", other)
    return _process_one(db, settings, inbox_id, now, first)


def _earlier_of_the_same_sender(uow: UnitOfWork, settings: Settings, first: Row, inbox_id: int) -> list[int]:
    rows = uow.inbox.waiting_rows_before(first.envelope_from, inbox_id)
    if not rows:
        return []
    senders = Senders(None, settings.local_part)
    key = senders.key(first.envelope_from, first.envelope_to, uow)
    return [row.id for row in rows if senders.key(first.envelope_from, row.envelope_to, uow) == key]


def _process_one(db: Engine, settings: Settings, inbox_id: int, now: datetime, first: Row | None = None) -> Outcome:
    """Handle one stored message exactly once: its row is read locked and marked in the transaction that handles
    it, so a second worker taking the same message (one starting up takes the backlog) waits, then skips it.
    ``first`` is the row as read before, if it was (its status is read again, locked, before anything is done)."""
    started = time.perf_counter()
    if first is None:
        try:
            with UnitOfWork(db) as uow:
                first = uow.inbox.get(inbox_id)
        except Exception as exc:
            _raise_if_storage(db, exc)
            raise
    if first is None or first.status != "received":
        return Outcome("skipped", "already handled")
    reading = Reading(MailRejected("not read yet"))

    def work(uow: UnitOfWork) -> Outcome:
        row = uow.inbox.get(inbox_id, lock=True)
        if row is None or row.status != "received":
            return Outcome("skipped", "already handled")
        try:
            outcome = _handle(uow, settings, row, reading, now)
        except GameError as exc:
            outcome = Outcome("rejected", str(exc))
        uow.inbox.mark(inbox_id, outcome.status, error=None if outcome.status == "done" else outcome.detail, game_id=outcome.game, now=now)
        return outcome

    try:
        reading = read_message(db, settings, first)  # before the transaction: it only decides and appends
        outcome = retrying(db, work)
    except Exception as exc:  # keep the message; record why, so an operator can retry it (pbem queue)
        fault = storage_fault(exc, db)
        if fault is not None:  # not the message's fault: it stays 'received', to be handled when the disk allows
            _note_waiting(db, inbox_id, fault)
            telemetry.mail_in(first.message_id, None, "waiting", str(fault), 0)
            raise fault from exc
        with UnitOfWork(db) as uow:
            uow.inbox.mark(inbox_id, "failed", error=f"{type(exc).__name__}: {exc}", now=now)
        telemetry.mail_in(first.message_id, None, "failed", f"{type(exc).__name__}: {exc}", 0)
        raise
    if outcome.status != "skipped":
        telemetry.mail_in(first.message_id, outcome.game, outcome.status, outcome.detail, (time.perf_counter() - started) * 1000)
    return outcome


def _raise_if_storage(db: Engine, exc: Exception) -> None:
    fault = storage_fault(exc, db)
    if fault is not None:
        raise fault from exc


def _note_waiting(db: Engine, inbox_id: int, fault: StorageFault) -> None:
    """Say in the inbox row why the message waits (`pbem queue` shows it); on a full disk this write may fail too."""
    try:
        with UnitOfWork(db) as uow:
            uow.inbox.note_waiting(inbox_id, f"waits: {fault}")
    except Exception:  # noqa: BLE001 - the message is kept either way; the reason is in the server's log
        pass


def process_backlog(db: Engine, settings: Settings, now: datetime) -> list[Outcome]:
    """Handle everything stored and not yet processed (after a crash or restart)."""
    with UnitOfWork(db) as uow:
        ids = [row.id for row in uow.inbox.unprocessed()]
    return [process(db, settings, i, now) for i in ids]


def ingest(db: Engine, settings: Settings, raw: bytes, mail_from: str, rcpt_tos: list[str], now: datetime) -> Outcome:
    """What the server does with one message: store, then process (a duplicate is not answered again).

    A message delivered again that is stored but not yet handled (the earlier
    delivery met a full disk after storing it, and told the MTA to retry) is
    handled now."""
    inbox_id, new = accept(db, raw, mail_from, rcpt_tos, now)
    if not new:
        with UnitOfWork(db) as uow:
            row = uow.inbox.get(inbox_id)
        if row is None or row.status != "received":
            return Outcome("duplicate", "this message was delivered before; nothing done")
        # kept by an earlier delivery that could not handle it (a full disk, a read-only database): handle it now
    return process(db, settings, inbox_id, now)

"""Bounced letters: which player they concern, kept in the game's log, the moderator told.

A bounce is matched to the letter it returns, first by the envelope address it
was sent to (each letter leaves with its own, see `pbem.mail.tokens`), then
by the Message-IDs in the returned headers, then by a reply address it was
sent to. Each one is recorded as a ``MailBounced`` event in the game of that
letter, so the moderator's log and `pbem state` show it; when a player's
count reaches ``Settings.bounce_limit`` the moderator gets one notice. A
bounce is never answered: the address it comes from cannot take mail.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pbem.mail.automatic import Automatic
from pbem.mail.inbound import InboundMail
from pbem.mail.tokens import parse_bounce_address, parse_reply_address
from pbem.rules.core.commands import NoteBounce
from pbem.rules.core.rejection import Rejection
from pbem.store.unit_of_work import UnitOfWork

from .batch import letters_for, mail_source, open_game
from .settings import Settings


@dataclass(frozen=True)
class Bounced:
    """Where a bounce was filed: the game and player, or why it could not be."""

    detail: str
    game_id: str | None = None
    player_id: int | None = None


def _letter_for(uow: UnitOfWork, settings: Settings, mail: InboundMail, envelope_to: list[str]):
    for address in [*envelope_to, *mail.to_addrs]:
        letter_id = parse_bounce_address(address, settings.local_part)
        if letter_id is not None and (row := uow.outbox.get(letter_id)) is not None:
            return row
    assert mail.automatic is not None
    for message_id in mail.automatic.original_ids:
        if (row := uow.outbox.by_message_id(message_id)) is not None:
            return row
    return None


def _player_for(uow: UnitOfWork, settings: Settings, mail: InboundMail, envelope_to: list[str]) -> tuple[str, int] | None:
    letter = _letter_for(uow, settings, mail, envelope_to)
    if letter is not None and letter.game_id:
        found = uow.players.by_email(letter.game_id, letter.recipient)
        if found:
            return letter.game_id, found[0].id
        return None

    def key_for(game_id: str) -> bytes | None:
        game = uow.games.get(game_id)
        return bytes.fromhex(game.reply_secret) if game else None

    for address in [*envelope_to, *mail.to_addrs]:
        found_player = parse_reply_address(address, key_for, settings.local_part)
        if found_player:
            return found_player
    return None


def bounce_counts(uow: UnitOfWork, game_id: str) -> dict[int, list[dict]]:
    """Each player's recorded bounces, oldest first (player id → event data with its time)."""
    out: dict[int, list[dict]] = {}
    for row in uow.events.read(game_id):
        if row.type == "MailBounced":
            out.setdefault(int(row.payload["player"]), []).append(
                {**row.payload, "at": (row.metadata or {}).get("recorded_at", "")}
            )
    return out


def record_bounce(
    uow: UnitOfWork, settings: Settings, mail: InboundMail, envelope_to: list[str], now: datetime, *, key: str
) -> Bounced:
    """File one bounce under its game and player; tell the moderator when the count reaches the limit.

    ``key`` is the stored message's key (its Message-ID, with the content's key when the ID was reused).
    """
    automatic: Automatic | None = mail.automatic
    assert automatic is not None and automatic.kind == "bounce"
    found = _player_for(uow, settings, mail, envelope_to)
    if found is None:
        return Bounced(f"bounce ({automatic.sign}) matches no letter of ours; recorded here only")
    game_id, player_id = found
    return file_bounce(uow, settings, game_id, player_id, automatic.status, automatic.diagnostic or automatic.sign,
                       mail_source(key), f"bounce:{key}", now)


def refused_by_relay(uow: UnitOfWork, settings: Settings, outbox_id: int, error: str, now: datetime) -> Bounced:
    """A letter the relay refused outright (a 5xx for its recipient, during the SMTP dialogue): a bounce, filed
    like one that comes back by mail, so the moderator sees it and the player's count goes up."""
    letter = uow.outbox.get(outbox_id)
    if letter is None or not letter.game_id:
        return Bounced("refused letter of no game")
    found = uow.players.by_email(letter.game_id, letter.recipient)
    if not found:
        return Bounced(f"refused letter to {letter.recipient}, who plays no seat of {letter.game_id}", letter.game_id)
    status = next((word for word in error.replace("(", " ").split() if word.count(".") == 2 and word[:1] in "45"), "")
    return file_bounce(uow, settings, letter.game_id, found[0].id, status, error[:300], f"relay:{outbox_id}",
                       f"bounce:relay:{outbox_id}", now)


def file_bounce(
    uow: UnitOfWork, settings: Settings, game_id: str, player_id: int, status: str, reason: str, source: str,
    dedupe: str, now: datetime,
) -> Bounced:
    """Record one bounce (a MailBounced event); tell the moderator when the player's count reaches the limit."""
    batch, game = open_game(uow, game_id, now)
    if batch.state.finished:
        return Bounced(f"bounce for player {player_id} of finished game {game_id}; recorded here only", game_id, player_id)
    try:
        batch.decide(NoteBounce(player_id, status, reason), actor="mail", source=source, dedupe=dedupe)
    except Rejection as exc:
        return Bounced(f"bounce for player {player_id} not recorded: {exc}", game_id, player_id)
    count = len(bounce_counts(uow, game_id).get(player_id, []))
    if count == settings.bounce_limit:
        player = uow.players.by_id(player_id)
        letters = letters_for(uow, settings, game, now)
        letters.notice(
            game.moderator_email,
            game_id,
            f"Mail to {player.name} keeps bouncing",
            [
                f"{count} letters to {player.name} <{player.email}> have bounced; the latest said: "
                f"{' '.join(x for x in (status, reason) if x)}.",
                "The player may not be reading the game's mail. Check the address with them; "
                "`pbem state GAME --as moderator` lists every player's bounces.",
            ],
            f"bounces:{game_id}:{player_id}:{count}",
        )
    return Bounced(f"bounce for player {player_id} recorded ({count} so far)", game_id, player_id)

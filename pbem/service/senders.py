"""Whose mail a message is: what fair turns, the flood limit and the order of one sender's messages go by.

The envelope sender is whatever the sending machine says, and anyone can give
a player's address. Keyed on it alone, a flood forged in a player's name was
counted, queued and set aside together with the player's own mail: a forger
could have a player's orders set aside (pbem.service.flood). A message sent
to a player's reply address whose token verifies (pbem.mail.tokens) comes
from someone who received that seat's letters, whatever its envelope sender
says: it is the seat's. Such a message is keyed on the seat; any other on its
envelope sender, as before. So a forged flood is counted and set aside under
the address it gives and never holds back, sets aside or runs ahead of the
player's replies, while a player's own loop (an auto-reply to his reply
address) is still limited, under his seat. The token of an earlier holder of
a seat (before a REPLACE) no longer verifies: his mail is keyed on its
envelope sender, never on the seat.

One sender's messages are handled in the order they came
(pbem.service.inbound.process); two keys' are not ordered between them. A
player's mail to the game's own address and his replies to his reply
address are two senders', as mail from two of his addresses always was: the
first cannot be told from a forgery in his name, and is not let through
ahead of it.

The seat's generation is read from the state this process remembers
(`RecentStates`), or loaded once; a seat handed over by another worker since
makes its new tokens fall back to the envelope sender until this process
loads the game again, never into another seat's key.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from sqlalchemy import Engine

from pbem.mail.tokens import parse_press_reply_address, parse_reply_address
from pbem.rules.table import seat_generation
from pbem.store.unit_of_work import UnitOfWork

from .fairness import sender_key
from .projector import RECENT, DamagedLog, load_state

#: How a seat's key begins: a space, which no envelope sender's key (an address, or "<>") holds.
SEAT = "seat "


class _NotInMemory(Exception):
    """Finding the key would read the database (``Senders.known``)."""


class Senders:
    """The key of each message's sender; thread-safe. Reads the database only for a game it has not seen.

    Given a unit of work (``uow``), its reads go through it; otherwise through
    a unit of work of its own, on ``db``.
    """

    def __init__(self, db: Engine | None, local: str) -> None:
        self.db = db
        self.local = local
        self._secrets: dict[str, bytes] = {}  # game id -> reply secret (it never changes)
        self._lock = threading.Lock()

    def key(self, mail_from: str | None, rcpt_tos: Iterable[str] | None, uow: UnitOfWork | None = None) -> str:
        """The seat of the first envelope recipient that is a genuine reply address, else the envelope sender."""
        return self._key(mail_from, rcpt_tos, uow, offline=False)

    def known(self, mail_from: str | None, rcpt_tos: Iterable[str] | None) -> str | None:
        """``key``, if it can be found without reading the database (the game's secret and state are in memory);
        else None. For the SMTP server's event loop, which must not wait for the database."""
        try:
            return self._key(mail_from, rcpt_tos, None, offline=True)
        except _NotInMemory:
            return None

    def _key(self, mail_from: str | None, rcpt_tos: Iterable[str] | None, uow: UnitOfWork | None,
             offline: bool) -> str:
        for address in rcpt_tos or ():
            try:
                secret, generation = (lambda game: self._secret(game, uow, offline),
                                      lambda game, player: self._generation(game, player, uow, offline))
                found = parse_reply_address(address, secret, self.local, generation)
                press = None if found else parse_press_reply_address(address, secret, self.local, generation)
                found = found or (press[:2] if press else None)  # a reply to press comes from the same seat
            except (DamagedLog, ValueError):  # a log that does not hold: no seat is vouched for by it
                found = None
            if found:
                game_id, player_id = found
                return f"{SEAT}{game_id}.{player_id}.{self._generation(game_id, player_id, uow, offline)}"
        return sender_key(mail_from or "")

    def _secret(self, game_id: str, uow: UnitOfWork | None, offline: bool) -> bytes | None:
        with self._lock:
            known = self._secrets.get(game_id)
        if known is not None:
            return known
        if offline:
            raise _NotInMemory
        game = self._read(lambda u: u.games.get(game_id), uow)
        if game is None:
            return None  # not kept: a stranger naming made-up games must not fill the memory
        secret = bytes.fromhex(game.reply_secret)
        with self._lock:
            self._secrets[game_id] = secret
        return secret

    def _generation(self, game_id: str, player_id: int, uow: UnitOfWork | None, offline: bool) -> int:
        if not player_id:
            return 0  # the moderator's reply address: no seat to hand over
        state = RECENT.peek(game_id)
        if state is None:
            if offline:
                raise _NotInMemory
            state = self._read(lambda u: load_state(u, game_id), uow)
        return seat_generation(state, player_id)

    def _read(self, read, uow: UnitOfWork | None):
        if uow is not None:
            return read(uow)
        assert self.db is not None, "Senders without a database reads only through a unit of work"
        with UnitOfWork(self.db) as own:
            return read(own)

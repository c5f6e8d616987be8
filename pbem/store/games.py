"""Games and their players (the parts of a game that are not events)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime
from typing import Any, Mapping

from sqlalchemy import Connection, Row, bindparam, select

from pbem.store.schema import GAME_STATUSES, games, players

# scrypt parameters: 16 MiB of memory, ~50 ms per check.
_SCRYPT_N = 2**14
_SCRYPT_R = 8
_SCRYPT_P = 1
_SCRYPT_LEN = 32


def seed_commitment(secret_seed: str) -> str:
    """The published commitment to a game's seed: sha256 of its UTF-8 bytes, hex."""
    return hashlib.sha256(secret_seed.encode("utf-8")).hexdigest()


def hash_secret(secret: str) -> str:
    """A salted scrypt hash of a player's secret: ``scrypt$n$r$p$salt$hash`` (hex)."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(
        secret.encode("utf-8"), salt=salt, n=_SCRYPT_N, r=_SCRYPT_R, p=_SCRYPT_P,
        dklen=_SCRYPT_LEN,
    )
    return f"scrypt${_SCRYPT_N}${_SCRYPT_R}${_SCRYPT_P}${salt.hex()}${digest.hex()}"


def check_secret(stored: str | None, secret: str) -> bool:
    """Whether ``secret`` matches a hash made by ``hash_secret`` (constant time)."""
    if not stored or secret is None:
        return False
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        expected = bytes.fromhex(digest)
        actual = hashlib.scrypt(
            secret.encode("utf-8"), salt=bytes.fromhex(salt), n=int(n), r=int(r),
            p=int(p), dklen=len(expected),
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, expected)


def normalize_email(email: str) -> str:
    return email.strip().lower()



# The lookups every mail makes, built once: SQLAlchemy then reuses their
# compiled form at once instead of building the statement and its cache key
# on every call (docs/performance.md).
_GAME = select(games).where(games.c.game_id == bindparam("game_id"))
_PLAYER = select(players).where(players.c.id == bindparam("player_id"))
_PLAYERS = select(players).where(players.c.game_id == bindparam("game_id")).order_by(players.c.id)


class Games:
    def __init__(self, conn: Connection):
        self.conn = conn

    def create(
        self,
        game_id: str,
        *,
        ruleset: str,
        moderator_email: str,
        now: datetime,
        options: Mapping[str, Any] | None = None,
        secret_seed: str | None = None,
        reply_secret: str | None = None,
        status: str = "setup",
    ) -> Row:
        """Create a game; a missing seed or reply secret is drawn from
        ``secrets`` (256 bits, hex). Returns the new row."""
        _check_status(status)
        if secret_seed is None:
            secret_seed = secrets.token_hex(32)
        if reply_secret is None:
            reply_secret = secrets.token_hex(32)
        self.conn.execute(
            games.insert().values(
                game_id=game_id,
                ruleset=ruleset,
                options=dict(options or {}),
                secret_seed=secret_seed,
                seed_commitment=seed_commitment(secret_seed),
                status=status,
                created_at=now,
                moderator_email=normalize_email(moderator_email),
                reply_secret=reply_secret,
            )
        )
        return self.get(game_id)

    def get(self, game_id: str) -> Row | None:
        return self.conn.execute(_GAME, {"game_id": game_id}).first()

    def set_status(self, game_id: str, status: str) -> None:
        _check_status(status)
        result = self.conn.execute(
            games.update().where(games.c.game_id == game_id).values(status=status)
        )
        if result.rowcount != 1:
            raise KeyError(f"no game {game_id!r}")

    def list(self, status: str | None = None) -> list[Row]:  # noqa: A003
        """Games ordered by creation (then id); only those in ``status`` if given."""
        query = select(games).order_by(games.c.created_at, games.c.game_id)
        if status is not None:
            query = query.where(games.c.status == status)
        return [row for row in self.conn.execute(query)]


def _check_status(status: str) -> None:
    if status not in GAME_STATUSES:
        raise ValueError(f"unknown game status {status!r}; one of {GAME_STATUSES}")


class Players:
    """The players of games, within one transaction.

    A letter names its reader's address, so one order reads the same few
    player rows again and again (the acknowledgement, the press letters, the
    prompts, keeping nations in step): rows read are kept by id until this
    object writes a player or the game is locked (`forget`), and a row that
    was not found is looked for again.
    """

    hash_secret = staticmethod(hash_secret)
    check_secret = staticmethod(check_secret)

    def __init__(self, conn: Connection):
        self.conn = conn
        self._read: dict[int, Row] = {}

    def forget(self) -> None:
        """Read every row afresh from now on (another transaction may have changed one before a lock was taken)."""
        self._read.clear()

    def add(
        self,
        game_id: str,
        name: str,
        email: str,
        nation: str | None = None,
        secret: str | None = None,
    ) -> int:
        """Add a player; the email is lower-cased, the secret stored hashed."""
        self._read.clear()
        result = self.conn.execute(
            players.insert().values(
                game_id=game_id,
                name=name,
                email=normalize_email(email),
                nation=nation,
                secret_hash=None if secret is None else hash_secret(secret),
            )
        )
        return result.inserted_primary_key[0]

    def list(self, game_id: str) -> list[Row]:  # noqa: A003
        rows = list(self.conn.execute(_PLAYERS, {"game_id": game_id}))
        self._read.update((row.id, row) for row in rows)
        return rows

    def games_with_domain(self, domain: str) -> list[str]:
        """The games with a player whose address is in ``domain`` (the seats bots play: pbem.service.bot_seats),
        in one scan of the players table, not by loading each game"""
        rows = self.conn.execute(
            select(players.c.game_id).where(players.c.email.like(f"%@{domain.lower()}")).distinct()
        ).scalars().all()
        return sorted(rows)

    def by_email(self, game_id: str, email: str) -> list[Row]:
        """Every player of the game with this address (one person may play
        several nations), by id; empty if none."""
        return [
            row
            for row in self.conn.execute(
                select(players)
                .where(players.c.game_id == game_id)
                .where(players.c.email == normalize_email(email))
                .order_by(players.c.id)
            )
        ]

    def by_id(self, player_id: int) -> Row | None:
        row = self._read.get(player_id)
        if row is None:
            row = self.conn.execute(_PLAYER, {"player_id": player_id}).first()
            if row is not None:
                self._read[player_id] = row
        return row

    def by_name(self, game_id: str, name: str) -> Row | None:
        return self.conn.execute(
            select(players)
            .where(players.c.game_id == game_id)
            .where(players.c.name == name)
        ).first()

    def by_nation(self, game_id: str, nation: str) -> Row | None:
        return self.conn.execute(
            select(players)
            .where(players.c.game_id == game_id)
            .where(players.c.nation == nation)
        ).first()

    def set_nation(self, player_id: int, nation: str | None) -> None:
        self._update(player_id, nation=nation)

    def hand_over(self, player_id: int, name: str, email: str, secret: str) -> None:
        """A replacement takes the seat: new name, address of record and SECRET (the old one stops working)."""
        self._update(player_id, name=name, email=normalize_email(email), secret_hash=hash_secret(secret))

    def set_secret(self, player_id: int, secret: str | None) -> None:
        self._update(
            player_id, secret_hash=None if secret is None else hash_secret(secret)
        )

    def verify_secret(self, player_id: int, secret: str) -> bool:
        row = self.by_id(player_id)
        return row is not None and check_secret(row.secret_hash, secret)

    def _update(self, player_id: int, **values) -> None:
        self._read.clear()
        result = self.conn.execute(
            players.update().where(players.c.id == player_id).values(**values)
        )
        if result.rowcount != 1:
            raise KeyError(f"no player with id {player_id}")

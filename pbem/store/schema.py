"""The store's tables, as SQLAlchemy Core metadata.

The tables are *created* only by the alembic migrations in ``migrations/``;
this module is the reference the code queries against, and
``tests/store/test_migrations.py`` checks that the two agree on SQLite and on
PostgreSQL.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

GAME_STATUSES = ("setup", "active", "finished", "imported")
INBOX_STATUSES = ("received", "done", "rejected", "failed")


class UTCDateTime(TypeDecorator):
    """A timestamp that is always UTC-aware in Python, whatever the backend.

    PostgreSQL stores ``timestamp with time zone``; SQLite stores text. Values
    are converted to UTC before they are bound (a naive datetime is taken to be
    UTC already), so text comparisons on SQLite order correctly, and values
    read back are aware datetimes in UTC on both backends.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected a datetime, got {type(value).__name__}")
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        value = value.astimezone(timezone.utc)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)


# Global position: BIGINT on PostgreSQL, but on SQLite it must be spelled
# INTEGER to be the rowid alias that autoincrements.
Position = BigInteger().with_variant(Integer(), "sqlite")

events = Table(
    "events",
    metadata,
    Column("position", Position, primary_key=True, autoincrement=True),
    Column("game_id", String(100), nullable=False),
    Column("version", Integer, nullable=False),
    Column("type", String(100), nullable=False),
    Column("schema_version", Integer, nullable=False),
    # Canonical JSON text of the payload (sorted keys, no blanks).
    Column("payload", Text, nullable=False),
    # SQL name "metadata"; Python key "meta" (``events.c.meta``) because
    # ``metadata`` is taken on SQLAlchemy objects.
    Column("metadata", Text, key="meta", nullable=False),
    Column("dedupe_key", String(255), nullable=True),
    Column("prev_hash", String(64), nullable=False),
    Column("hash", String(64), nullable=False),
    Column("superseded_by", Integer, nullable=True),
    UniqueConstraint("game_id", "version"),
    UniqueConstraint("dedupe_key"),
    CheckConstraint("version >= 1", name="version_positive"),
    sqlite_autoincrement=True,
)

games = Table(
    "games",
    metadata,
    Column("game_id", String(100), primary_key=True),
    Column("ruleset", String(100), nullable=False),
    Column("options", JSON, nullable=False),
    Column("secret_seed", String(200), nullable=False),
    Column("seed_commitment", String(64), nullable=False),
    Column("status", String(20), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("moderator_email", String(320), nullable=False),
    Column("reply_secret", String(128), nullable=False),
    CheckConstraint(
        "status IN ('setup', 'active', 'finished', 'imported')", name="status_known"
    ),
)

players = Table(
    "players",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "game_id",
        String(100),
        ForeignKey("games.game_id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("name", String(100), nullable=False),
    Column("email", String(320), nullable=False),
    Column("nation", String(50), nullable=True),
    Column("secret_hash", String(255), nullable=True),
    UniqueConstraint("game_id", "name"),
    Index(None, "game_id", "email"),
)

observers = Table(
    "observers",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "game_id",
        String(100),
        ForeignKey("games.game_id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("name", String(100), nullable=False),
    Column("email", String(320), nullable=False),
    Column("asked_at", UTCDateTime, nullable=False),
    Index(None, "game_id", "email"),
)

inbox = Table(
    "inbox",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("message_id", String(998), nullable=False),
    Column("received_at", UTCDateTime, nullable=False),
    Column("envelope_from", String(998), nullable=False),
    Column("envelope_to", JSON, nullable=False),
    Column("raw", LargeBinary, nullable=False),
    Column("status", String(20), nullable=False),
    Column("error", Text, nullable=True),
    Column("game_id", String(100), nullable=True),
    Column("processed_at", UTCDateTime, nullable=True),
    Column("attempts", Integer, nullable=False),
    UniqueConstraint("message_id"),
    Index(None, "status", "id"),
    CheckConstraint(
        "status IN ('received', 'done', 'rejected', 'failed')", name="status_known"
    ),
)

outbox = Table(
    "outbox",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("message_id", String(998), nullable=False),
    Column("game_id", String(100), nullable=True),
    Column("kind", String(20), nullable=False),
    Column("recipient", String(998), nullable=False),
    Column("raw", LargeBinary, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", UTCDateTime, nullable=False),
    Column("sent_at", UTCDateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    UniqueConstraint("message_id"),
    Index(None, "sent_at", "next_attempt_at"),
    Index(None, "game_id"),
)

snapshots = Table(
    "snapshots",
    metadata,
    Column("game_id", String(100), nullable=False),
    Column("version", Integer, nullable=False),
    Column("state", Text, nullable=False),
    Column("engine_version", String(100), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("game_id", "version"),
)

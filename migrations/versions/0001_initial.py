"""initial schema: events, games, players, inbox, outbox, snapshots

Revision ID: 0001
Revises:
Create Date: 2024-11-22

Written by hand to match pbem/store/schema.py; tests/store/test_migrations.py
checks that they agree on SQLite and PostgreSQL.
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: Union[str, None] = None
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# Frozen copy of the types this revision created (migrations must not follow
# later edits to schema.py).
Position = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("position", Position, autoincrement=True, nullable=False),
        sa.Column("game_id", sa.String(100), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(100), nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("metadata", sa.Text(), nullable=False),
        sa.Column("dedupe_key", sa.String(255), nullable=True),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.Column("superseded_by", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("position", name=op.f("pk_events")),
        sa.UniqueConstraint("game_id", "version", name=op.f("uq_events_game_id_version")),
        sa.UniqueConstraint("dedupe_key", name=op.f("uq_events_dedupe_key")),
        sa.CheckConstraint("version >= 1", name=op.f("ck_events_version_positive")),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "games",
        sa.Column("game_id", sa.String(100), nullable=False),
        sa.Column("ruleset", sa.String(100), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("secret_seed", sa.String(200), nullable=False),
        sa.Column("seed_commitment", sa.String(64), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("moderator_email", sa.String(320), nullable=False),
        sa.Column("reply_secret", sa.String(128), nullable=False),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_games")),
        sa.CheckConstraint(
            "status IN ('setup', 'active', 'finished')", name=op.f("ck_games_status_known")
        ),
    )
    op.create_table(
        "players",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("game_id", sa.String(100), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("nation", sa.String(50), nullable=True),
        sa.Column("secret_hash", sa.String(255), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_players")),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.game_id"],
            name=op.f("fk_players_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("game_id", "name", name=op.f("uq_players_game_id_name")),
    )
    op.create_index("ix_players_game_id_email", "players", ["game_id", "email"])
    op.create_table(
        "inbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("message_id", sa.String(998), nullable=False),
        sa.Column("received_at", Timestamp, nullable=False),
        sa.Column("envelope_from", sa.String(998), nullable=False),
        sa.Column("envelope_to", sa.JSON(), nullable=False),
        sa.Column("raw", sa.LargeBinary(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("game_id", sa.String(100), nullable=True),
        sa.Column("processed_at", Timestamp, nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_inbox")),
        sa.UniqueConstraint("message_id", name=op.f("uq_inbox_message_id")),
        sa.CheckConstraint(
            "status IN ('received', 'done', 'rejected', 'failed')",
            name=op.f("ck_inbox_status_known"),
        ),
    )
    op.create_index("ix_inbox_status_id", "inbox", ["status", "id"])
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("message_id", sa.String(998), nullable=False),
        sa.Column("game_id", sa.String(100), nullable=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("recipient", sa.String(998), nullable=False),
        sa.Column("raw", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", Timestamp, nullable=False),
        sa.Column("sent_at", Timestamp, nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
        sa.UniqueConstraint("message_id", name=op.f("uq_outbox_message_id")),
    )
    op.create_index(
        "ix_outbox_sent_at_next_attempt_at", "outbox", ["sent_at", "next_attempt_at"]
    )
    op.create_index("ix_outbox_game_id", "outbox", ["game_id"])
    op.create_table(
        "snapshots",
        sa.Column("game_id", sa.String(100), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("engine_version", sa.String(100), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("game_id", "version", name=op.f("pk_snapshots")),
    )


def downgrade() -> None:
    op.drop_table("snapshots")
    op.drop_index("ix_outbox_game_id", table_name="outbox")
    op.drop_index("ix_outbox_sent_at_next_attempt_at", table_name="outbox")
    op.drop_table("outbox")
    op.drop_index("ix_inbox_status_id", table_name="inbox")
    op.drop_table("inbox")
    op.drop_index("ix_players_game_id_email", table_name="players")
    op.drop_table("players")
    op.drop_table("games")
    op.drop_table("events")

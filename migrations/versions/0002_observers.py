"""observers: who asked to watch a game, and at which address

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25

The log keeps an observer's number and name (ObserverAsked, ObserverJoined);
his address stays here, beside the players', out of every export.
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: Union[str, None] = "0001"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "observers",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("game_id", sa.String(100), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("asked_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_observers")),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.game_id"],
            name=op.f("fk_observers_game_id_games"),
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_observers_game_id_email", "observers", ["game_id", "email"])


def downgrade() -> None:
    op.drop_index("ix_observers_game_id_email", table_name="observers")
    op.drop_table("observers")

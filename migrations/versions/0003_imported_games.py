"""games: the status `imported`, for a game brought in from another installation's export

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25

An imported game is there to be read, replayed and verified (`pbem import`):
its players have no real addresses and its seed may be unrevealed, so the
clock must never play it. A status of its own says so to every loop that
plays games.
"""
from __future__ import annotations

from typing import Sequence, Union

from alembic import op

revision: str = "0003"
down_revision: Union[str, None] = "0002"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_constraint(op.f("ck_games_status_known"), type_="check")
        batch.create_check_constraint("status_known", "status IN ('setup', 'active', 'finished', 'imported')")


def downgrade() -> None:
    op.execute("UPDATE games SET status = 'finished' WHERE status = 'imported'")
    with op.batch_alter_table("games") as batch:
        batch.drop_constraint(op.f("ck_games_status_known"), type_="check")
        batch.create_check_constraint("status_known", "status IN ('setup', 'active', 'finished')")

"""Cached game states, so a projector need not fold the whole log."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, select

from pbem.store.schema import snapshots


class Snapshots:
    def __init__(self, conn: Connection):
        self.conn = conn

    def save(
        self,
        game_id: str,
        version: int,
        state_json: str,
        engine_version: str,
        now: datetime,
    ) -> None:
        """Store the state after ``version``; replaces a snapshot at that version."""
        key = (snapshots.c.game_id == game_id) & (snapshots.c.version == version)
        values = {"state": state_json, "engine_version": engine_version, "created_at": now}
        updated = self.conn.execute(snapshots.update().where(key).values(**values))
        if updated.rowcount == 0:
            self.conn.execute(
                snapshots.insert().values(game_id=game_id, version=version, **values)
            )

    def latest(
        self, game_id: str, at_most: int | None = None
    ) -> tuple[int, str] | None:
        """``(version, state_json)`` of the newest snapshot (``version <= at_most``)."""
        query = (
            select(snapshots.c.version, snapshots.c.state)
            .where(snapshots.c.game_id == game_id)
            .order_by(snapshots.c.version.desc())
            .limit(1)
        )
        if at_most is not None:
            query = query.where(snapshots.c.version <= at_most)
        row = self.conn.execute(query).first()
        return None if row is None else (row.version, row.state)

    def engine_version(self, game_id: str, version: int) -> str | None:
        return self.conn.execute(
            select(snapshots.c.engine_version)
            .where(snapshots.c.game_id == game_id)
            .where(snapshots.c.version == version)
        ).scalar_one_or_none()

    def discard_after(self, game_id: str, version: int) -> int:
        """Drop snapshots newer than ``version`` (after a rollback, or an
        engine change that invalidates them). Returns how many were dropped."""
        result = self.conn.execute(
            snapshots.delete()
            .where(snapshots.c.game_id == game_id)
            .where(snapshots.c.version > version)
        )
        return result.rowcount

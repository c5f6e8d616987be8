"""Who asked to watch a game, at which address.

The game's log knows an observer by his number (this table's id) and name;
his address is kept here, as players' addresses are kept in ``players``, so
no export or audit of the log carries it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, Row, select

from pbem.store.games import normalize_email
from pbem.store.schema import observers


class Observers:
    def __init__(self, conn: Connection):
        self.conn = conn

    def add(self, game_id: str, name: str, email: str, now: datetime) -> int:
        """Record a request to watch; its id is the observer's number in the game's log."""
        result = self.conn.execute(
            observers.insert().values(game_id=game_id, name=name[:100], email=normalize_email(email), asked_at=now)
        )
        return result.inserted_primary_key[0]

    def get(self, observer_id: int) -> Row | None:
        return self.conn.execute(select(observers).where(observers.c.id == observer_id)).first()

    def by_email(self, game_id: str, email: str) -> list[Row]:
        """Every request from this address for the game, oldest first."""
        query = (
            select(observers)
            .where(observers.c.game_id == game_id)
            .where(observers.c.email == normalize_email(email))
            .order_by(observers.c.id)
        )
        return list(self.conn.execute(query))

    def count(self, game_id: str) -> int:
        return len(self.conn.execute(select(observers.c.id).where(observers.c.game_id == game_id)).all())

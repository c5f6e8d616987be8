"""One game inside one unit of work: its state, the events recorded, the letters they cause.

Every use case (orders, a deadline, a bounce, a reminder) opens the game
here, under the game's lock, decides commands against the state it holds and
records the events; a stale writer (another process appended first) is
retried from a fresh state by `retrying`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import TypeVar

from sqlalchemy import Engine

from pbem.mail.render import Renderer
from pbem.orders.moderator import DEADLINE_FORMAT as _DEADLINE_FORMAT
from pbem.rules import engine as rules
from pbem.rules.core.commands import Command
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState
from pbem.store.events import ConcurrencyError, NewEvent
from pbem.store.unit_of_work import UnitOfWork

from .letters import Letters
from .projector import load_state, maybe_snapshot
from .settings import Settings

#: How deadlines are written in the log and shown in UTC (the moderator's EXTEND reads them so).
DEADLINE_FORMAT = _DEADLINE_FORMAT

T = TypeVar("T")


class GameError(ValueError):
    """A request the service refuses, with a message for the person who made it."""


def retrying(db: Engine, work: Callable[[UnitOfWork], T], attempts: int = 5) -> T:
    """Run ``work`` in a unit of work, again from scratch if another writer won the race."""
    for attempt in range(attempts):
        try:
            with UnitOfWork(db) as uow:
                return work(uow)
        except ConcurrencyError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


@dataclass
class Batch:
    """The state of one game inside a unit of work, and what was recorded in it."""

    uow: UnitOfWork
    state: GameState
    draws: Draws
    now: datetime
    chain_head: str = ""
    events: list[Event] = field(default_factory=list)

    def record(
        self, events: Sequence[Event], *, actor: str, source: str, dedupe: str | None = None, note: dict | None = None
    ) -> None:
        """Append ``events``; ``note`` is the service's own bookkeeping, kept in the metadata, outside what verify re-derives."""
        meta = {
            "actor": actor,
            "source": source,
            "engine_version": rules.ENGINE_VERSION,
            "recorded_at": self.now.isoformat(),
            **(note or {}),
        }
        new = [
            NewEvent(e.type, e.payload(), meta, dedupe_key=dedupe if i == 0 else None) for i, e in enumerate(events)
        ]
        recorded = self.uow.events.append(self.state.game_id, self.state.version, new)
        before = self.state
        self.state = rules.fold(self.state, events)
        self.events.extend(events)
        self.chain_head = recorded[-1].hash
        maybe_snapshot(self.uow, self.state, before.version, self.now)

    def decide(
        self, command: Command, *, actor: str, source: str, dedupe: str | None = None, note: dict | None = None
    ) -> list[Event]:
        events = rules.decide(self.state, command, self.draws)
        self.record(events, actor=actor, source=source, dedupe=dedupe, note=note)
        return events


def open_game(uow: UnitOfWork, game_id: str, now: datetime) -> tuple[Batch, object]:
    """The game's current state under its lock, ready to record; and its row (options, keys)."""
    uow.lock_game(game_id)
    game = uow.games.get(game_id)
    if game is None:
        raise GameError(f"there is no game called {game_id!r}")
    state = load_state(uow, game_id)
    _, head = uow.events.head(game_id)
    return Batch(uow, state, Draws(game.secret_seed), now, chain_head=head), game


@lru_cache(maxsize=1)
def renderer() -> Renderer:
    """One renderer per process: jinja2 compiles each template once and caches it."""
    return Renderer()


def letters_for(uow: UnitOfWork, settings: Settings, game, now: datetime) -> Letters:
    """The letter writer of one game in this unit of work."""
    return Letters(uow, settings, renderer(), bytes.fromhex(game.reply_secret), now)


def deadline_hours(game, settings: Settings, phase: str | None = None) -> int:
    """Hours for a step: the game's ``deadline-hours-<phase>``, else its ``deadline-hours``, else the server's."""
    options = game.options or {}
    return int(options.get(f"deadline-hours-{phase}", options.get("deadline-hours", settings.deadline_hours)))


def sync_nations(uow: UnitOfWork, game_id: str) -> None:
    """Keep the players table's nation column in step with the log (for lookups by nation)."""
    state = load_state(uow, game_id)
    for player in state.players:
        row = uow.players.by_id(player.id)
        if row is not None and row.nation != player.nation:
            uow.players.set_nation(player.id, player.nation)

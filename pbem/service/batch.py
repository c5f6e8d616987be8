"""One game inside one unit of work: its state, the events recorded, the letters they cause.

Every use case (orders, a deadline, a bounce, a reminder) opens the game
here, under the game's lock, decides commands against the state it holds and
records the events; a stale writer (another process appended first) is
retried from a fresh state by `retrying`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import TypeVar

from sqlalchemy import Engine

from pbem.mail.render import Renderer
from pbem.orders.moderator import DEADLINE_FORMAT as _DEADLINE_FORMAT
from pbem.rules import engine as rules
from pbem.rules.branches import fold_log, roll_back
from pbem.rules.core.commands import Command, RevealSeed, RollBack
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState
from pbem.store.events import ConcurrencyError, NewEvent
from pbem.store.unit_of_work import UnitOfWork

from .letters import Letters
from .projector import (
    IMPORTED,
    RECENT,
    load_checked,
    load_state,
    maybe_snapshot,
    readable,
)
from .settings import Settings

#: How deadlines are written in the log and shown in UTC (the moderator's EXTEND reads them so).
DEADLINE_FORMAT = _DEADLINE_FORMAT

T = TypeVar("T")


def mail_source(message_id: str) -> str:
    """The ``source`` recorded for an order that came by mail: ``mail:`` and 16 hex digits of the SHA-256 of its
    Message-ID. A moderator holding the mail can match it; the log, which players export, names no mail server."""
    return "mail:" + hashlib.sha256(message_id.encode("utf-8")).hexdigest()[:16]


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
    seed: str = ""  # the game's secret seed: only a RevealSeed command carries it into the log

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
        before, before_head = self.state, self.chain_head
        game_id = self.state.game_id
        self.state = fold_log(game_id, events, start=self.state, state_at=lambda v: load_state(self.uow, game_id, upto=v))
        self.events.extend(events)
        self.chain_head = recorded[-1].hash
        maybe_snapshot(self.uow, self.state, before.version, self.now)
        RECENT.remember(self.state, self.chain_head)  # kept only while the log holds this hash (projector.py)
        self._remember_phase_start(before, before_head, events, recorded)

    def _remember_phase_start(self, before: GameState, before_head: str, events: Sequence[Event], recorded) -> None:
        """When these events began a phase, the state it began from (its report is told from it), for
        `load_state`; kept only while the log holds the hash of the event it ends with."""
        start = self.state.phase_began - 1
        if not before.version <= start < self.state.version or any(e.type == "RolledBack" for e in events):
            return
        taken = start - before.version  # the events up to the phase's start
        state = rules.fold(before, events[:taken]) if taken else before
        RECENT.remember_phase_start(state, recorded[taken - 1].hash if taken else before_head)

    def decide(
        self, command: Command, *, actor: str, source: str, dedupe: str | None = None, note: dict | None = None
    ) -> list[Event]:
        if isinstance(command, RollBack):
            return self._roll_back(command, actor=actor, source=source, dedupe=dedupe, note=note)
        if isinstance(command, RevealSeed) and not command.seed:  # the order names no seed: the server holds it
            command = RevealSeed(self.seed, command.to)
        events = rules.decide(self.state, command, self.draws)
        self.record(events, actor=actor, source=source, dedupe=dedupe, note=note)
        return events


    def _roll_back(
        self, command: RollBack, *, actor: str, source: str, dedupe: str | None, note: dict | None = None
    ) -> list[Event]:
        """Record a rollback, decided against the whole log, and mark what it supersedes (the column is an index)."""
        game_id = self.state.game_id
        events = roll_back(readable(self.uow.events.read(game_id)), command, game_id)
        self.record(events, actor=actor, source=source, dedupe=dedupe, note=note)
        self.uow.events.mark_superseded(game_id, events[0].data["to"], self.state.version - 1, self.state.version)
        return events


def open_game(uow: UnitOfWork, game_id: str, now: datetime) -> tuple[Batch, object]:
    """The game's current state under its lock, ready to record; and its row (options, keys)."""
    uow.lock_game(game_id)
    game = uow.games.get(game_id)
    if game is None:
        raise GameError(f"there is no game called {game_id!r}")
    if game.status == IMPORTED:
        raise GameError(f"game {game_id} was imported from an export: it is read, replayed and verified here, not played")
    state = load_checked(uow, game_id)  # a damaged log is never played on: DamagedLog, and the message waits
    _, head = uow.events.head(game_id)
    return Batch(uow, state, Draws(game.secret_seed), now, chain_head=head, seed=game.secret_seed), game


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

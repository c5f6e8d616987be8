"""Deadlines passing: defaults for the missing orders, and a word to whoever missed one.

The clock (`pbem serve` every half minute, or `pbem tick` from cron) calls
`pass_deadlines`. A game the moderator paused passes none. A player who
missed a deadline is told what was played for him; when his misses reach
the game's ``missed-limit`` (``PBEM_MISSED_LIMIT``, default 2), the
moderator is asked to find a replacement.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import Engine

from pbem.rules import engine as rules
from pbem.rules import table
from pbem.rules.core.commands import Moderate, PassDeadline
from pbem.store.unit_of_work import UnitOfWork

from .batch import (
    DEADLINE_FORMAT,
    Batch,
    letters_for,
    open_game,
    retrying,
    sync_nations,
)
from .letters import Letters
from .moderation import resend_prompts, tell
from .projector import IMPORTED, DamagedLog
from .settings import Settings
from .steps import after_change


def _missed_limit(game, settings: Settings) -> int:
    return int((game.options or {}).get("missed-limit", settings.missed_limit))


def _warn_missed(uow: UnitOfWork, batch: Batch, letters: Letters, game, settings: Settings, asked: dict) -> None:
    """After a deadline passed: each player who missed it is told what was done for him; at the limit, the moderator.

    Misses are counted from the log: the clock's ``DeadlinePassed`` events note
    in their metadata who was still asked.
    """
    counts: dict[int, int] = {}
    for recorded in uow.events.read(batch.state.game_id):
        if recorded.type == "DeadlinePassed":
            for pid in (recorded.metadata or {}).get("missed", []):
                counts[pid] = counts.get(pid, 0) + 1
        elif recorded.type == "PlayerReplaced":  # misses are the person's, not the seat's
            counts.pop(recorded.payload["player"], None)
    limit = _missed_limit(game, settings)
    for prompt in asked.values():
        player = batch.state.player(prompt.player_id)
        label = f"{player.name} ({player.nation})" if player.nation else player.name
        count = counts.get(player.id, 0)
        letters.notice(
            uow.players.by_id(player.id).email,
            batch.state.game_id,
            "You missed a deadline",
            [
                f"{label}: no orders came for this step before its deadline, so the default was applied: {prompt.default}.",
                f"That is {count} missed deadline{'s' if count != 1 else ''} in this game"
                + (f"; after {limit} the moderator is asked to find a replacement." if limit else "."),
                "Going away? Tell the moderator, or reply STATUS to see what is asked of you now.",
            ],
            f"missed:{batch.state.version}:{player.id}",
            reply_to=letters.reply_to(batch.state, player),
            turn=batch.state.turn,
        )
        if limit and count == limit and game.moderator_email != settings.sender:
            letters.notice(
                game.moderator_email,
                batch.state.game_id,
                f"{player.name} has missed {count} deadline{'s' if count != 1 else ''}",
                [
                    f"{label} sent no orders before {count} deadline{'s' if count != 1 else ''}; the defaults were played.",
                    f"If {player.name} has gone: REPLACE {player.nation or player.name} WITH <name> <email> <reason> "
                    f"hands the seat to someone new, KICK {player.nation or player.name} <reason> lets it play by its "
                    "defaults meanwhile; or ANNOUNCE a word to the table.",
                ],
                f"missed-limit:{player.id}:{count}",
                reply_to=letters.moderator_reply_to(batch.state),
            )


#: Days of deadline extension one player's absences may take in a game, unless the game sets ``absence-days``.
ABSENCE_DAYS = 14


def _extend_for_absence(uow: UnitOfWork, batch: Batch, game, settings: Settings, now: datetime) -> bool:
    """A deadline falls while a player still asked is away: under the game's ``absence=extend`` (the
    default) it moves to the day after he is back, within his allowance of ``absence-days``; the table is told.
    """
    options = game.options or {}
    if options.get("absence", "extend") != "extend":
        return False
    state = batch.state
    due = datetime.strptime(state.deadline, DEADLINE_FORMAT)
    away = table.absences(state)
    used: dict[int, int] = {}
    for recorded in uow.events.read(state.game_id):
        note = (recorded.metadata or {}).get("absence")
        if note:
            used[note["player"]] = used.get(note["player"], 0) + note["hours"]
    allowance = int(options.get("absence-days", ABSENCE_DAYS)) * 24
    for prompt in rules.pending(state).values():
        absence = away.get(prompt.player_id)
        if not absence or not absence[0] <= due.date().isoformat() <= absence[1]:
            continue
        back = datetime.fromisoformat(absence[1]) + timedelta(days=1, hours=due.hour, minutes=due.minute)
        hours = min(-(-int((back - due).total_seconds()) // 3600), allowance - used.get(prompt.player_id, 0))
        if hours <= 0:
            continue
        player = state.player(prompt.player_id)
        new_due = (due + timedelta(hours=hours)).strftime(DEADLINE_FORMAT)
        reason = f"{player.name} is away until {absence[1]}"
        batch.decide(
            Moderate("extend", reason, due=new_due, hours=hours), actor="clock", source="scheduler",
            note={"absence": {"player": player.id, "hours": hours}},
        )
        letters = letters_for(uow, settings, game, now)
        text = f"The deadline was extended by {hours} hours, to {new_due}: {reason}."
        tell(batch, letters, state, moderator=game.moderator_email, said=text)
        resend_prompts(batch, letters, state)  # the letter a player answers carries the deadline that holds
        return True
    return False


def _missed(uow: UnitOfWork, state) -> list[int]:
    """Who missed this deadline: asked, not away by an announced absence, and silent since the deadline was set
    (a player whose moves were taken but who never sent HALT did not miss it; his step was finished for him)."""
    away = table.absences(state)
    day = datetime.strptime(state.deadline, DEADLINE_FORMAT).date().isoformat() if state.deadline else ""
    spoke: set[str] = set()
    for recorded in uow.events.read(state.game_id):
        if recorded.type == "DeadlineSet":
            spoke.clear()
        elif (recorded.metadata or {}).get("actor", "").startswith("player:"):
            spoke.add(recorded.metadata["actor"])
    out = set()
    for prompt in rules.pending(state).values():
        absence = away.get(prompt.player_id)
        if absence and absence[0] <= day <= absence[1]:
            continue
        if f"player:{prompt.player_id}" not in spoke:
            out.add(prompt.player_id)
    return sorted(out)


def pass_deadlines(db: Engine, settings: Settings, *, now: datetime, force_game: str | None = None) -> list[str]:
    """Apply defaults wherever a deadline has passed; returns the games that moved."""
    stamp = now.strftime(DEADLINE_FORMAT)
    with UnitOfWork(db) as uow:
        candidates = [g.game_id for g in uow.games.list() if g.status != IMPORTED] if force_game is None else [force_game]
    moved = []
    for game_id in candidates:

        def work(uow: UnitOfWork, game_id: str = game_id) -> bool:
            batch, game = open_game(uow, game_id, now)
            state = batch.state
            if rules.paused(state):  # a turn nobody had to act in: go on at the next tick
                batch.decide(PassDeadline("clock"), actor="clock", source="scheduler")
                after_change(batch, letters_for(uow, settings, game, now), game, settings, state)
                return True
            if not rules.pending(state):
                return False
            if force_game is None and table.paused_by_moderator(state) is not None:
                return False  # the moderator paused it: no deadline passes until RESUME
            if force_game is None and (state.deadline is None or state.deadline > stamp):
                return False
            if force_game is None and _extend_for_absence(uow, batch, game, settings, now):
                return True
            missed = [] if force_game else _missed(uow, state)
            batch.decide(
                PassDeadline("moderator" if force_game else "clock"), actor="clock", source="scheduler", note={"missed": missed}
            )
            letters = letters_for(uow, settings, game, now)
            if missed:
                asked = {who: p for who, p in rules.pending(state).items() if p.player_id in missed}
                _warn_missed(uow, batch, letters, game, settings, asked)
            after_change(batch, letters, game, settings, state)
            sync_nations(uow, game_id)
            return True

        try:
            if retrying(db, work):
                moved.append(game_id)
        except DamagedLog as exc:  # named in the log each time; the other games' deadlines still pass
            logging.getLogger("pbem.deadlines").error("%s", exc)
    return moved

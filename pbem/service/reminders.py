"""One reminder per step to each player still asked, a set time before the deadline.

Players of a months-long game forget; a reminder a few hours before the
deadline saves most missed orders. It goes once per step and deadline (the
letter's Message-ID is made from them, so a second pass of the clock finds
it sent), to the players still asked only, with the question and the order
block to edit. How early: the game option ``reminder-hours``, else
``PBEM_REMINDER_HOURS`` (default 12), but no sooner than halfway through
the step; 0 turns reminders off.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone

from sqlalchemy import Engine

from pbem.mail.render import RenderedMail, build_message, make_message_id
from pbem.mail.tokens import is_bot_address
from pbem.rules import engine as rules
from pbem.rules import table
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.state import GameState
from pbem.rules.turn import phase_title
from pbem.store.unit_of_work import UnitOfWork

from .batch import DEADLINE_FORMAT, deadline_hours, letters_for, retrying
from .letters import Letters
from .projector import IMPORTED, DamagedLog, load_state
from .settings import Settings


def _reminder_hours(game, settings: Settings, phase: str) -> float:
    """How long before the deadline to remind: the option, but never sooner than halfway through the step.

    A six-hour step with the usual twelve hours' notice would remind with the
    prompt itself; it reminds three hours before its deadline instead.
    """
    wanted = int((game.options or {}).get("reminder-hours", settings.reminder_hours))
    return min(wanted, deadline_hours(game, settings, phase) / 2) if wanted > 0 else 0


def _left(delta: timedelta) -> str:
    minutes = max(1, int(delta.total_seconds() // 60))
    if minutes < 120:
        return f"{minutes} minutes"
    hours = minutes // 60
    return f"{hours} hours" if hours < 48 else f"{hours // 24} days"


def send_reminders(db: Engine, settings: Settings, *, now: datetime) -> int:
    """Queue the reminders now due in every game; how many were queued."""
    with UnitOfWork(db) as uow:
        game_ids = [g.game_id for g in uow.games.list() if g.status != IMPORTED]
    queued = 0
    for game_id in game_ids:

        def work(uow: UnitOfWork, game_id: str = game_id) -> int:
            # Under the game's lock, as every other per-game write: two workers (or `pbem tick` beside
            # `pbem serve`) would otherwise both find the reminder unsent and both queue it, and the second
            # insert would fail on the outbox's unique Message-ID, taking the rest of its unit with it.
            uow.lock_game(game_id)
            game = uow.games.get(game_id)
            state = load_state(uow, game_id)
            hours = _reminder_hours(game, settings, state.phase)
            if hours <= 0:
                return 0
            if state.finished or not state.deadline or table.paused_by_moderator(state) is not None:
                return 0
            due = datetime.strptime(state.deadline, DEADLINE_FORMAT).replace(tzinfo=timezone.utc)
            if not due - timedelta(hours=hours) <= now < due:
                return 0
            letters = letters_for(uow, settings, game, now)
            return sum(remind(letters, state, prompt, _left(due - now)) for prompt in rules.pending(state).values())

        try:
            queued += retrying(db, work)
        except DamagedLog as exc:  # the deadline loop names it; no reminder from a log that does not hold
            logging.getLogger("pbem.deadlines").debug("%s", exc)
    return queued


def remind(letters: Letters, state: GameState, prompt: Prompt, left: str) -> bool:
    """Remind the player asked by ``prompt``; once per step and deadline, so False if it was sent before.

    The Message-ID is made from the deadline, the step and the player, not
    from the log's version: other players' orders do not make it new.
    """
    player = state.player(prompt.player_id)
    recipient = letters.email_of(state, player)
    if is_bot_address(recipient):  # a bot is not reminded: the server answers for it (bot_seats)
        return False
    message_id = make_message_id(
        f"{state.game_id}:reminder:{state.deadline}:{state.turn}:{state.phase}:{prompt.step}:{prompt.who}:{recipient}",
        letters.settings.domain,
    )
    if letters.uow.outbox.by_message_id(message_id) is not None:
        return False
    rendered = letters.renderer.render(
        "reminder",
        {
            "game": state.game_id,
            "player": letters.label(player),
            "turn": state.turn or None,
            "phase": phase_title(state, state.phase),
            "question": prompt.question,
            "default": prompt.default,
            "template": prompt.template,
            "deadline": letters.deadline_for(state, player.id)[0],
            "left": left,
        },
    )
    subject, references, extra = letters.thread_headers(state.game_id, recipient, state.turn, message_id, rendered.subject)
    raw = build_message(
        sender=letters.settings.sender,
        recipient=recipient,
        rendered=RenderedMail(subject, rendered.text, rendered.html),
        message_id=message_id,
        reply_to=letters.reply_to(state, player),
        references=references,
        extra_headers=extra,
        date=letters.now,
    )
    letters.uow.outbox.enqueue(
        message_id=message_id, recipient=recipient, raw=raw, kind="reminder", game_id=state.game_id, now=letters.now
    )
    letters.sent.append(("reminder", recipient))
    return True


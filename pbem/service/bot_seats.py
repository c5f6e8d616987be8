"""Seats the server's bots play (REPLACE ... WITH BOT, `--player bot:planner`): their answers, as mail.

Why as mail: a bot's orders must leave the trace a player's do (the inbox
keeps the message, the log names its source, the acknowledgement is
written, a duplicate is stored once), so each answer is a message from the
seat's address of record (`pbem.mail.tokens.bot_address`, in the .invalid
domain no letter can reach) to the seat's reply address, put through the
mail server's own door. Its Message-ID is made from the game, the log's
version and the seat, and its text and date from the game as it stands, so
two `pbem serve` workers that both see the seat asked write the same message,
and the inbox keeps one: each answer is made exactly once.

When: once the game has stood still for ``bot_delay`` seconds since its last
event (a person is not rushed by an answer in the same second), never while
the moderator has paused the game, never after it ended. A bot that has
nothing to say yet (WAIT: a trader waiting for offers) answers at a later
version, or its defaults apply at the deadline like anyone's.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime

from pbem.mail.tokens import BOT_DOMAIN, bot_address, reply_address
from pbem.rules import engine as rules
from pbem.rules.table import bot_strategy, paused_by_moderator, seat_generation
from pbem.store.unit_of_work import UnitOfWork

from .bots import WAIT, bot_orders
from .projector import load_state
from .settings import Settings

__all__ = ["bot_answers", "bot_message_id"]

#: The games a bot may answer in: those played here (an imported game is only read).
PLAYING = ("setup", "active")


def bot_message_id(game_id: str, version: int, player_id: int, domain: str) -> str:
    """The one Message-ID a bot's answer at this version of the log has, whichever worker writes it."""
    return f"<bot.{game_id}.{version}.{player_id}@{domain}>"


def bot_answers(uow: UnitOfWork, settings: Settings, now: datetime) -> list[tuple[bytes, str, list[str]]]:
    """Every answer a bot owes now: (message, envelope sender, recipients), each to go in as mail."""
    out = []
    for game_id in uow.players.games_with_domain(BOT_DOMAIN):  # the games a bot plays in: few, found in one query
        game = uow.games.get(game_id)
        if game is None or game.status not in PLAYING:
            continue
        state = load_state(uow, game.game_id)
        if state.finished or paused_by_moderator(state) or not state.players:
            continue
        bots = {p.id: bot_strategy(state, p.id) for p in state.players}
        asked = [p for p in rules.pending(state).values() if bots.get(p.player_id)]
        if not asked:
            continue
        _, head = uow.events.head(game.game_id)
        last = uow.events.read(game.game_id, after=state.version - 1)[-1]
        since = datetime.fromisoformat(last.metadata.get("recorded_at")) if last.metadata.get("recorded_at") else now
        if now - since < timedelta(seconds=settings.bot_delay):
            continue
        key = bytes.fromhex(game.reply_secret)
        for prompt in asked:
            pid, strategy = prompt.player_id, bots[prompt.player_id]
            message_id = bot_message_id(game.game_id, state.version, pid, settings.domain)
            if uow.inbox.by_message_id(message_id.strip("<>")) is not None:
                continue  # answered at this version already (by this worker or another)
            text = bot_orders(prompt, random.Random(f"{game.game_id}:{state.version}:{pid}:{head}"), state, strategy)
            if text == WAIT:
                continue
            sender = bot_address(game.game_id, pid)
            to = reply_address(key, game.game_id, pid, settings.domain, settings.local_part,
                               seat_generation(state, pid))
            message = EmailMessage()
            message["From"] = sender
            message["To"] = to
            message["Subject"] = f"[{game.game_id}] The bot's orders ({strategy})"
            message["Date"] = format_datetime(since)  # the game's moment, not the clock's: the same on every worker
            message["Message-ID"] = message_id
            message.set_content(text + "\n")
            out.append((bytes(message), sender, [to]))
    return out

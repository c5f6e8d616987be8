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

A bot never blocks a step. If the server refuses its answer (the message
was read at this version and the seat is still asked), it answers once more
with the prompt's first choice (or its template when it lists none), under
a second Message-ID; if that is refused too, its defaults apply at the
deadline. Bots waiting on each other alone (every seat asked is a bot's,
each trader waiting on its own offer) close their steps (FINISH) instead
of holding the table to the deadline.

Press to a bot (naming its nation, or replying to it) is answered once, at
once, with a short canned reply through the press reply address of that
press, so it reaches the writer alone and grey press stays anonymous both
ways: the writer learns that nobody reads his press, not silence. Press to
ALL is an announcement, not a question to the bot, and is not answered
(three bots would otherwise send three letters for one announcement).
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime

from pbem.mail.tokens import BOT_DOMAIN, bot_address, press_reply_address, reply_address
from pbem.rules import engine as rules
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.state import GameState
from pbem.rules.table import bot_strategy, paused_by_moderator, press_readers, seat_generation
from pbem.store.unit_of_work import UnitOfWork

from .bots import WAIT, bot_orders
from .projector import load_state
from .settings import Settings

__all__ = ["PRESS_REPLY", "bot_answers", "bot_message_id"]

#: The games a bot may answer in: those played here (an imported game is only read).
PLAYING = ("setup", "active")
#: How far back (events) a bot looks for press to it: the bots' loop runs every second, so far more than enough.
PRESS_WINDOW = 200
#: What a bot answers to press: one line, no order in it (a reply holding orders would be played, not relayed).
PRESS_REPLY = ("This seat is played by the server's {strategy} bot, which reads no press: it answers its "
               "prompts by itself, and takes an offer in the trade phase when the cards suit it.")
#: What `_order_answer` says of a bot with nothing to say yet (a trader waiting on its offer).
WAITING = ("", "", "")
#: Messages still waiting in the inbox (not yet read): a bot's answer there is not known refused.
_UNREAD = ("received", "failed")


def bot_message_id(game_id: str, version: int, player_id: int, domain: str, again: bool = False) -> str:
    """The one Message-ID a bot's answer at this version of the log has, whichever worker writes it
    (``again``: the fallback answer after the first was refused)."""
    return f"<bot.{game_id}.{version}.{player_id}{'.again' if again else ''}@{domain}>"


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
        bots = {p.id: s for p in state.players if (s := bot_strategy(state, p.id))}
        if not bots:
            continue
        key = bytes.fromhex(game.reply_secret)
        recent = uow.events.read(game.game_id, after=max(0, state.version - PRESS_WINDOW))
        out += _press_answers(uow, settings, state, bots, key, recent, now)
        if not recent:
            continue
        since = datetime.fromisoformat(recent[-1].metadata["recorded_at"]) if recent[-1].metadata.get("recorded_at") \
            else now
        if now - since < timedelta(seconds=settings.bot_delay):
            continue
        _, head = uow.events.head(game.game_id)
        pending = list(rules.pending(state).values())
        answers, waiting = [], []
        for prompt in pending:
            if prompt.player_id not in bots:
                continue
            answer = _order_answer(uow, settings, state, prompt, bots[prompt.player_id], head)
            if answer == WAITING:
                waiting.append(prompt)
            elif answer is not None:
                answers.append((prompt, answer))
        if waiting and len(waiting) == len(pending):  # bots waiting on each other alone: nothing would move
            answers = [(p, closing) for p in waiting
                       if (closing := _closing(uow, settings, state, p, bots[p.player_id])) is not None]
        for prompt, (message_id, text, chosen) in answers:
            to = reply_address(key, game.game_id, prompt.player_id, settings.domain, settings.local_part,
                               seat_generation(state, prompt.player_id))
            subject = f"[{game.game_id}] The bot's orders ({bots[prompt.player_id]})"
            out.append(_message(state, prompt.player_id, to, subject, since, message_id, text, chosen))
    return out


def _order_answer(uow: UnitOfWork, settings: Settings, state: GameState, prompt: Prompt, strategy: str,
                  head: str) -> tuple[str, str, str] | None:
    """(Message-ID, text, how it was chosen) of the bot's answer to ``prompt`` at this version; WAITING when it
    has nothing to say yet; None when it has answered (or its answer is not read yet)."""
    game_id, pid = state.game_id, prompt.player_id
    first = bot_message_id(game_id, state.version, pid, settings.domain)
    read = uow.inbox.by_message_id(first.strip("<>"))
    if read is None:
        seed = f"{game_id}:{state.version}:{pid}:{head}"
        text = bot_orders(prompt, random.Random(seed), state, strategy)
        return WAITING if text == WAIT else (first, text, f"{strategy}; seed={seed}")
    if read.status in _UNREAD:
        return None  # not read yet: its fate is not known
    again = bot_message_id(game_id, state.version, pid, settings.domain, again=True)
    if uow.inbox.by_message_id(again.strip("<>")) is not None:
        return None  # refused twice: the seat's defaults apply at the deadline, as anyone's
    return again, prompt.choices[0] if prompt.choices else prompt.template, f"{strategy}; the prompt's first line"


def _closing(uow: UnitOfWork, settings: Settings, state: GameState, prompt: Prompt,
             strategy: str) -> tuple[str, str, str] | None:
    """The answer of a bot that waits when every seat asked is a bot's waiting too: it closes its step
    (FINISH in trade, else the prompt's first line), so bots never hold a step among themselves. None once
    sent at this version (refused: the seat's defaults apply at the deadline)."""
    message_id = bot_message_id(state.game_id, state.version, prompt.player_id, settings.domain, again=True)
    if uow.inbox.by_message_id(message_id.strip("<>")) is not None:
        return None
    text = "FINISH" if "FINISH" in prompt.choices else (prompt.choices[0] if prompt.choices else prompt.template)
    return message_id, text, f"{strategy}; every seat asked is a bot's, waiting: it closes its step"


def _press_answers(uow: UnitOfWork, settings: Settings, state: GameState, bots: dict[int, str], key: bytes,
                   recent: list, now: datetime) -> list[tuple[bytes, str, list[str]]]:
    """The canned replies owed to press sent to a bot's seat by a person (module docstring)."""
    out = []
    for event in recent:
        if event.type != "PressSent" or event.payload["player"] in bots:
            continue
        named = {n.lower() for n in event.payload.get("to", ())}
        for reader in press_readers(state, event.payload):
            if reader.id not in bots or not (event.payload.get("reader") == reader.id
                                             or (reader.nation or "").lower() in named):
                continue
            message_id = f"<bot.press.{state.game_id}.{event.version}.{reader.id}@{settings.domain}>"
            if uow.inbox.by_message_id(message_id.strip("<>")) is not None:
                continue
            to = press_reply_address(key, state.game_id, reader.id, event.version, settings.domain,
                                     settings.local_part, seat_generation(state, reader.id))
            stamp = event.metadata.get("recorded_at")
            when = datetime.fromisoformat(stamp) if stamp else now
            text = PRESS_REPLY.format(strategy=bots[reader.id])
            out.append(_message(state, reader.id, to, f"[{state.game_id}] Re: press", when, message_id, text))
    return out


def _message(state: GameState, player_id: int, to: str, subject: str, when: datetime, message_id: str,
             text: str, chosen: str = "canned") -> tuple[bytes, str, list[str]]:
    """The bot's message; ``X-Pbem-Bot`` keeps its strategy and seed with it in the inbox (issue 33: a bot's
    choice need not be reproducible, but what made it is recorded)."""
    sender = bot_address(state.game_id, player_id)
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = format_datetime(when)  # the game's moment, not the clock's: the same on every worker
    message["Message-ID"] = message_id
    message["X-Pbem-Bot"] = chosen
    message.set_content(text + "\n")
    return bytes(message), sender, [to]

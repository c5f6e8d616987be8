"""A seat handed to someone new (REPLACE): the newcomer's letters, the table told, the one who left answered.

The newcomer joins a game under way: a "new game is starting" letter told
him nothing of where his nation stands or what he must answer. He gets a
letter of his own: whose seat he took and why, his nation's position as
STATUS, HAND and BOARD show it, and which letter to answer; the prompt
itself follows when his nation is asked. The player who left may still
write to the game from habit; he is answered that he no longer plays and
that nothing he sent was applied (`answer_former_player`), instead of silence.
"""

from __future__ import annotations

import secrets as secrets_module

from pbem.mail.tokens import bot_address
from pbem.orders.language import Orders
from pbem.rules import engine as rules
from pbem.rules.core.commands import ReplacePlayer
from pbem.rules.core.state import GameState
from pbem.rules.table import seat_generation
from pbem.store.unit_of_work import UnitOfWork

from .batch import Batch
from .letters import Letters
from .moderation import seat_of
from .projector import load_state
from .queries import position


def hand_over(batch: Batch, letters: Letters, before: GameState, orders: Orders) -> None:
    """A seat handed to someone new (REPLACE): his address and SECRET on record, his letters, the table told."""
    uow = batch.uow
    asked = {line.command.player_id: line.command for line in orders.lines if isinstance(line.command, ReplacePlayer)}
    for i, event in enumerate(e for e in batch.events if e.type == "PlayerReplaced"):
        command = asked.get(event.data["player"])
        if command is None or not (command.email or command.bot):
            continue
        secret = secrets_module.token_urlsafe(6)
        old_address = uow.players.by_id(command.player_id).email
        email = bot_address(batch.state.game_id, command.player_id) if command.bot else command.email
        uow.players.hand_over(command.player_id, command.name, email, secret)
        leaving = before.player(command.player_id)
        if not command.bot:  # a bot reads no letters: the server answers for it (bot_seats)
            letters.start(batch.state, batch.chain_head, {command.player_id: secret}, seat={
                "nation": leaving.nation or f"{leaving.name}'s seat", "before": leaving.name, "reason": command.reason,
                "asked": _asked(batch.state, letters, command.player_id),
                "position": position(batch.state, batch.state.player(command.player_id)),
            })
            asked_before = rules.pending(before)
            for who, prompt in rules.pending(batch.state).items():  # the seat is asked now: the newcomer's prompt
                if prompt.player_id == command.player_id and who in asked_before:  # (a new key: it goes with the rest)
                    letters.prompt(batch.state, prompt, batch.chain_head)
        text = rules.describe_event(before, event, "observer") or ""
        title = f"{seat_of(leaving)} is now played by {command.name}"
        letters.announce(batch.state, text, f"replaced:{batch.state.game_id}:{batch.state.version}:{i}", title=title)
        if old_address != email:  # the player who leaves hears it too, at the address he played from
            generation = seat_generation(batch.state, command.player_id)
            letters.notice(old_address, batch.state.game_id, title, [
                text, "Your reply address and SECRET for this game no longer work. Thank you for playing.",
            ], _farewell(batch.state.game_id, command.player_id, generation))


def _farewell(game_id: str, player_id: int, generation: int) -> str:
    """The purpose of the letter telling a player he left a seat: made from the seat and its generation, so
    `answer_former_player` can look up whether an address was told it left that seat."""
    return f"replaced-old:{game_id}:{player_id}:{generation}"


def answer_former_player(uow: UnitOfWork, letters: Letters, game_id: str, address: str, in_reply_to: str | None,
                         key: str) -> bool:
    """Answer mail from a player the moderator replaced; False when ``address`` never left a seat of this game.

    Out of habit he replies to an old letter, whose reply address no longer
    verifies, and used to hear nothing. He is told, in a reply, that he no
    longer plays (since when, and who took his seat) and that nothing he sent
    was applied; his message stays in the inbox like any other. The proof he
    held the seat is the letter the game sent him when it was handed over
    (`_farewell`): a stranger giving his address as sender is answered at that
    address only, which the game wrote to before.
    """
    if not uow.outbox.latest_to(game_id, address, 1):  # the game never wrote to it: a stranger, no log read for him
        return False
    held: dict[int, int] = {}
    for recorded in uow.events.read(game_id):
        if recorded.type != "PlayerReplaced" or recorded.superseded_by is not None:
            continue
        player_id = recorded.payload["player"]
        held[player_id] = held.get(player_id, 0) + 1
        if uow.outbox.by_message_id(letters.notice_id(_farewell(game_id, player_id, held[player_id]), address)) is None:
            continue
        since = (recorded.metadata or {}).get("recorded_at", "")[:10]
        state = load_state(uow, game_id)
        seat = state.player(player_id).nation or "your seat"  # its player's name is the newcomer's now
        letters.notice(address, game_id, f"You no longer play in {game_id}", [
            f"You no longer play {seat} in game {game_id}: since {since}, {recorded.payload['name']} plays it "
            "(the moderator handed the seat over).",
            "Nothing in your message was applied: no order, no press. It is kept with the game's mail.",
            "If you think this is a mistake, write to the moderator.",
        ], f"former:{key}", in_reply_to=in_reply_to)
        return True
    return False


def _asked(state: GameState, letters: Letters, player_id: int) -> list[str]:
    """What the newcomer must do now, and how: the prompt that follows this letter and that he answers by replying."""
    mine = [p for p in rules.pending(state).values() if p.player_id == player_id]
    if not mine:
        return ["Nothing is asked of you at this moment.",
                "When your turn comes, a letter \"your orders\" asks you: reply to it with your orders."]
    shown, due = letters.deadline_for(state, player_id)
    if not shown:  # no deadline runs (the game is paused before one was set): the prompt's subject names none
        return [f"Your orders are asked now: {mine[0].question}",
                "The next letter, \"your orders\", holds the order block: reply to that letter with your orders."]
    return [f"Your orders are asked now: {mine[0].question}", f"Due: {shown}.",
            f"The next letter, \"your orders, due {due}\", holds the order block: reply to that letter with your orders."]

"""A seat handed to someone new (REPLACE): the newcomer's letters, the table told, the one who left answered.

The newcomer joins a game under way: a "new game is starting" letter told
him nothing of where his nation stands or what he must answer. He gets a
letter of his own: whose seat he took and why, his nation's position as
STATUS, HAND and BOARD show it, and which letter to answer; the prompt
itself follows when his nation is asked. The player who left may still
write to the game from habit; he is answered that he no longer plays and
that nothing he sent was applied (`former_player`), instead of silence.
"""

from __future__ import annotations

import secrets as secrets_module

from pbem.orders.language import Orders
from pbem.rules import engine as rules
from pbem.rules.core.commands import ReplacePlayer
from pbem.rules.core.state import GameState

from .batch import Batch
from .letters import Letters
from .moderation import seat_of


def hand_over(batch: Batch, letters: Letters, before: GameState, orders: Orders) -> None:
    """A seat handed to someone new (REPLACE): his address and SECRET on record, his letters, the table told."""
    uow = batch.uow
    asked = {line.command.player_id: line.command for line in orders.lines if isinstance(line.command, ReplacePlayer)}
    for i, event in enumerate(e for e in batch.events if e.type == "PlayerReplaced"):
        command = asked.get(event.data["player"])
        if command is None or not command.email:
            continue
        secret = secrets_module.token_urlsafe(6)
        old_address = uow.players.by_id(command.player_id).email
        uow.players.hand_over(command.player_id, command.name, command.email, secret)
        letters.start(batch.state, batch.chain_head, {command.player_id: secret})
        asked_before = rules.pending(before)
        for who, prompt in rules.pending(batch.state).items():  # the seat is asked now: the newcomer gets the prompt
            if prompt.player_id == command.player_id and who in asked_before:  # (under a new key, it goes with the rest)
                letters.prompt(batch.state, prompt, batch.chain_head)
        text = rules.describe_event(before, event, "observer") or ""
        title = f"{seat_of(before.player(command.player_id))} is now played by {command.name}"
        letters.announce(batch.state, text, f"replaced:{batch.state.game_id}:{batch.state.version}:{i}", title=title)
        if old_address != command.email:  # the player who leaves hears it too, at the address he played from
            letters.notice(old_address, batch.state.game_id, title, [
                text, "Your reply address and SECRET for this game no longer work. Thank you for playing.",
            ], f"replaced-old:{batch.state.game_id}:{batch.state.version}:{i}")

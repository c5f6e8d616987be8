"""Replies to press are press: a player who presses Reply on a press letter answers its writer by press.

A press letter carries a press reply address (`pbem.mail.tokens.press_reply_address`): signed, it
authenticates its reader and names the press it relays by its log version. A message to that address
that holds no order is relayed, as press, to the writer of that press alone (docs/orders.md, "Replying to
press", says why not to everyone the press went to). One that holds orders is orders, played as usual and
relayed to nobody: a player who answers his prompt from the last letter he got must not have his orders
read out to a rival. Grey press stays grey both ways: the reply is anonymous as all press of the game is,
and the replier to anonymous press is never told whom he answered, not even in his acknowledgement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import replace as dataclass_replace
from typing import Any

from pbem.mail.tokens import secret_in
from pbem.orders.language import OrderLine, Orders
from pbem.rules.core.commands import SendPress
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState, Player
from pbem.rules.table import press_readers
from pbem.store.unit_of_work import UnitOfWork

__all__ = ["PressReply", "as_press", "invitation", "relay_text", "sent_press"]

#: The longest reply relayed, as the rules keep of any press.
MAX_CHARS = 4000


@dataclass(frozen=True)
class PressReply:
    """A message that came to a press reply address: the press it answers, and what its writer wrote."""

    version: int  # the log version of the press answered
    text: str  # the writer's own lines: the quote, the attribution and any signature already taken off


def relay_text(own: str) -> str:
    """What a reply relays: the writer's own lines (inbound parsing took the quote off), his SECRET line never."""
    kept = [line for line in own.splitlines() if secret_in(line) is None]  # the lines the server reads as a SECRET
    return "\n".join(kept).strip()[:MAX_CHARS]


def sent_press(events: Sequence[Event], start: int) -> list[tuple[Event, int]]:
    """The press among ``events``, appended one a version from ``start`` on, each with its log version.

    The version goes into the press letter's reply address: it names the press without naming its writer.
    """
    return [(event, start + 1 + i) for i, event in enumerate(events) if event.type == "PressSent"]


def invitation(state: GameState, data: Mapping[str, Any]) -> str:
    """The line of a press letter that tells its reader what pressing Reply does: in it, only what he may know."""
    sender = state.player(data["player"])
    if data.get("anonymous"):
        return ("Reply to this letter to answer its writer by press: only the writer reads your reply, and it is "
                "anonymous too. Orders in a reply are played as orders and not relayed.")
    writer = sender.nation or sender.name
    return (f"Reply to this letter to answer {writer} by press: only {writer} reads your reply, not the others this "
            "letter went to. Orders in a reply are played as orders and not relayed.")


def _original(uow: UnitOfWork, state: GameState, version: int, replier: Player) -> tuple[Mapping[str, Any], Player] | None:
    """The press at ``version`` and its writer, when ``replier`` read it and its writer still plays; else None."""
    found = uow.events.read(state.game_id, after=version - 1, upto=version)
    if not found or found[0].type != "PressSent" or found[0].superseded_by is not None:
        return None
    data = found[0].payload
    if all(p.id != replier.id for p in press_readers(state, data)):
        return None
    writer = next((p for p in state.players if p.id == data["player"]), None)
    return (data, writer) if writer is not None and writer.id != replier.id else None


def _confirmation(data: Mapping[str, Any], writer: Player, grey: bool, length: int) -> str:
    """The acknowledgement's line for a relayed reply: who reads it, in words the replier may read."""
    if data.get("anonymous"):
        head, target = "the anonymous press you read", "its writer"
    else:
        head = target = writer.nation or writer.name
    shown = "anonymously " if grey else ""
    return f"PRESS in reply to {head}: relayed {shown}to {target} alone ({length} characters)"


def as_press(
    uow: UnitOfWork, state: GameState, player: Player | None, orders: Orders, reply: PressReply | None,
    options: Mapping[str, str] | None,
) -> Orders:
    """The orders of a message, with a reply to press made the one order it holds when it holds no other.

    The hook `pbem.service.games.take_orders` calls: the reply is then decided, logged, delivered
    and acknowledged as any press is. A reply that holds orders keeps them and gains a note instead.
    """
    if reply is None or player is None:
        return orders
    # A line of a reply to press that begins with a verb but is no order ("Done deal!", "Move your tokens away
    # from the coast and we are friends.") is part of what the player says: it goes with the press.
    if any(line.command is not None or line.query or line.help for line in orders.lines):
        if all(isinstance(line.command, SendPress) for line in orders.lines):
            return orders
        note = ("This was a reply to a press letter, but it held orders: they were read as orders and nothing was "
                "relayed. To answer by press as well, write PRESS TO <nation> ... END.")
        return dataclass_replace(orders, notes=(*orders.notes, note))
    if not reply.text:
        return orders
    kind = (options or {}).get("press", "on")
    found = _original(uow, state, reply.version, player)
    if found is None:
        line = OrderLine(1, "(your reply to press)", error="the press you answered can no longer be answered "
                         "(it was taken back, or its writer left the game); write PRESS TO <nation> ... END")
    elif kind == "off":
        line = OrderLine(1, "(your reply to press)", error="press is off in this game (game option press=off): "
                         "your reply was not relayed, nobody read it")
    else:
        data, writer = found
        command = SendPress(player.id, (), reply.text, anonymous=kind == "grey", reader=writer.id,
                            reply=reply.version, blind=bool(data.get("anonymous")))
        canonical = _confirmation(data, writer, kind == "grey", len(reply.text))
        line = OrderLine(1, "(your reply to press)", command=command, canonical=canonical)
    prose = tuple(f"'{refused.text[:80]}' was not read as an order: it is part of your reply"
                  for refused in orders.lines if refused.error and line.command is not None)
    return dataclass_replace(orders, lines=(line,), ignored=(), notes=(*orders.notes, *prose))

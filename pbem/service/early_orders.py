"""Orders sent before one's turn in a step taken in turn, kept and played when the turn comes.

Setup, ship building and movement (census order) and buying trade cards go
one nation at a time. A player who knows his moves need not wait for the
others: what he sends early is refused by the rules as "not your turn yet"
(`NotYourTurn`), and the service keeps it in the log (``OrdersQueued``).
When his turn comes they are taken up (``QueuedOrdersTaken``) and each is
parsed against the board as it then stands and played, as his own order, if
still legal; a line that must wait for a later step of the same phase (moves
sent while ships are built) is kept again with the lines after it. He gets a
letter saying what became of each; a phase that ends before his turn came
drops what was kept.
"""

from __future__ import annotations

from collections.abc import Mapping

from pbem.audit.explain.origin import KEPT_KEY
from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as rules
from pbem.rules import table
from pbem.rules.core.commands import QueueOrders, TakeQueued
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import NotYourTurn, Rejection

from .batch import Batch
from .letters import Letters

#: How many turns can come in one batch (one per nation, twice per phase step, and more): a bound, not a rule.
_MOST_TURNS = 64


def _is_new(old: Prompt | None, new: Prompt) -> bool:
    return old is None or old.step != new.step or old.player_id != new.player_id


def _waits(batch: Batch, command: object) -> bool:
    """Whether ``command`` is still before its turn (tried on the state as it stands; nothing is recorded)."""
    try:
        rules.decide(batch.state, command, batch.draws)
    except NotYourTurn:
        return True
    except Rejection:
        return False
    return False


def _play(batch: Batch, letters: Letters, player_id: int) -> None:
    """Play one player's kept orders now that his turn has come; tell him what became of each.

    The log shows the orders taken up (``QueuedOrdersTaken``), then each one
    played as an order of his; a line that must wait for a later step of the
    phase is kept again with the lines after it (``OrdersQueued``).
    """
    kept_lines = table.queued_orders(batch.state, player_id)
    actor = Actor(player_id=player_id)
    first = parse_orders(kept_lines[0], batch.state, actor).lines
    if first and first[0].command is not None and _waits(batch, first[0].command):
        return  # all of it waits for a later step of the phase (moves sent while ships are built)
    batch.decide(TakeQueued(player_id, kept_lines), actor="clock", source="kept")
    played: list[str] = []
    refused: list[tuple[str, str]] = []
    kept: list[str] = []
    for text in kept_lines:
        if kept:  # a line waits: those after it wait too, so the orders keep their order
            kept.append(text)
            continue
        lines = parse_orders(text, batch.state, actor).lines  # read against the board as it stands now
        line = lines[0] if lines else None
        if line is None or line.command is None:
            refused.append((text, line.error if line is not None and line.error else "not an order now"))
            continue
        try:
            # KEPT_KEY: explain finds the OrdersQueued that kept this text, and the mail it came in (origins)
            batch.decide(line.command, actor=f"player:{player_id}", source="kept", note={KEPT_KEY: text})
        except NotYourTurn:
            kept.append(text)
        except Rejection as exc:
            refused.append((text, str(exc)))
        else:
            played.append(line.canonical)
    if kept:
        batch.decide(QueueOrders(player_id, tuple(kept)), actor=f"player:{player_id}", source="kept")
    player = batch.state.player(player_id)
    lines = [f"Your turn came in {batch.state.game_id}; the orders you sent before it:"]
    lines += [f"  played: {line}" for line in played]
    lines += [f"  refused: {text}: {why}" for text, why in refused]
    lines += [f"  still kept for a later step: {text}" for text in kept]
    asked = [p for p in rules.pending(batch.state).values() if p.player_id == player_id]
    lines.append(("Still needed from you: " + asked[0].question + " A prompt follows.") if asked else "Nothing more is needed from you now.")
    letters.notice(
        batch.uow.players.by_id(player_id).email,
        batch.state.game_id,
        "Your early orders were played" if not refused else "Your early orders: some were refused",
        lines,
        f"kept:{batch.state.game_id}:{batch.state.version}:{player_id}",
        reply_to=letters.reply_to(batch.state, player),
        turn=batch.state.turn,
    )


def play_kept_orders(batch: Batch, letters: Letters, before: Mapping[str, Prompt]) -> None:
    """Whoever has been newly asked since ``before`` and has orders kept gets them played, one turn at a time."""
    seen = dict(before)
    for _ in range(_MOST_TURNS):
        now = rules.pending(batch.state)
        fresh = {who: p for who, p in now.items() if _is_new(seen.get(who), p)}
        due = next(((who, p) for who, p in fresh.items() if table.queued_orders(batch.state, p.player_id)), None)
        seen.update({who: p for who, p in fresh.items() if not table.queued_orders(batch.state, p.player_id)})
        if due is None:
            return
        seen[due[0]] = due[1]
        _play(batch, letters, due[1].player_id)

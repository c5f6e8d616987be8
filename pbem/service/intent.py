"""A message is one intent: which of its orders close a step, and what is held when a line of it is refused.

A player who writes ``mvoe 1 Susa Babylonia`` and ``HALT`` under it means
"these moves, then I am done". Playing the HALT alone would end his turn
without the move he meant, and he could not send it again. So when a line
of a message is refused, an order of that message that would close the
player's step (end what he is asked, move the phase on) is held: not
played, and named in the acknowledgement. The other lines are played.

Whether an order closes a step is the engine's own view: the order is
decided on the state as it stands (nothing recorded) and the state after
it compared with the one before. A few orders close a step by their very
meaning even when the engine keeps the player asked (ACCEPT trades at once
and cannot be taken back), and are named here too (`CLOSING`).

A game may choose the email judges' stricter policy, ``errors=hold``: a
message with a refused line is held whole, nothing of it played.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pbem.rules import engine as rules
from pbem.rules.core.commands import PassDeadline, RevealSeed, RollBack
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.phase import acting_nation
from pbem.rules.core.rejection import NotYourTurn, Rejection
from pbem.rules.core.state import GameState
from pbem.rules.phases.cities.construction import FinishOrders
from pbem.rules.phases.movement.turns import MOVES, PHASE, SHIPS, EndMoves, done_in_step, eligible_in_step
from pbem.rules.phases.trade import AcceptOffer, FinishTrading

#: The game option, and its values: ``step`` (the default) holds what closes a step; ``hold`` the whole message.
ERRORS_OPTION = "errors"
ERRORS_POLICIES = ("step", "hold")

#: Orders that close a step by their meaning, whatever the engine's view of the state after them: HALT, DONE,
#: FINISH, ACCEPT, and the moderator's DEADLINE and ROLLBACK.
CLOSING: tuple[type, ...] = (EndMoves, FinishOrders, FinishTrading, AcceptOffer, PassDeadline, RollBack)

#: Orders never tried ahead of time: the service decides them against more than the state (the whole log, the seed).
_NOT_FORESEEN: tuple[type, ...] = (RollBack, RevealSeed)


def policy(options: dict | None) -> str:
    """The game's errors policy (``step`` unless the moderator chose ``hold``)."""
    return (options or {}).get(ERRORS_OPTION, "step")


def _steps_asked(state: GameState, player_id: int | None) -> set[str]:
    return {p.step for p in rules.pending(state).values() if p.player_id == player_id}


def closes_step(before: GameState, after: GameState, command: object) -> bool:
    """Whether ``command``, taking ``before`` to ``after``, closes a step.

    It does when it is one of `CLOSING`, when the phase, its step or the
    turn moved on, or when the player who gave it was asked something
    before it and is asked nothing after it (his turn handed on).
    """
    if isinstance(command, CLOSING):
        return True
    if (before.turn, before.phase, before.step) != (after.turn, after.phase, after.step):
        return True
    player_id = getattr(command, "player_id", None)
    return bool(_steps_asked(before, player_id)) and not _steps_asked(after, player_id)


def try_order(state: GameState, command: object, draws: Draws) -> tuple[list[Event], GameState]:
    """The events of ``command`` on ``state`` and the state after them; nothing is recorded. Raises `Rejection`."""
    return rules.decide_and_fold(state, command, draws)


def kept_for_moves(state: GameState, command: object, closed_here: bool) -> bool:
    """A second HALT sent at one's own 3a, after the first ended the ship step: it is for step 3b.

    Only within the message that ended the ships (``closed_here``): a HALT
    sent again later by itself is a repeat, not a HALT for the moves.
    """
    if not closed_here or not isinstance(command, EndMoves) or state.phase != PHASE or state.step != SHIPS:
        return False
    try:
        nation = acting_nation(state, command.player_id)
    except Rejection:
        return False
    return nation in done_in_step(state, SHIPS) and eligible_in_step(state, nation, MOVES)


def foresee(state: GameState, draws: Draws, commands: Sequence[object], *, closed_here: bool = False,
            first_only: bool = True) -> dict[int, Rejection]:
    """The commands the engine would refuse if ``commands`` were played in order from ``state`` (nothing recorded).

    As the service plays them: an order before the player's turn is kept,
    and so is every order after it; an order the engine cannot foresee
    (ROLLBACK, SEED) counts as played. ``first_only``: stop at the first
    refusal, enough to know that one comes.
    """
    refused: dict[int, Rejection] = {}
    kept = False
    for i, command in enumerate(commands):
        if kept or isinstance(command, _NOT_FORESEEN):
            continue
        try:
            _, after = try_order(state, command, draws)
        except NotYourTurn:
            kept = True
            continue
        except Rejection as exc:
            if kept_for_moves(state, command, closed_here):
                kept = True
                continue
            refused[i] = exc
            if first_only:
                return refused
            continue
        closed_here = closed_here or closes_step(state, after, command)
        state = after
    return refused


@dataclass(frozen=True)
class Held:
    """An order of the message not played because a line of it was refused."""

    number: int  # its line in the message
    order: str  # as the server reads it
    quoted: bool = False  # written inside a quote of our letter


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _lines(numbers: Sequence[int]) -> str:
    return ("line " if len(numbers) == 1 else "lines ") + _and([str(n) for n in numbers])


def headline(refused: Sequence[int], held: Sequence[Held], whole: bool) -> tuple[str, str]:
    """The acknowledgement's subject and first line when orders were held: the step is open, and what to resend."""
    count = f"{len(refused)} line{'s' if len(refused) != 1 else ''} refused"
    were = "was" if len(refused) == 1 else "were"
    if whole:
        return (f"Nothing played: {count}", f"Nothing of your message was played: {_lines(refused)} {were} refused, and "
                "this game takes a message whole (game option errors=hold). Correct "
                f"{_lines(refused)} and send the whole message again.")
    orders = _and(list(dict.fromkeys(h.order for h in held)))
    return (f"Step still open: {count}", f"Your step is still open: {_lines(refused)} {were} refused, so {orders} "
            f"{'was' if len(held) == 1 else 'were'} not played. Correct {_lines(refused)} and send "
            f"{'it' if len(refused) == 1 else 'them'} again with {orders}.")

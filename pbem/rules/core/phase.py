"""What every phase of the game provides to the engine, and how a phase ends.

A phase module (or package) in `pbem.rules.phases` owns its events (how they
fold into state), its commands (how orders are decided), who it is waiting
for, what a missed deadline decides, and what it resolves by itself. The
engine only dispatches: to find a rule's code, open the phase named after it
(docs/architecture.md lists them). A phase knows no other phase and not the
turn: it ends by returning `phase_ended`, and the turn (`pbem.rules.turn`)
begins the next one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState

Apply = Callable[[GameState, dict[str, Any]], GameState]
Decide = Callable[[GameState, Any], list[Event]]
Narrate = Callable[[GameState, Event, str], str | None]


def _nothing_pending(state: GameState) -> dict[str, Prompt]:
    return {}


def _no_defaults(state: GameState, prompt: Prompt) -> list[Event]:
    return []


def _nothing_to_settle(state: GameState, draws: Draws) -> list[Event]:
    return []


@dataclass(frozen=True)
class PhaseRules:
    """The rules of one phase (or of setup), as the engine sees them.

    ``settle`` returns the next automatic events, or [] while the phase waits
    for orders; it must eventually return a ``PhaseEnded`` (see `turn`).
    ``inputs`` names the event types that record an order of this phase, and
    ``command_for`` turns such an event back into its command for `verify`.
    """

    name: str
    apply: Mapping[str, Apply] = field(default_factory=dict)
    decide: Mapping[type, Decide] = field(default_factory=dict)
    pending: Callable[[GameState], dict[str, Prompt]] = _nothing_pending
    defaults: Callable[[GameState, Prompt], list[Event]] = _no_defaults
    settle: Callable[[GameState, Draws], list[Event]] = _nothing_to_settle
    inputs: Mapping[str, Callable[[GameState, Mapping[str, Any]], Any]] = field(default_factory=dict)
    narrate: Mapping[str, Narrate] = field(default_factory=dict)


def defaulted(data: Mapping[str, Any]) -> str:
    """Why a report says an order was played by default: the deadline passed, or the moderator took the player
    out (KICK: the engine marks those defaults ``kicked``)."""
    return "played by default: the player was taken out" if data.get("kicked") else "deadline passed"


def phase_ended(phase: str, cites: tuple[str, ...] = ()) -> Event:
    """The event that ends a phase: the turn (`pbem.rules.turn`) then begins the next one."""
    return Event("PhaseEnded", {"phase": phase}, cites)


def unplayable(state: GameState, skip: bool) -> list[Event]:
    """A phase this engine cannot play: wait there, or, when the game's option says ``skip``, end it."""
    if not skip:
        return []
    return [
        Event("PhaseSkipped", {"phase": state.phase, "reason": "this engine cannot play it yet"}),
        phase_ended(state.phase),
    ]


def acting_nation(state: GameState, player_id: int) -> str:
    """The nation a player gives orders for; orders from someone without one are refused."""
    for name, nation in state.nations.items():
        if nation.player_id == player_id:
            return name
    raise Rejection("you have no nation in this game")

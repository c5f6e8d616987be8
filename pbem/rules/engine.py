"""The rules engine contract (DESIGN.md §3): apply, pending, decide, view.

`decide` validates one command and returns the events it causes: the order
itself first, then every outcome the engine can resolve without further
input. The caller appends them as one batch. `apply` folds one event and is
total: it never rejects what `decide` produced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from . import setup
from .commands import ChooseNation, Command, PassDeadline, PlaceStartToken, SetDeadline
from .draws import Draws
from .events import Event
from .prompt import Prompt
from .rejection import Rejection
from .state import GameState

ENGINE_VERSION = "0.1.0"


def _apply_deadline_set(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, deadline=data["due"])


def _apply_deadline_passed(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, deadline=None)


_APPLY: dict[str, Callable[[GameState, dict[str, Any]], GameState]] = {
    "GameCreated": setup.apply_game_created,
    "PlaceCardsDealt": setup.apply_place_cards,
    "NationChosen": setup.apply_nation_chosen,
    "StartTokenPlaced": setup.apply_start_token,
    "SetupCompleted": setup.apply_setup_completed,
    "DeadlineSet": _apply_deadline_set,
    "DeadlinePassed": _apply_deadline_passed,
}


def apply(state: GameState, event: Event) -> GameState:
    """Fold one event into the state; the version counts events applied."""
    handler = _APPLY.get(event.type)
    if handler is None:
        raise ValueError(f"unknown event type {event.type!r}")
    return replace(handler(state, dict(event.data)), version=state.version + 1)


def fold(state: GameState, events: Sequence[Event]) -> GameState:
    for event in events:
        state = apply(state, event)
    return state


def new_game(game_id: str) -> GameState:
    return GameState(game_id=game_id)


def pending(state: GameState) -> dict[str, Prompt]:
    """Who must decide what now, keyed by lower-case nation (or player name before one is chosen)."""
    if state.finished:
        return {}
    return setup.pending(state)


def _settle(state: GameState, draws: Draws) -> list[Event]:
    """Resolve automatic steps until someone must decide or nothing is left."""
    out: list[Event] = []
    while True:
        step = setup.settle(state)
        if not step:
            return out
        out.extend(step)
        state = fold(state, step)


def _decide_deadline(state: GameState, command: PassDeadline) -> list[Event]:
    events = [Event("DeadlinePassed", {"by": command.by})]
    for prompt in pending(state).values():
        events.extend(setup.default_orders(state, prompt))
    return events


def decide(state: GameState, command: Command, draws: Draws) -> list[Event]:
    """Validate one command; return the order's events and every outcome that follows."""
    if state.finished:
        raise Rejection("the game is over")
    if isinstance(command, ChooseNation):
        events = setup.decide_choose_nation(state, command)
    elif isinstance(command, PlaceStartToken):
        events = setup.decide_place_start_token(state, command)
    elif isinstance(command, SetDeadline):
        events = [Event("DeadlineSet", {"due": command.due})]
    elif isinstance(command, PassDeadline):
        events = _decide_deadline(state, command)
    else:  # pragma: no cover - the Command union is closed
        raise TypeError(f"unknown command {command!r}")
    return events + _settle(fold(state, events), draws)


def create(
    game_id: str,
    players: Sequence[tuple[int, str, str | None]],
    options: Mapping[str, str],
    seed_commitment: str,
    draws: Draws,
) -> list[Event]:
    """The events that start a game: creation, the place-card deal, any automatic steps."""
    events = setup.create_events(game_id, players, dict(options), seed_commitment, draws)
    return events + _settle(fold(new_game(game_id), events), draws)


def command_for(event: Event) -> Command:
    """The command an input event records, so `verify` can decide it again."""
    data = event.data
    if event.type == "NationChosen":
        return ChooseNation(data["player"], data["nation"])
    if event.type == "StartTokenPlaced":
        return PlaceStartToken(data["player"], data["area"])
    if event.type == "DeadlineSet":
        return SetDeadline(data["due"])
    if event.type == "DeadlinePassed":
        return PassDeadline(data.get("by", "clock"))
    raise ValueError(f"{event.type} is not an input event")

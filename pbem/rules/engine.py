"""The rules engine contract (DESIGN.md §3): apply, pending, decide, view.

`decide` validates one command and returns the events it causes: the order
itself first, then every outcome the engine can resolve without further
input. The caller appends them as one batch. `apply` folds one event and is
total: it never rejects what `decide` produced. The rules themselves live in
one module or package per phase (`pbem.rules.phases`), registered in PHASES
below; the engine also tells each event as a sentence (`describe_event`) by
asking the phase that owns it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pbem.rules import ledger, table, turn
from pbem.rules.core.commands import Command, PassDeadline, RevealSeed
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import Apply, Decide, Narrate, PhaseRules, unplayable
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import RULES_REVISION, GameState
from pbem.rules.phases import (
    advances,
    ast,
    cities,
    conflict,
    expansion,
    monotheism,
    movement,
    setup,
    surplus,
    tax,
    trade,
    trade_cards,
)
from pbem.rules.phases.calamities import resolution, selection
from pbem.rules.ruleset.options import options_of

#: Recorded in every event's metadata and every snapshot, so a log says which
#: engine ruled it. 0.3.0 reshaped the rules package into layers without
#: changing a ruling: logs of 0.2.0 re-derive unchanged (tests/audit). 0.4.0
#: plays the two variants, No-Trading and Small Cities; games without them
#: are ruled as before. 0.5.0 adds the table (`pbem.rules.table`): its record
#: outlives the phase, a kicked seat's prompts are answered by their defaults,
#: and an order before one's turn is `NotYourTurn`; games without table events
#: are ruled as before. 0.6.0 adds the log's own events (`pbem.rules.ledger`): the seed
#: revealed and rollbacks (`pbem.rules.branches`); games without them are ruled as before.
ENGINE_VERSION = "0.6.0"

#: Every phase the engine can play, by phase id, in the order of the turn. A
#: phase of the turn that is not here is begun and then waits: the engine
#: cannot play it yet.
PHASES: dict[str, PhaseRules] = {
    rules.name: rules
    for rules in (
        setup.RULES,
        tax.RULES,
        expansion.RULES,
        movement.RULES,
        conflict.RULES,
        cities.RULES,
        trade_cards.RULES,
        trade.RULES,
        selection.RULES,
        resolution.RULES,
        monotheism.RULES,
        surplus.RULES,
        advances.RULES,
        ast.RULES,
    )
}
_ALL = (*PHASES.values(), turn.RULES, table.RULES, ledger.RULES)


def _table(entries: list[tuple[str, Any]]) -> dict[str, Any]:
    """One handler per event type: two phases claiming the same event is a mistake in the rules package."""
    found: dict[str, Any] = {}
    for key, handler in entries:
        if found.setdefault(key, handler) is not handler:
            raise ValueError(f"two phases handle the event type {key!r}")
    return found


_APPLY: dict[str, Apply] = _table([item for rules in _ALL for item in rules.apply.items()])
_INPUTS: dict[str, Any] = _table(
    [
        ("GameCreated", None),
        ("DeadlinePassed", lambda s, d: PassDeadline(d.get("by", "clock"), d.get("reason", ""))),
    ]
    + [item for rules in _ALL for item in rules.inputs.items()]
)
NARRATE: dict[str, Narrate] = _table([item for rules in _ALL for item in rules.narrate.items()])
#: Each command type's own phase: the first in the turn that takes it. A command
#: given in another phase goes to the phase in progress when that phase takes it
#: too (REDUCE in phase 11), else to its own phase, which says when it may be given.
_DECIDE: dict[type, Decide] = {}
for _rules in _ALL:
    for _command, _decide in _rules.decide.items():
        _DECIDE.setdefault(_command, _decide)


def apply(state: GameState, event: Event) -> GameState:
    """Fold one event into the state; the version counts events applied."""
    handler = _APPLY.get(event.type)
    if handler is None:
        raise ValueError(f"unknown event type {event.type!r}")
    return replace(handler(state, dict(event.data)), version=state.version + 1)


def known_event_type(name: str) -> bool:
    """True for an event type this engine can fold (a log from a newer engine may hold others)."""
    return name in _APPLY


def fold(state: GameState, events: Sequence[Event]) -> GameState:
    for event in events:
        state = apply(state, event)
    return state


def new_game(game_id: str) -> GameState:
    return GameState(game_id=game_id)


#: The prompts of the states asked about last, newest first, each checked by identity (`_asks_as`). Working out
#: the prompts is the dearest question the engine answers (a purchase prompt prices every bundle of cards), and
#: the service asks it of the same state up to nine times for one order (the deadline, kept orders, prompts, the
#: acknowledgement, the bots), then of the state after the deadline it set: a state is immutable, so its prompts
#: stay true. The tuple is replaced whole, never
#: changed, so threads sharing it see either the old one or the new one.
_RECENT_PENDING: tuple[tuple[GameState, dict[str, Prompt]], ...] = ()
_RECENT_PENDING_SIZE = 4


#: What a state holds that no prompt depends on: its place in the log, and the deadline the clock set. A
#: deadline set after an order (DeadlineSet) changes nothing else, so the prompts of the state before it serve.
_NOT_ASKED = frozenset({"version", "deadline"})


def _asks_as(known: GameState, state: GameState) -> bool:
    """True when ``state`` is ``known``, or differs from it only in what no prompt depends on (each other field
    the very same object: states are immutable and share what an event leaves alone)."""
    if known is state:
        return True
    theirs = state.__dict__
    return known.game_id == state.game_id and all(
        value is theirs[name] for name, value in known.__dict__.items() if name not in _NOT_ASKED)


def pending(state: GameState) -> dict[str, Prompt]:
    """Who must decide what now, keyed by lower-case nation (or player name before one is chosen).

    The caller gets its own dict (the prompts themselves are frozen).
    """
    global _RECENT_PENDING
    recent = _RECENT_PENDING
    for known, prompts in recent:
        if _asks_as(known, state):
            if known is not state:
                _RECENT_PENDING = ((state, prompts), *recent[: _RECENT_PENDING_SIZE - 1])
            return dict(prompts)
    rules = PHASES.get(state.phase)
    if state.finished or rules is None or state.step == "ended":
        prompts = {}
    else:
        prompts = dict(rules.pending(state))
    _RECENT_PENDING = ((state, prompts), *recent[: _RECENT_PENDING_SIZE - 1])
    return dict(prompts)


def paused(state: GameState) -> bool:
    """True when a whole turn passed with nobody to ask: the game waits for the clock to go on."""
    return not state.finished and state.step == "ended" and not pending(state)


def _kicked_defaults(state: GameState) -> list[Event]:
    """The defaults of the first prompt a kicked player is asked (KICK): his nation never holds up the game."""
    out = table.kicked(state)
    if not out:  # nearly always: then the prompts, the dearest thing to work out, are not needed
        return []
    for prompt in pending(state).values():
        if prompt.player_id in out:  # marked, so the reports do not blame a deadline
            events = PHASES[state.phase].defaults(state, prompt)
            return [replace(e, data={**e.data, "kicked": True}) if e.data.get("by_default") else e for e in events]
    return []


def _settle(state: GameState, draws: Draws) -> tuple[list[Event], GameState]:
    """Resolve automatic steps until someone must decide or nothing is left; the events and the state after them."""
    out: list[Event] = []
    turns_begun = 0
    for _ in range(100_000):
        if state.step == "ended":
            step = turn.next_phase(state)
            if step[0].data["turn"] != state.turn:
                turns_begun += 1
                if turns_begun > 1:  # a whole turn passed with nobody to ask: wait rather than spin
                    return out, state
        elif state.phase in PHASES:
            step = PHASES[state.phase].settle(state, draws) or _kicked_defaults(state)
        else:
            step = unplayable(state, options_of(state).unplayable_phases == "skip")
        if not step:
            return out, state
        out.extend(step)
        state = fold(state, step)
    raise RuntimeError("the engine kept resolving without ever waiting for a player")


def resume(state: GameState, draws: Draws) -> list[Event]:
    """Everything the engine resolves by itself from ``state`` (used when a position is set up by hand)."""
    return _settle(state, draws)[0]


def _decide_deadline(state: GameState, command: PassDeadline) -> list[Event]:
    events = [Event("DeadlinePassed", {"by": command.by, **({"reason": command.reason} if command.reason else {})})]
    rules = PHASES.get(state.phase)
    for prompt in pending(state).values():
        assert rules is not None
        events.extend(rules.defaults(state, prompt))
    return events


def decide(state: GameState, command: Command, draws: Draws) -> list[Event]:
    """Validate one command; return the order's events and every outcome that follows."""
    return decide_and_fold(state, command, draws)[0]


def decide_and_fold(state: GameState, command: Command, draws: Draws) -> tuple[list[Event], GameState]:
    """`decide`, and the state after its events: the engine folds them as it settles, so a caller that needs
    the state next (re-derivation walks a whole log this way) need not fold them a second time."""
    if state.finished and not isinstance(command, RevealSeed):
        raise Rejection("the game is over")
    if isinstance(command, PassDeadline):
        events = _decide_deadline(state, command)
    else:
        in_progress = PHASES.get(state.phase)
        handler = (in_progress and in_progress.decide.get(type(command))) or _DECIDE.get(type(command))
        if handler is None:  # pragma: no cover - every command type has a phase
            raise TypeError(f"unknown command {command!r}")
        events = handler(state, command)
    settled, after = _settle(fold(state, events), draws)
    return events + settled, after


def create(
    game_id: str,
    players: Sequence[tuple[int, str, str | None]],
    options: Mapping[str, str],
    seed_commitment: str,
    draws: Draws,
    revision: int = RULES_REVISION,
) -> list[Event]:
    """The events that start a game: creation, the place-card deal, any automatic steps.

    ``revision``: the rules revision to record; a re-derivation passes the one its log recorded.
    """
    events = setup.create_events(game_id, players, dict(options), seed_commitment, draws, revision)
    return events + _settle(fold(new_game(game_id), events), draws)[0]


def is_input(event: Event) -> bool:
    """True for an event that starts a batch: an order or clock tick, not a default filled in for one."""
    return event.type in _INPUTS and not event.data.get("by_default")


def command_for(state: GameState, event: Event) -> Command:
    """The command an input event records, so `verify` can decide it again."""
    make = _INPUTS.get(event.type)
    if make is None:
        raise ValueError(f"{event.type} is not an input event")
    return make(state, event.data)


def describe_event(state: GameState, event: Event, viewer: str = "auditor") -> str | None:
    """One line for ``event`` as ``viewer`` may read it, told by the phase that owns the event.

    The same sentence serves a player's turn report and a moderator's audit, so
    it names the rule clauses the event applied. None for bookkeeping nobody
    needs to read.
    """
    tell = NARRATE.get(event.type)
    return tell(state, event, viewer) if tell else f"{event.type}: {dict(event.data)}"

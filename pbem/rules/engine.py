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
from dataclasses import replace
from typing import Any

from pbem.rules import turn
from pbem.rules.core.commands import (
    Command,
    Moderate,
    NoteAbsence,
    NoteBounce,
    PassDeadline,
    ReplacePlayer,
    SendPress,
    SetDeadline,
    SetTimezone,
)
from pbem.rules.core.draws import Draws
from pbem.rules.core.events import Event
from pbem.rules.core.phase import Apply, Decide, Narrate, PhaseRules, unplayable
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState, Player
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
#: are ruled as before.
ENGINE_VERSION = "0.4.0"

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
_ALL = (*PHASES.values(), turn.RULES)


def _apply_deadline_set(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, deadline=data["due"])


def _apply_deadline_passed(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, deadline=None)


def _apply_mail_bounced(state: GameState, data: dict[str, Any]) -> GameState:
    return state  # the service's note: nothing on the board or in a hand changes


def _apply_timezone(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, filed=state.filed.set(f"timezone:{data['player']}", (data["zone"],)))


def _apply_replaced(state: GameState, data: dict[str, Any]) -> GameState:
    pid = data["player"]
    players = tuple(replace(p, name=data["name"]) if p.id == pid else p for p in state.players)
    filed = state.filed.set(f"seat:{pid}", (seat_generation(state, pid) + 1,)).without(f"timezone:{pid}")
    return replace(state, players=players, filed=filed)


def _apply_absence(state: GameState, data: dict[str, Any]) -> GameState:
    key = f"absent:{data['player']}"
    if not data["from"]:
        return replace(state, filed=state.filed.without(key))
    return replace(state, filed=state.filed.set(key, (data["from"], data["to"], data.get("reason", ""))))


def absences(state: GameState) -> dict[int, tuple[str, str, str]]:
    """Each player's announced absence: (first day, last day, reason)."""
    return {p.id: state.filed[f"absent:{p.id}"] for p in state.players if f"absent:{p.id}" in state.filed}


def seat_generation(state: GameState, player_id: int) -> int:
    """How many times a player's seat was handed over (REPLACE): his reply tokens are minted for it."""
    held = state.filed.get(f"seat:{player_id}")
    return held[0] if held else 0


def timezone_of(state: GameState, player_id: int) -> str:
    """The time zone a player set (TIMEZONE), else UTC."""
    held = state.filed.get(f"timezone:{player_id}")
    return held[0] if held else "UTC"


def paused_by_moderator(state: GameState) -> str | None:
    """The reason the moderator gave for pausing the game, or None when it runs."""
    held = state.filed.get("paused")
    return held[0] if held else None


def _apply_moderated(state: GameState, data: dict[str, Any]) -> GameState:
    action = data["action"]
    if action == "pause":
        return replace(state, filed=state.filed.set("paused", (data["reason"],)))
    if action == "resume":
        return replace(state, filed=state.filed.without("paused"))
    if action == "extend":
        return replace(state, deadline=data["due"])
    return state  # an announcement changes nothing


_MODERATED = {
    "pause": "The moderator paused the game: {reason}. No deadline passes until it resumes.",
    "resume": "The moderator resumed the game: {reason}.",
    "extend": "The moderator extended the deadline by {hours} hours, to {due}: {reason}.",
    "announce": "The moderator announces: {reason}",
}


def _table(entries: list[tuple[str, Any]]) -> dict[str, Any]:
    """One handler per event type: two phases claiming the same event is a mistake in the rules package."""
    table: dict[str, Any] = {}
    for key, handler in entries:
        if table.setdefault(key, handler) is not handler:
            raise ValueError(f"two phases handle the event type {key!r}")
    return table


_APPLY: dict[str, Apply] = _table(
    [("DeadlineSet", _apply_deadline_set), ("DeadlinePassed", _apply_deadline_passed), ("MailBounced", _apply_mail_bounced), ("Moderated", _apply_moderated), ("PressSent", _apply_mail_bounced), ("TimezoneSet", _apply_timezone), ("PlayerReplaced", _apply_replaced), ("AbsenceNoted", _apply_absence)]
    + [item for rules in _ALL for item in rules.apply.items()]
)
_INPUTS: dict[str, Any] = _table(
    [
        ("GameCreated", None),
        ("DeadlineSet", lambda s, d: SetDeadline(d["due"])),
        ("DeadlinePassed", lambda s, d: PassDeadline(d.get("by", "clock"))),
        ("MailBounced", lambda s, d: NoteBounce(d["player"], d.get("status", ""), d.get("reason", ""))),
        ("Moderated", lambda s, d: Moderate(d["action"], d["reason"], d.get("due", ""), d.get("hours", 0))),
        ("TimezoneSet", lambda s, d: SetTimezone(d["player"], d["zone"])),
        ("PlayerReplaced", lambda s, d: ReplacePlayer(d["player"], d["name"], d["reason"])),
        ("AbsenceNoted", lambda s, d: NoteAbsence(d["player"], d["from"], d["to"], d.get("reason", ""))),
        ("PressSent", lambda s, d: SendPress(d["player"], tuple(d["to"]), d["text"], d.get("anonymous", False))),
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


def fold(state: GameState, events: Sequence[Event]) -> GameState:
    for event in events:
        state = apply(state, event)
    return state


def new_game(game_id: str) -> GameState:
    return GameState(game_id=game_id)


def pending(state: GameState) -> dict[str, Prompt]:
    """Who must decide what now, keyed by lower-case nation (or player name before one is chosen)."""
    rules = PHASES.get(state.phase)
    if state.finished or rules is None or state.step == "ended":
        return {}
    return rules.pending(state)


def paused(state: GameState) -> bool:
    """True when a whole turn passed with nobody to ask: the game waits for the clock to go on."""
    return not state.finished and state.step == "ended" and not pending(state)


def _settle(state: GameState, draws: Draws) -> list[Event]:
    """Resolve automatic steps until someone must decide or nothing is left."""
    out: list[Event] = []
    turns_begun = 0
    for _ in range(100_000):
        if state.step == "ended":
            step = turn.next_phase(state)
            if step[0].data["turn"] != state.turn:
                turns_begun += 1
                if turns_begun > 1:  # a whole turn passed with nobody to ask: wait rather than spin
                    return out
        elif state.phase in PHASES:
            step = PHASES[state.phase].settle(state, draws)
        else:
            step = unplayable(state, options_of(state).unplayable_phases == "skip")
        if not step:
            return out
        out.extend(step)
        state = fold(state, step)
    raise RuntimeError("the engine kept resolving without ever waiting for a player")


def resume(state: GameState, draws: Draws) -> list[Event]:
    """Everything the engine resolves by itself from ``state`` (used when a position is set up by hand)."""
    return _settle(state, draws)


def press_readers(state: GameState, data: Mapping[str, Any]) -> list[Player]:
    """Who reads a press message: the players it names (every player for ALL), never its sender."""
    to = {n.lower() for n in data["to"]}
    return [p for p in state.players if p.id != data["player"] and ("all" in to or (p.nation or "").lower() in to)]


def _press(state: GameState, command: SendPress) -> Event:
    sender = next((p for p in state.players if p.id == command.player_id), None)
    if sender is None:
        raise Rejection("press comes from a player of this game")
    if not command.text.strip():
        raise Rejection("the press message is empty")
    data = {"player": command.player_id, "to": list(command.to), "text": command.text[:4000], "anonymous": command.anonymous}
    if not press_readers(state, data):
        raise Rejection("nobody would read it: name other players' nations, or ALL")
    return Event("PressSent", data)


def _decide_deadline(state: GameState, command: PassDeadline) -> list[Event]:
    events = [Event("DeadlinePassed", {"by": command.by})]
    rules = PHASES.get(state.phase)
    for prompt in pending(state).values():
        assert rules is not None
        events.extend(rules.defaults(state, prompt))
    return events


def decide(state: GameState, command: Command, draws: Draws) -> list[Event]:
    """Validate one command; return the order's events and every outcome that follows."""
    if state.finished:
        raise Rejection("the game is over")
    if isinstance(command, SetDeadline):
        events = [Event("DeadlineSet", {"due": command.due})]
    elif isinstance(command, PassDeadline):
        events = _decide_deadline(state, command)
    elif isinstance(command, Moderate):
        if command.action not in _MODERATED:
            raise Rejection(f"unknown moderator action {command.action!r}")
        if command.action == "pause" and paused_by_moderator(state) is not None:
            raise Rejection("the game is paused already")
        if command.action == "resume" and paused_by_moderator(state) is None:
            raise Rejection("the game is not paused")
        data = {"action": command.action, "reason": command.reason}
        if command.action == "extend":
            data.update(due=command.due, hours=command.hours)
        events = [Event("Moderated", data)]
    elif isinstance(command, NoteAbsence):
        if all(p.id != command.player_id for p in state.players):
            raise Rejection(f"there is no player {command.player_id} in this game")
        data = {"player": command.player_id, "from": command.start, "to": command.end, "reason": command.reason}
        events = [Event("AbsenceNoted", data)]
    elif isinstance(command, ReplacePlayer):
        if all(p.id != command.player_id for p in state.players):
            raise Rejection(f"there is no player {command.player_id} in this game")
        events = [Event("PlayerReplaced", {"player": command.player_id, "name": command.name, "reason": command.reason})]
    elif isinstance(command, SetTimezone):
        if all(p.id != command.player_id for p in state.players):
            raise Rejection(f"there is no player {command.player_id} in this game")
        events = [Event("TimezoneSet", {"player": command.player_id, "zone": command.zone})]
    elif isinstance(command, SendPress):
        events = [_press(state, command)]
    elif isinstance(command, NoteBounce):
        if all(p.id != command.player_id for p in state.players):
            raise Rejection(f"there is no player {command.player_id} in this game")
        events = [Event("MailBounced", {"player": command.player_id, "status": command.status, "reason": command.reason})]
    else:
        in_progress = PHASES.get(state.phase)
        handler = (in_progress and in_progress.decide.get(type(command))) or _DECIDE.get(type(command))
        if handler is None:  # pragma: no cover - every command type has a phase
            raise TypeError(f"unknown command {command!r}")
        events = handler(state, command)
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
    d = event.data
    if event.type == "DeadlinePassed":
        return f"The deadline passed ({d.get('by', 'clock')}); defaults were applied to missing orders."
    if event.type == "DeadlineSet":
        return None if viewer.startswith("player:") else f"Orders are due by {d['due']}."
    if event.type == "AbsenceNoted":
        who = state.player(d["player"])
        label = f"{who.name} ({who.nation})" if who.nation else who.name
        if not d["from"]:
            return f"{label} is no longer away."
        return f"{label} will be away from {d['from']} to {d['to']}" + (f": {d['reason']}." if d.get("reason") else ".")
    if event.type == "PlayerReplaced":
        old = state.player(d["player"])
        seat = old.nation or old.name
        return f"The moderator handed {seat} from {old.name} to {d['name']}: {d['reason']}."
    if event.type == "TimezoneSet":
        return None  # a player's own setting: nobody's business
    if event.type == "PressSent":
        readers = {f"player:{(p.nation or '').lower()}" for p in press_readers(state, d)}
        sender = state.player(d["player"])
        own = f"player:{(sender.nation or '').lower()}"
        public = "ALL" in [t.upper() for t in d["to"]]
        if viewer not in ("moderator", "auditor", own) and viewer not in readers and not (viewer == "observer" and public):
            return None
        hidden = d.get("anonymous") and viewer not in ("moderator", "auditor", own)
        who = "Anonymous" if hidden else (sender.nation or sender.name)
        return f"Press from {who} to {', '.join(d['to'])}: {d['text']}"
    if event.type == "Moderated":
        return _MODERATED[d["action"]].format(reason=d["reason"], hours=d.get("hours", 0), due=d.get("due", ""))
    if event.type == "MailBounced":
        if viewer not in ("moderator", "auditor"):
            return None
        why = " ".join(x for x in (d.get("status", ""), d.get("reason", "")) if x)
        return f"A letter to {state.player(d['player']).name} bounced" + (f": {why}." if why else ".")
    tell = NARRATE.get(event.type)
    return tell(state, event, viewer) if tell else f"{event.type}: {dict(d)}"

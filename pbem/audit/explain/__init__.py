"""Why did that happen? One event of a game's log explained to one viewer (`pbem explain`, EXPLAIN by mail).

Players dispute rulings; the log already names the clauses each event
applied and the engine tells each event as a sentence. An explanation adds
what a dispute needs: the order that started the event's batch, the numbers
it depended on just before it, the clauses, and the arithmetic step by step,
recomputed from that prior state with the rules package's own functions (a
token conflict round by round, a city attack's threshold, a purchase's
credits and sets, a calamity's unit points, a revolt's beneficiary ranking).
Any other event is explained by what it changed.

Only what the viewer may see goes in: if the engine tells the event to him
not at all, the whole answer is that the version is not his to see. The
modules of this package are named after the game's words: `conflict`,
`advances`, `calamities`, `tax`; `general` tells what any event changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pbem.audit.disclosure import overseer
from pbem.audit.explain import advances, calamities, cities, conflict, tax
from pbem.audit.explain.common import Case, Explainer, Told, wrap
from pbem.audit.explain.general import changes, general
from pbem.audit.explain.origin import told_origin
from pbem.rules.branches import fold_log, superseded, walk
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState
from pbem.rules.engine import describe_event, is_input
from pbem.rules.turn import phase_title
from pbem.rules.view import check_viewer, viewer_label
from pbem.store.events import RecordedEvent

#: The explainer of each event type with arithmetic of its own; any other type is explained by `general`.
EXPLAINERS: dict[str, Explainer] = {
    **conflict.EXPLAINERS,
    **advances.EXPLAINERS,
    **cities.EXPLAINERS,
    **calamities.EXPLAINERS,
    **tax.EXPLAINERS,
}


@dataclass(frozen=True)
class Explanation:
    """One event explained to one viewer: plain-text lines (phone-readable) and the clauses the event applied."""

    version: int
    viewer: str
    lines: tuple[str, ...]
    cites: tuple[str, ...]

    def text(self) -> str:
        return "\n".join(self.lines)

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "lines": list(self.lines), "cites": list(self.cites)}


def _state_before(game_id: str, events: Sequence[Event], version: int, start: GameState | None = None) -> GameState:
    """The game as it stood just before ``version`` (after ``version - 1``), rollbacks followed.

    ``start``, an earlier state of the same log, saves folding from the
    beginning again. The one place an explanation folds the log, so how a log
    with rollbacks is read is decided in `pbem.rules.branches` alone.
    """
    done = start.version if start is not None else 0
    return fold_log(game_id, events[done: version - 1], start=start,
                    state_at=lambda target: fold_log(game_id, events[:target]))


def _events(game_id: str, recorded: Sequence[RecordedEvent]) -> list[Event]:
    for position, rec in enumerate(recorded, 1):
        if rec.version != position:
            raise ValueError(f"the log of {game_id} given is not whole: version {rec.version} where {position} belongs")
    return [Event.from_payload(rec.type, rec.payload) for rec in recorded]


def _input(events: Sequence[Event], version: int) -> int | None:
    """The order (or clock tick) that started the batch holding ``version``: the latest input at or before it."""
    return next((v for v in range(version, 0, -1) if is_input(events[v - 1])), None)


def _started_by(states: tuple[GameState | None, GameState], events: Sequence[Event], recorded: Sequence[RecordedEvent],
                start: int | None, version: int, viewer: str, finished: bool,
                found: Mapping[int, Mapping[str, Any]]) -> list[str]:
    """The input ``start`` told to the viewer, and where it came from (`origin`): who sent it, and to those who may
    read it the line as written and the mail.

    ``states`` are the game just before the input and just after the event
    explained (in which a player who chose his nation with it has one).
    """
    state, after = states
    if start is None or state is None:
        return ["Started by: the game's creation."]
    if start == version:
        head = "Started by: this event itself."
    else:
        told = describe_event(state, events[start - 1], viewer)
        if told is None:
            return [f"Started by version {start}: an order that is not yours to read."]
        head = f"Started by version {start}: {told}"
    return [head, *told_origin(recorded, start, after, viewer, finished, found)]


def _when(state: GameState) -> str:
    title = phase_title(state, state.phase)
    return f"turn {state.turn}, {title}" if state.turn else f"setup, {title}"


def explain(game_id: str, recorded: Sequence[RecordedEvent], version: int, viewer: str, *,
            found: Mapping[int, Mapping[str, Any]] | None = None,
            state_at: Callable[[int], GameState] | None = None, now: GameState | None = None,
            decoded: Sequence[Event] | None = None) -> Explanation:
    """Explain the event at ``version`` of the game's whole log to ``viewer``.

    ``found``: where an input of an older log came from, by version, as the
    caller looked it up (its inbox); an input's own metadata says it since
    orders are recorded with their line (`origin`). ValueError (one line) for
    a version outside the log or an unknown viewer. ``state_at`` (the state
    after so many events, rollbacks followed, as the store's snapshots give
    it) and ``now`` (the game at the log's end) save folding the log from
    its beginning: a page of a long game explains an entry without it; ``decoded``, the log's events already
    read from ``recorded`` (a page keeps them), saves reading them again.
    """
    events = list(decoded) if decoded is not None and len(decoded) == len(recorded) else _events(game_id, recorded)
    if not 1 <= version <= len(events):
        span = f"versions 1 to {len(events)}" if events else "it has no events yet"
        raise ValueError(f"version {version} is outside the log of {game_id}: {span}")
    start = _input(events, version)
    if state_at is not None:
        at_start = state_at(start - 1) if start is not None else None
        before = state_at(version - 1)
    else:
        at_start = _state_before(game_id, events, start) if start is not None else None
        before = _state_before(game_id, events, version, at_start)
    now = now if now is not None else _state_before(game_id, events, len(events) + 1, before)
    asked, viewer = viewer, check_viewer(now, viewer)
    after = _state_before(game_id, events, version + 1, before)
    undone = superseded(events).get(version)
    return _explained(game_id, events, recorded, version, viewer, (at_start, before, after), (undone, now.finished),
                      {} if found is None else found, label=viewer_label(asked, viewer))


def explain_all(game_id: str, recorded: Sequence[RecordedEvent], viewer: str, *,
                found: Mapping[int, Mapping[str, Any]] | None = None) -> dict[int, Explanation]:
    """Every version explained to ``viewer``, in one walk of the log (the archive explains a whole game).

    The same explanations as `explain` gives one by one, without folding the
    log again for each: a long game's archive stays linear in its length.
    """
    events = _events(game_id, recorded)
    steps = list(walk(game_id, events))
    now = steps[-1][3] if steps else fold_log(game_id, events)
    asked, viewer = viewer, check_viewer(now, viewer)
    out: dict[int, Explanation] = {}
    undone = superseded(events)
    at_start: GameState | None = None
    for version, before, event, after in steps:
        if is_input(event):
            at_start = before
        out[version] = _explained(
            game_id, events, recorded, version, viewer, (at_start, before, after), (undone.get(version), now.finished),
            {} if found is None else found, label=viewer_label(asked, viewer),
        )
    return out


def _explained(
    game_id: str, events: Sequence[Event], recorded: Sequence[RecordedEvent], version: int, viewer: str,
    states: tuple[GameState | None, GameState, GameState], standing: tuple[int | None, bool],
    found: Mapping[int, Mapping[str, Any]], *, label: str | None = None,
) -> Explanation:
    """One explanation, given the states it reads (before the batch's input, before the event, after it) and where
    the event stands (the rollback that superseded it, if any; whether the game has ended). ``label`` names the
    viewer in the first line (`viewer_label`: an auditor during play is named an auditor; default ``viewer``)."""
    at_start, before, after = states
    undone, finished = standing
    start = _input(events, version)
    event = events[version - 1]
    hidden = Explanation(version, viewer, (f"version {version} is not yours to see",), ())
    if undone and not overseer(viewer, finished):
        return hidden
    outcome = describe_event(before, event, viewer)
    if outcome is None:
        return hidden
    case = Case(game_id, version, viewer, event, before, after, events[: version - 1])
    told = EXPLAINERS.get(event.type, general)(case)
    if not told.before:
        told = Told(general(case).before, told.how)
    lines = [f"EXPLAIN version {version} of {game_id} ({_when(before)}), as {label or viewer}."]
    if undone:
        lines.append(f"Superseded by the rollback at version {undone}: this no longer counts in the game.")
    lines.append(f"Outcome: {outcome}")
    lines += _started_by((at_start, after), events, recorded, start, version, viewer, finished, found)
    lines = wrap(lines)
    lines.append(f"Before (as at version {version - 1}):")
    lines += wrap(told.before or ("nothing the event names",), "  ")
    lines.append("Rules applied: " + (", ".join(event.cites) or "none cited"))
    if told.how:
        lines.append("How:")
        lines += wrap(told.how, "  ")
    lines.append("Changed:")
    lines += wrap(changes(case) or ["nothing you can see on the board or in the nations' numbers"], "  ")
    return Explanation(version, viewer, tuple(lines), tuple(event.cites))

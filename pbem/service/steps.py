"""What follows every change to a game: kept orders played, the deadline set, reports and prompts mailed.

Orders, a passing deadline and a moderator's action all end here, so each
use case leaves the game in the same shape: whoever is now asked has a
deadline and a prompt, and a phase that ended has been reported to everyone.
"""

from __future__ import annotations

from datetime import timedelta

from pbem.rules import engine as rules
from pbem.rules.core.commands import RevealSeed, SetDeadline
from pbem.rules.core.state import GameState
from pbem.rules.ledger import revealed_seed

from .batch import DEADLINE_FORMAT, Batch, deadline_hours
from .early_orders import play_kept_orders
from .letters import Letters
from .observers import watching
from .pictures import report_picture
from .projector import load_state, to_event
from .settings import Settings


def set_deadline(batch: Batch, game, settings: Settings, before: GameState) -> None:
    """A new phase, or someone newly asked, gets a fresh deadline, recorded as a clock event.

    A player already asked whose prompt changes (a trade offer arrives) does not
    move the deadline, so nobody can postpone a phase by sending orders.
    """
    asked_before = {p.player_id for p in rules.pending(before).values()}
    now_pending = rules.pending(batch.state)
    new_phase = (before.turn, before.phase) != (batch.state.turn, batch.state.phase)
    changed = new_phase or bool({p.player_id for p in now_pending.values()} - asked_before)
    if now_pending and (changed or batch.state.deadline is None):
        due = (batch.now + timedelta(hours=deadline_hours(game, settings, batch.state.phase))).strftime(DEADLINE_FORMAT)
        batch.decide(SetDeadline(due), actor="clock", source="scheduler")


def announce(batch: Batch, letters: Letters, before: GameState) -> None:
    """Mail the phase report (when a phase ended) and every new prompt."""
    if (before.turn, before.phase) != (batch.state.turn, batch.state.phase):
        start = before.phase_began - 1
        # what counts: a rollback inside the phase set events aside, and its report tells the rollback, not them
        phase_events = [to_event(r) for r in batch.uow.events.read(batch.state.game_id, after=start) if r.superseded_by is None]
        start_state = load_state(batch.uow, batch.state.game_id, upto=start)
        watchers = watching(batch.uow, batch.state)
        picture = report_picture(start_state, batch.state, letters.settings)
        letters.reports(start_state, phase_events, batch.state, batch.chain_head, since=before, watchers=watchers,
                        picture=picture)
    letters.new_prompts(rules.pending(before), batch.state, batch.chain_head)


def play_kept(batch: Batch, letters: Letters, before: GameState) -> None:
    """Orders sent before a turn that has now come are played (see `early_orders`)."""
    play_kept_orders(batch, letters, rules.pending(before))


def reveal_at_end(batch: Batch) -> None:
    """Once the game has ended its secret seed goes into the log, so anyone can re-derive every draw (DESIGN.md §4)."""
    if batch.state.finished and batch.seed and revealed_seed(batch.state, "observer") is None:
        batch.decide(RevealSeed(batch.seed, "everyone"), actor="clock", source="end")


def after_change(batch: Batch, letters: Letters, game, settings: Settings, before: GameState) -> None:
    """Everything a change leads to, in order: kept orders, the deadline, the letters."""
    play_kept(batch, letters, before)
    set_deadline(batch, game, settings, before)
    reveal_at_end(batch)
    announce(batch, letters, before)

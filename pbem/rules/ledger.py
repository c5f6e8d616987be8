"""The log's own events: the secret seed revealed, and a rollback by the moderator.

Neither moves a piece. The seed's reveal lets anyone re-derive every draw of
a game (DESIGN.md §4: committed at the start, revealed at the end); a
reveal to the moderator before the end is an event too, so every player
learns that the moderator could see the draws coming. A rollback marks what
followed a version as superseded: the state after it is the state at that
version, which only a fold over the whole log can know (`pbem.rules.branches`),
so folding one alone is refused rather than done wrong.
"""

from __future__ import annotations

from typing import Any

from pbem.rules.core.commands import RevealSeed
from pbem.rules.core.draws import commitment
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import PhaseRules
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState

#: The clause a rollback and a reveal cite: the design's account of the log (DESIGN.md §4).
LOG_CLAUSE = "DESIGN §4"
#: Viewers who may read a seed revealed to the moderator alone.
_SEED_READERS = ("moderator",)


def revealed_seed(state: GameState, viewer: str = "auditor") -> str | None:
    """The secret seed if it was revealed to ``viewer`` (everyone's after the end; the moderator's on request)."""
    held = state.table.get("seed")
    if not held:
        return None
    seed, to = held
    return seed if to == "everyone" or viewer in _SEED_READERS else None


def _decide_reveal(state: GameState, command: RevealSeed) -> list[Event]:
    if command.to not in ("everyone", "moderator"):
        raise Rejection(f"a seed is revealed to everyone or to the moderator, not to {command.to!r}", LOG_CLAUSE)
    if commitment(command.seed) != state.seed_commitment:
        raise Rejection("that is not the seed this game committed to at its start", LOG_CLAUSE)
    if command.to == "everyone" and not state.finished:
        raise Rejection("the seed is revealed to everyone only when the game has ended", LOG_CLAUSE)
    return [Event("SeedRevealed", {"seed": command.seed, "to": command.to}, (LOG_CLAUSE,))]


def _apply_reveal(state: GameState, data: dict[str, Any]) -> GameState:
    held = state.table.get("seed")
    if held and held[1] == "everyone":
        return state  # once public, a later request by the moderator changes nothing
    return replace(state, table=state.table.set("seed", (data["seed"], data["to"])))


def _apply_rollback(state: GameState, data: dict[str, Any]) -> GameState:
    raise ValueError("a RolledBack event is folded with the whole log (pbem.rules.branches.fold_log), never alone")


def _tell_reveal(state: GameState, event: Event, viewer: str) -> str:
    data = event.data
    if data["to"] == "everyone":
        return (
            f"The game is over and its secret seed is revealed: {data['seed']}. Its SHA-256 is the commitment "
            f"{state.seed_commitment} published at the start, and every draw of the game can be computed from it."
        )
    if viewer in _SEED_READERS:
        return f"The moderator asked for the secret seed and was told it: {data['seed']}."
    return "The moderator asked for the game's secret seed and was told it (this is recorded so that everyone knows)."


def _tell_rollback(state: GameState, event: Event, viewer: str) -> str:
    data = event.data
    reason = f": {data['reason']}" if data.get("reason") else ""
    return (
        f"The moderator rolled the game back to version {data['to']}{reason}. What was recorded after it is "
        "superseded: it stays in the log but no longer counts."
    )


RULES = PhaseRules(
    name="ledger",
    apply={"SeedRevealed": _apply_reveal, "RolledBack": _apply_rollback},
    decide={RevealSeed: _decide_reveal},
    inputs={
        "SeedRevealed": lambda s, d: RevealSeed(d["seed"], d["to"]),
        # A rollback is re-decided by `pbem.rules.branches`, which holds the log it needs.
        "RolledBack": lambda s, d: None,
    },
    narrate={"SeedRevealed": _tell_reveal, "RolledBack": _tell_rollback},
)

"""`pbem verify` for a page's reader: the hash chain, the rollbacks' marks, the seed and every draw re-derived.

Why a reader may run it: anyone entitled to see a game may audit a disputed
ruling and get the same answer twice (docs/audit.md). The checks are those
of `pbem verify` (pbem/cli/games.py), with one difference: a page never uses
the game's secret seed, only a seed the log itself has revealed to everyone
(at the game's end). Until then it says the chain holds and that the draws
wait for the seed.
"""

from __future__ import annotations

from collections.abc import Sequence

from pbem.audit.rederive import rederive
from pbem.rules.branches import superseded
from pbem.rules.core.draws import commitment
from pbem.rules.core.events import Event
from pbem.store.events import RecordedEvent
from pbem.store.verify import verify_chain

__all__ = ["verify_lines"]


def verify_lines(game_id: str, recorded: Sequence[RecordedEvent], events: Sequence[Event],
                 ended_seed: str | None = None) -> tuple[bool, list[str]]:
    """(whether every check passed, what each found, a line each) for the whole log ``recorded`` (``events``:
    the same, decoded). ``ended_seed``: the seed the server kept, given only once the game has ended, when it
    is everyone's to know (a game recorded before the log revealed it itself)."""
    chain = verify_chain(recorded)
    if not chain.ok:
        return False, [f"hash chain BROKEN at version {chain.first_broken}: {chain.reason}"]
    lines = [f"hash chain ok: {chain.checked} events, head {chain.head}"]
    undone = superseded(events)
    marked = {r.version: r.superseded_by for r in recorded if r.superseded_by is not None}
    if marked != undone:
        wrong = min(set(marked.items()) ^ set(undone.items()))[0]
        return False, lines + [f"superseded marks WRONG at version {wrong}: the rollbacks in the log say "
                               f"{undone.get(wrong)}, the store says {marked.get(wrong)}"]
    if undone:
        rollbacks = sum(1 for e in events if e.type == "RolledBack")
        lines.append(f"rollbacks: {rollbacks}, superseding {len(undone)} events; both branches are re-derived")
    public = [(r.version, r.payload["seed"]) for r in recorded
              if r.type == "SeedRevealed" and r.payload.get("to") == "everyone"]
    if not public and not ended_seed:
        lines.append("re-derivation waits for the secret seed, which the log reveals to everyone when the game "
                     "ends; until then the chain above is what can be checked")
        return True, lines
    at, seed = public[0] if public else (None, ended_seed)
    where = f"revealed at version {at}" if at is not None else "kept by the server, the game having ended"
    if commitment(seed) != events[0].data.get("seed_commitment"):
        return False, lines + [f"seed WRONG: the seed {where} does not hash to the commitment published at the start"]
    lines.append(f"seed ok: {where}, its SHA-256 is the commitment published at the start")
    result = rederive(game_id, list(events), seed)
    if not result.ok:
        return False, lines + [f"re-derivation FAILED at version {result.first_difference}: {result.reason}"]
    lines.append(f"re-derivation ok: {result.batches} inputs, {result.events} events match the engine")
    return True, lines

"""Check a game's hash chain from its recorded rows alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from pbem.store.events import GENESIS, RecordedEvent, StoredText, canonical_bytes, canonical_from_texts, chain_hash


@dataclass(frozen=True)
class ChainReport:
    ok: bool
    checked: int          # events that passed, before the first broken one
    head: str             # hash of the last event that passed (GENESIS if none)
    first_broken: int | None = None   # version of the first bad event
    reason: str | None = None


def verify_chain(
    events: Iterable[RecordedEvent],
    *,
    after_version: int = 0,
    after_hash: str = GENESIS,
) -> ChainReport:
    """Re-derive every hash of one game's events, given in version order.

    By default the events must start at version 1 (after ``GENESIS``); to
    check a tail, pass the version and hash of the event before it. Stops at
    the first problem and names it.
    """
    expected_version = after_version + 1
    previous_hash = after_hash
    game_id = None
    checked = 0

    def broken(version: int, reason: str) -> ChainReport:
        return ChainReport(
            ok=False, checked=checked, head=previous_hash,
            first_broken=version, reason=reason,
        )

    for event in events:
        if game_id is None:
            game_id = event.game_id
        elif event.game_id != game_id:
            return broken(
                event.version,
                f"game id changes at version {event.version}: "
                f"expected {game_id!r}, found {event.game_id!r}",
            )
        if event.version != expected_version:
            return broken(
                event.version,
                f"gap: expected version {expected_version}, found {event.version}",
            )
        if event.prev_hash != previous_hash:
            if expected_version == 1:
                what = "the genesis hash"
            else:
                what = f"the hash of version {expected_version - 1}"
            return broken(
                event.version,
                f"prev_hash at version {event.version} does not match {what}",
            )
        recomputed = chain_hash(
            event.prev_hash,
            canonical_bytes(
                event.game_id, event.version, event.type,
                event.schema_version, event.payload, event.metadata,
            ),
        )
        if recomputed != event.hash:
            return broken(
                event.version,
                f"hash mismatch at version {event.version}: "
                f"recorded {event.hash}, recomputed {recomputed}",
            )
        checked += 1
        previous_hash = event.hash
        expected_version += 1

    return ChainReport(ok=True, checked=checked, head=previous_hash)


def chain_holds(game_id: str, rows: Iterable[StoredText]) -> bool:
    """True when every stored hash of one game's log, from version 1 on, is the hash of its row's stored texts
    and links to the one before.

    A quick yes for commands that only need the log sound (`pbem state`):
    no row is decoded. False says only that ``verify_chain`` must look: it
    names the fault, and it alone decides (a text stored in a spelling other
    than the one hashed is a False here and sound there).
    """
    previous = GENESIS
    for expected, row in enumerate(rows, 1):
        if row.version != expected or row.prev_hash != previous:
            return False
        if chain_hash(previous, canonical_from_texts(game_id, row)) != row.hash:
            return False
        previous = row.hash
    return True

"""The event store: tables, hash-chained event log, inbox, outbox, snapshots.

See docs/store.md.
"""

from pbem.store.database import default_url, ensure_schema, make_engine, upgrade
from pbem.store.events import (
    GENESIS,
    ConcurrencyError,
    DuplicateDelivery,
    EventStore,
    NewEvent,
    RecordedEvent,
    canonical_bytes,
    chain_hash,
)
from pbem.store.games import Games, Players, check_secret, hash_secret
from pbem.store.inbox import Inbox
from pbem.store.observers import Observers
from pbem.store.outbox import Outbox
from pbem.store.snapshots import Snapshots
from pbem.store.unit_of_work import UnitOfWork
from pbem.store.verify import ChainReport, verify_chain

__all__ = [
    "GENESIS",
    "ChainReport",
    "ConcurrencyError",
    "DuplicateDelivery",
    "EventStore",
    "Games",
    "Inbox",
    "NewEvent",
    "Observers",
    "Outbox",
    "Players",
    "RecordedEvent",
    "Snapshots",
    "UnitOfWork",
    "canonical_bytes",
    "chain_hash",
    "check_secret",
    "default_url",
    "ensure_schema",
    "hash_secret",
    "make_engine",
    "upgrade",
    "verify_chain",
]

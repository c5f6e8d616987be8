"""The append-only, hash-chained event log.

Each game's events are numbered 1, 2, 3, ... (the game *version*); every event
also has a global *position* across all games. Each event carries the SHA-256
of its predecessor's hash and its own canonical bytes, so a game's log is a
hash chain from ``GENESIS``; see ``docs/store.md`` for the recipe.

``EventStore`` works on a SQLAlchemy ``Connection`` whose transaction the
caller owns: appending events, the outbox mails they cause and marking the
inbox message done all commit, or roll back, together.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import orjson
from sqlalchemy import Connection, bindparam, func, select
from sqlalchemy.exc import IntegrityError

from pbem.store.prepared import Prepared, driver_cursor
from pbem.store.schema import events as events_table

GENESIS = "0" * 64

_DEDUPE_CONSTRAINT = "uq_events_dedupe_key"
_VERSION_CONSTRAINT = "uq_events_game_id_version"


class ConcurrencyError(Exception):
    """Another writer got there first: the game's head is not the expected one."""

    def __init__(self, game_id: str, expected: int, actual: int | None):
        self.game_id = game_id
        self.expected = expected
        self.actual = actual
        if actual is None:
            detail = "another writer appended the same version concurrently"
        else:
            detail = f"the log is at version {actual}"
        super().__init__(
            f"game {game_id!r}: expected to append after version {expected}, "
            f"but {detail}"
        )


class DuplicateDelivery(Exception):
    """An event with this dedupe key is already in the log; nothing appended."""

    def __init__(self, dedupe_key: str, game_id: str | None = None):
        self.dedupe_key = dedupe_key
        self.game_id = game_id
        where = f" (game {game_id!r})" if game_id is not None else ""
        super().__init__(f"dedupe key {dedupe_key!r} already recorded{where}")


@dataclass(frozen=True)
class NewEvent:
    """An event to be appended; the store assigns version, position and hashes."""

    type: str
    payload: dict
    metadata: dict = field(default_factory=dict)
    dedupe_key: str | None = None
    schema_version: int = 1


@dataclass(frozen=True)
class RecordedEvent:
    position: int
    game_id: str
    version: int
    type: str
    schema_version: int
    payload: dict
    metadata: dict
    dedupe_key: str | None
    prev_hash: str
    hash: str
    superseded_by: int | None = None

    def __getattr__(self, name: str) -> Any:
        """The payload and metadata of an event ``append`` returned, decoded from their texts when first read.

        Called only for an attribute the instance lacks. The service keeps
        just the hash of what it appended (its state is folded from its own
        events), so decoding both texts on every append, a tenth of a
        one-event append's own time, was work nobody used. Read, they are
        what reading the event back gives, as before (the tests compare)."""
        if name in ("payload", "metadata"):
            fields = self.__dict__
            texts = fields.get("_texts")
            if texts is not None:
                fields["payload"], fields["metadata"] = _loads(texts[0]), _loads(texts[1])
                fields.pop("_texts", None)
                return fields[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


# One encoder for every canonical text: json.dumps with options builds a new
# encoder on every call, a fifth of a batched append's time.
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _c_encoder() -> Callable[[Any, int], list[str]] | None:
    """The standard library's C encoder, made once with _ENCODER's settings, or None where there is none.

    ``JSONEncoder.encode`` makes this very object afresh for every value it
    encodes: half its time for an event's payload. The text is the same,
    made by the same C code (tests/store/test_event_store.py compares
    the two). Made without the circular-reference check, whose state a
    failed call could leave behind; a value that contains itself then fails
    with RecursionError instead of ValueError."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    try:
        return make(None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", True, False, False)
    except TypeError:  # another Python's signature: keep the encoder's own way
        return None


_C_ENCODE = _c_encoder()
_encode_text = json.encoder.encode_basestring


def _dumps(value: Any) -> str:
    if isinstance(value, str):
        return _encode_text(value)
    if _C_ENCODE is None:
        return _ENCODER.encode(value)
    return "".join(_C_ENCODE(value, 0))


def canonical_bytes(
    game_id: str,
    version: int,
    type: str,  # noqa: A002 - the field's name
    schema_version: int,
    payload: Mapping[str, Any],
    metadata: Mapping[str, Any],
) -> bytes:
    """The bytes an event's hash covers.

    A JSON object with the keys ``game_id, metadata, payload, schema_version,
    type, version``, serialised with sorted keys, ``(",", ":")`` separators,
    non-ASCII characters written as themselves, encoded as UTF-8.
    """
    return _dumps(
        {
            "game_id": game_id,
            "version": version,
            "type": type,
            "schema_version": schema_version,
            "payload": payload,
            "metadata": metadata,
        }
    ).encode("utf-8")


def canonical_from_texts(game_id: str, row: StoredText) -> bytes:
    """The bytes an event's hash covers, spelled from its stored texts (no decoding): what ``canonical_bytes``
    gives for a row the store wrote, whose payload and metadata columns hold their canonical texts (the
    append spells its own the same way, inline)."""
    return (f'{{"game_id":{_encode_text(game_id)},"metadata":{row.metadata},"payload":{row.payload},'
            f'"schema_version":{int(row.schema_version)},"type":{_encode_text(row.type)},'
            f'"version":{row.version}}}').encode("utf-8")


def chain_hash(prev_hash: str, canonical: bytes) -> str:
    """``sha256(prev_hash as ASCII + canonical).hexdigest()``."""
    return hashlib.sha256(prev_hash.encode("ascii") + canonical).hexdigest()


class StoredText(NamedTuple):
    """An event's row as the hash chain covers it, its payload and metadata as the texts stored
    (``EventStore.stored_texts``): for checking the chain without decoding the log."""

    version: int
    type: str
    schema_version: int
    payload: str
    metadata: str
    prev_hash: str
    hash: str


class FoldInput(NamedTuple):
    """What folding an event needs of its row, and no more (``EventStore.read_for_fold``)."""

    version: int
    type: str
    payload: dict
    hash: str


# A run of 19 digits may be an integer beyond 64 bits, which orjson reads as a float where json reads an int.
_LONG_NUMBER = re.compile(r"[0-9]{19}")


def _loads(text: str) -> Any:
    """``json.loads(text)``, the same result three times faster.

    Reading a long game from the store spent nearly as long decoding its
    JSON as folding its events (docs/performance.md). orjson decodes to the same values
    as the standard library for every text the store writes, save two
    differences, which go to ``json.loads`` instead: an integer of more than
    64 bits (orjson makes it a float; any text with 19 digits in a row is
    left to json) and texts orjson refuses (a lone surrogate, ``1e400``).
    Only reading changes: what is hashed is the text as written.
    """
    if _LONG_NUMBER.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


_FIELDS = tuple(RecordedEvent.__dataclass_fields__)
_new = object.__new__


def _recorded(row) -> RecordedEvent:
    """A RecordedEvent from a row of ``_COLUMNS``, a SQLAlchemy Row or the driver's plain tuple.

    Built without the dataclass's ``__init__``: a frozen dataclass sets each
    of its eleven fields through ``object.__setattr__``, four times the cost
    of filling its ``__dict__`` directly, and a replay reads ten thousand.
    The fields are the same as ``__init__`` would set (no defaults apply:
    every column is read).
    """
    values = list(row)
    values[5] = _loads(values[5])
    values[6] = _loads(values[6])
    event = _new(RecordedEvent)
    event.__dict__.update(zip(_FIELDS, values))
    return event


_COLUMNS = (
    events_table.c.position,
    events_table.c.game_id,
    events_table.c.version,
    events_table.c.type,
    events_table.c.schema_version,
    events_table.c.payload,
    events_table.c.meta.label("meta"),
    events_table.c.dedupe_key,
    events_table.c.prev_hash,
    events_table.c.hash,
    events_table.c.superseded_by,
)


# The append's statements, compiled once per dialect and run on the driver's
# cursor (pbem/store/prepared.py): through SQLAlchemy's execution layer they
# cost more than SQLite's own work (docs/performance.md).
_HEAD = Prepared(
    select(events_table.c.version, events_table.c.hash)
    .where(events_table.c.game_id == bindparam("game_id"))
    .order_by(events_table.c.version.desc())
    .limit(1)
)
_DEDUPE = Prepared(select(events_table.c.game_id).where(events_table.c.dedupe_key == bindparam("key")))
_INSERT_COLUMNS = ("game_id", "version", "type", "schema_version", "payload", "meta", "dedupe_key",
                   "prev_hash", "hash")
_INSERT = Prepared(events_table.insert(), _INSERT_COLUMNS, returns=events_table.c.position)
_HEAD_NAMES = ("game_id",)
_GAME_LOG = (
    select(*_COLUMNS)
    .where(events_table.c.game_id == bindparam("game_id"))
    .where(events_table.c.version > bindparam("after"))
    .order_by(events_table.c.version)
)
_READ = Prepared(_GAME_LOG)
_READ_UPTO = Prepared(_GAME_LOG.where(events_table.c.version <= bindparam("upto")))
# Folding needs four of the eleven columns: the metadata (the largest) is neither read nor decoded.
_FOLD_LOG = (
    select(events_table.c.version, events_table.c.type, events_table.c.payload, events_table.c.hash)
    .where(events_table.c.game_id == bindparam("game_id"))
    .where(events_table.c.version > bindparam("after"))
    .order_by(events_table.c.version)
)
_STORED_TEXTS = Prepared(
    select(events_table.c.version, events_table.c.type, events_table.c.schema_version, events_table.c.payload,
           events_table.c.meta, events_table.c.prev_hash, events_table.c.hash)
    .where(events_table.c.game_id == bindparam("game_id"))
    .order_by(events_table.c.version)
)
_READ_FOLD = Prepared(_FOLD_LOG)
_READ_FOLD_UPTO = Prepared(_FOLD_LOG.where(events_table.c.version <= bindparam("upto")))


_sha256 = hashlib.sha256
_Statements = tuple[str, Callable[[tuple], Any], str, Callable[[tuple], Any], Callable[[Any], int]]
_APPEND_STATEMENTS: dict[str, _Statements] = {}


def _append_statements(dialect) -> _Statements:
    """The head read's and the insert's SQL and binders, and how to read a new row's position, for
    ``dialect``: looked up once per append."""
    found = _APPEND_STATEMENTS.get(dialect.name)
    if found is None:
        found = _APPEND_STATEMENTS[dialect.name] = (*_HEAD.binder(dialect, _HEAD_NAMES),
                                                    *_INSERT.binder(dialect, _INSERT_COLUMNS),
                                                    _INSERT.new_key(dialect))
    return found


class EventStore:
    """The event log, on a connection whose transaction the caller owns."""

    def __init__(self, conn: Connection, driver: Any = None):
        """``driver``: SQLite's driver connection under ``conn``, as a unit of work on the engine's writer passes
        it (pbem/store/writer.py), so that an append need not look for it through ``conn``."""
        self.conn = conn
        self._driver = driver

    # -- reading -----------------------------------------------------------

    def head(self, game_id: str) -> tuple[int, str]:
        """``(version, hash)`` of the game's last event; ``(0, GENESIS)`` if none."""
        row = _HEAD.run(self.conn, {"game_id": game_id}).fetchone()
        if row is None:
            return 0, GENESIS
        return row[0], row[1]

    def read(
        self, game_id: str, after: int = 0, upto: int | None = None
    ) -> list[RecordedEvent]:
        """The game's events with ``after < version <= upto``, in version order."""
        if upto is None:
            rows = _READ.run(self.conn, {"game_id": game_id, "after": after}).fetchall()
        else:
            rows = _READ_UPTO.run(self.conn, {"game_id": game_id, "after": after, "upto": upto}).fetchall()
        return [_recorded(row) for row in rows]

    def read_for_fold(self, game_id: str, after: int = 0, upto: int | None = None) -> list[FoldInput]:
        """Version, type, payload and hash of the game's events with ``after < version <= upto``, in order.

        For replaying a state from a trusted starting point (a snapshot, or
        nothing): two thirds of a full read's time went to the columns and
        metadata a fold never looks at. Reads that check the hash chain need
        ``read``."""
        if upto is None:
            rows = _READ_FOLD.run(self.conn, {"game_id": game_id, "after": after}).fetchall()
        else:
            rows = _READ_FOLD_UPTO.run(self.conn, {"game_id": game_id, "after": after, "upto": upto}).fetchall()
        return [FoldInput(version, type_, _loads(payload), hash_) for version, type_, payload, hash_ in rows]

    def stored_texts(self, game_id: str) -> list[StoredText]:
        """Every event of the game as the hash chain covers it, payload and metadata as the texts stored, in
        version order: checking the chain this way (``pbem.store.verify.chain_holds``) decodes nothing."""
        return [StoredText(*row) for row in _STORED_TEXTS.run(self.conn, {"game_id": game_id}).fetchall()]

    def read_all(
        self, after_position: int = 0, limit: int | None = None
    ) -> list[RecordedEvent]:
        """Events of every game with ``position > after_position``, by position.

        On PostgreSQL positions come from a sequence: they are unique and
        increasing in insertion order, but a concurrent transaction may commit
        a lower position after a higher one is visible.
        """
        query = (
            select(*_COLUMNS)
            .where(events_table.c.position > after_position)
            .order_by(events_table.c.position)
        )
        if limit is not None:
            query = query.limit(limit)
        return [_recorded(row) for row in self.conn.execute(query)]

    def seen(self, dedupe_key: str) -> bool:
        """Whether an event with this dedupe key is already recorded."""
        return self._dedupe_owner(dedupe_key) is not None

    def all_games(self) -> list[str]:
        """Ids of every game with at least one event, sorted."""
        rows = self.conn.execute(
            select(events_table.c.game_id).distinct().order_by(events_table.c.game_id)
        )
        return [row.game_id for row in rows]

    def count(self, game_id: str | None = None) -> int:
        query = select(func.count()).select_from(events_table)
        if game_id is not None:
            query = query.where(events_table.c.game_id == game_id)
        return self.conn.execute(query).scalar_one()

    # -- writing -----------------------------------------------------------

    def append(
        self, game_id: str, expected_version: int, events: Sequence[NewEvent]
    ) -> list[RecordedEvent]:
        """Append ``events`` as versions ``expected_version + 1, ...``.

        All or nothing, and on either error below nothing of the batch remains
        and the caller's transaction is still usable (e.g. to mark the inbox
        message as a duplicate).

        Raises ``DuplicateDelivery`` if any event's dedupe key is already
        recorded (a re-delivered message is a duplicate even if the game moved
        on), ``ConcurrencyError`` if the game's head is not
        ``expected_version``.

        The common case costs one indexed read (the head) and one INSERT: the
        unique index on the dedupe key finds a duplicate as the row goes in,
        and the keys are looked up only when something is wrong. A SAVEPOINT
        (two more statements) is taken only where a failed INSERT would leave
        something behind: on PostgreSQL, where an error aborts the whole
        transaction, and for a batch of several rows on SQLite, where a
        failing statement undoes only itself (one row is all or nothing).
        """
        events = list(events)
        keys = [e.dedupe_key for e in events if e.dedupe_key is not None]
        if len(keys) > 1 and len(set(keys)) != len(keys):
            raise ValueError(f"the batch repeats a dedupe key: {keys!r}")

        # Both statements on one cursor of the driver, their SQL and
        # arguments worked out once per dialect (pbem/store/prepared.py).
        conn = self.conn
        dialect = conn.dialect
        head_sql, head_arguments, insert_sql, insert_arguments, new_position = _append_statements(dialect)
        driver = self._driver
        cursor = driver.cursor() if driver is not None and driver.in_transaction else driver_cursor(conn)
        row = cursor.execute(head_sql, head_arguments((game_id,))).fetchone()
        version, prev_hash = (0, GENESIS) if row is None else row
        if version != expected_version:
            self._raise_if_duplicate(keys)
            raise ConcurrencyError(game_id, expected_version, version)
        if not events:
            return []

        rows: list[tuple] = []
        game_text = _encode_text(game_id)
        for event in events:
            if not isinstance(event, NewEvent):
                raise TypeError(f"expected NewEvent, got {type(event).__name__}")
            version += 1
            payload_text = _dumps(event.payload)
            metadata_text = _dumps(event.metadata)
            # The canonical bytes spelled out from the texts just made: equal
            # to canonical_bytes() of what will be read back (a tuple in a
            # payload reads back as a list, and its text is already a list's).
            canonical = (f'{{"game_id":{game_text},"metadata":{metadata_text},"payload":{payload_text},'
                         f'"schema_version":{int(event.schema_version)},"type":{_encode_text(event.type)},'
                         f'"version":{version}}}').encode("utf-8")
            digest = _sha256(prev_hash.encode("ascii") + canonical).hexdigest()  # chain_hash, inline
            # In the order of _INSERT_COLUMNS.
            rows.append((game_id, version, event.type, event.schema_version, payload_text, metadata_text,
                         event.dedupe_key, prev_hash, digest))
            prev_hash = digest

        try:
            if len(rows) > 1 or dialect.name != "sqlite":
                with conn.begin_nested():
                    positions = [new_position(cursor.execute(insert_sql, insert_arguments(row))) for row in rows]
            else:
                positions = [new_position(cursor.execute(insert_sql, insert_arguments(rows[0])))]
        except (IntegrityError, dialect.loaded_dbapi.IntegrityError) as exc:
            raise self._translate(exc, game_id, expected_version, keys) from exc
        recorded = []
        for (_, version, type_, schema_version, payload_text, metadata_text, dedupe_key, prev_hash, digest), \
                position in zip(rows, positions):
            # Filled without the frozen dataclass's __init__, the payload and metadata left to decode when read.
            event = _new(RecordedEvent)
            event.__dict__.update(position=position, game_id=game_id, version=version, type=type_,
                                  schema_version=schema_version, dedupe_key=dedupe_key, prev_hash=prev_hash,
                                  hash=digest, superseded_by=None, _texts=(payload_text, metadata_text))
            recorded.append(event)
        return recorded

    def mark_superseded(
        self, game_id: str, after: int, upto: int, by_version: int
    ) -> int:
        """Mark versions ``after < v <= upto`` as superseded by ``by_version``.

        ``superseded_by`` is outside the hash, so the chain stays intact: a
        rollback is itself an event and the superseded events stay readable.
        Returns the number of events marked.
        """
        result = self.conn.execute(
            events_table.update()
            .where(events_table.c.game_id == game_id)
            .where(events_table.c.version > after)
            .where(events_table.c.version <= upto)
            .where(events_table.c.superseded_by.is_(None))
            .values(superseded_by=by_version)
        )
        return result.rowcount

    # -- internals -----------------------------------------------------------

    def _raise_if_duplicate(self, keys: Iterable[str]) -> None:
        for key in keys:
            owner = self._dedupe_owner(key)
            if owner is not None:
                raise DuplicateDelivery(key, owner)

    def _dedupe_owner(self, dedupe_key: str) -> str | None:
        row = _DEDUPE.run(self.conn, {"key": dedupe_key}).fetchone()
        return None if row is None else row[0]

    def _translate(
        self,
        exc: Exception,
        game_id: str,
        expected_version: int,
        keys: Iterable[str],
    ) -> Exception:
        """Turn a unique-constraint violation into the store's own error.

        A concurrent writer committed between our checks and our insert. The
        constraint name (PostgreSQL) or the message (SQLite) says which one;
        failing that, look again now that the other transaction is visible.
        """
        error = getattr(exc, "orig", exc)  # SQLAlchemy's wrapper, or the driver's own error
        constraint = getattr(getattr(error, "diag", None), "constraint_name", None)
        text = str(error)
        if constraint == _DEDUPE_CONSTRAINT or "events.dedupe_key" in text:
            for key in keys:
                owner = self._dedupe_owner(key)
                if owner is not None:
                    return DuplicateDelivery(key, owner)
            return DuplicateDelivery(next(iter(keys), "?"), None)
        if constraint == _VERSION_CONSTRAINT or "events.game_id, events.version" in text:
            return ConcurrencyError(game_id, expected_version, self._head_or_none(game_id))
        for key in keys:
            owner = self._dedupe_owner(key)
            if owner is not None:
                return DuplicateDelivery(key, owner)
        return ConcurrencyError(game_id, expected_version, self._head_or_none(game_id))

    def _head_or_none(self, game_id: str) -> int | None:
        try:
            version, _ = self.head(game_id)
        except Exception:  # pragma: no cover - the transaction may be unusable
            return None
        return version if version else None

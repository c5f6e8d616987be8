"""A game as one file another installation can check and replay (`pbem export`, `pbem import`).

The file is JSON lines in UTF-8 (docs/audit.md, "Exporting a game"): a header,
then every event in version order with the fields the store keeps. The hash
chain travels with it, so the reader trusts nothing but the arithmetic: each
event's ``prev_hash`` must be the hash before it, and every event the file
holds whole is hashed again. A viewer's export withholds the payload (and
metadata) of the events that viewer may not read (`pbem.audit.disclosure`);
such an event's hash cannot be recomputed, but its links still are, and the
head is the one printed in that viewer's mail.

What never leaves: the moderator's and the players' addresses, the reply
secret, and the secret seed unless the log itself reveals it. The dedupe key
(a mail Message-ID, outside the hash) goes out in complete exports only and
is not stored by an import (see `store_export`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, text, update

from pbem.audit.disclosure import may_read, metadata_public, overseer, own_metadata
from pbem.escaping import UNSAFE
from pbem.rules.branches import fold_log, superseded, walk
from pbem.rules.core.draws import commitment
from pbem.rules.core.events import Event
from pbem.rules.engine import ENGINE_VERSION
from pbem.rules.view import check_viewer
from pbem.store.events import (
    GENESIS,
    NewEvent,
    RecordedEvent,
    canonical_bytes,
    chain_hash,
)
from pbem.store.schema import games, players
from pbem.store.unit_of_work import UnitOfWork

FORMAT = "pbem-export"
FORMAT_VERSION = 1
#: The status of an imported game: one that nothing plays (no deadline, no reminder, no mail).
IMPORTED = "imported"
#: Addresses of an imported game: `.invalid` is reserved (RFC 2606), so no letter can ever reach anyone.
MODERATOR_ADDRESS = "imported@invalid"

_HEADER_KEYS = {"format", "format_version", "game_id", "ruleset", "options", "seed_commitment", "created_at",
                "exported_as", "exported_at", "head", "engine_version"}
_HEADER_OPTIONAL = {"exported_at"}
_EVENT_KEYS = {"version", "type", "schema_version", "payload", "metadata", "dedupe_key", "prev_hash", "hash",
               "superseded_by", "withheld"}
_HEX64 = re.compile(r"[0-9a-f]{64}")


class ExportError(Exception):
    """An export that cannot be read or does not hold together; ``version`` names the first bad event, if any."""

    def __init__(self, message: str, version: int | None = None):
        super().__init__(message)
        self.version = version


class ImportRefused(Exception):
    """A sound export this database will not take (a partial one, an id in use); nothing was stored."""


@dataclass(frozen=True)
class ExportedEvent:
    """One event line; ``payload`` and ``metadata`` are None when withheld."""

    version: int
    type: str
    schema_version: int
    payload: dict | None
    metadata: dict | None
    dedupe_key: str | None
    prev_hash: str
    hash: str
    superseded_by: int | None

    @property
    def withheld(self) -> tuple[str, ...]:
        return tuple(name for name in ("payload", "metadata") if getattr(self, name) is None)


@dataclass(frozen=True)
class Export:
    header: dict[str, Any]
    events: list[ExportedEvent]

    @property
    def game_id(self) -> str:
        return self.header["game_id"]

    @property
    def withheld(self) -> int:
        """How many events are not held whole (their hash cannot be recomputed here)."""
        return sum(1 for e in self.events if e.withheld)


@dataclass(frozen=True)
class ExportCheck:
    """What checking an export found: counts, the head, or the first broken link and why."""

    ok: bool
    events: int
    rehashed: int
    withheld: int
    head_version: int
    head: str
    first_broken: int | None = None
    reason: str | None = None


def dump_line(value: dict[str, Any]) -> str:
    """One line of an export: compact JSON, keys sorted, UTF-8 characters as themselves.

    Except the control characters JSON would write raw (DEL, the C1 controls,
    bidi overrides, line separators, lone surrogates: `pbem.escaping.UNSAFE`),
    written as JSON escapes (``\\u009b``): the data read back is the same,
    and an export shown on a terminal obeys none of what a player wrote.
    """
    line = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return UNSAFE.sub(_json_escape, line) if UNSAFE.search(line) else line


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


# -- writing --------------------------------------------------------------------------------------


def export_lines(game, recorded: Sequence[RecordedEvent], viewer: str, *, exported_at: str | None = None) -> Iterator[str]:
    """The lines of ``game``'s export as ``viewer`` may have it (header first), without newlines."""
    return map(dump_line, export_records(game, recorded, viewer, exported_at=exported_at))


def export_records(
    game, recorded: Sequence[RecordedEvent], viewer: str, *, exported_at: str | None = None
) -> Iterator[dict[str, Any]]:
    """The header, then one record per event, as ``viewer`` may have them.

    ``game`` is the games row (``game_id, ruleset, options, seed_commitment,
    created_at``); ``recorded`` the whole log. Raises ValueError for a viewer
    the game does not know.
    """
    events = [Event.from_payload(r.type, r.payload) for r in recorded]
    now = fold_log(game.game_id, events)
    viewer = check_viewer(now, viewer)
    complete = overseer(viewer, now.finished)
    undone = superseded(events)
    version, head = (recorded[-1].version, recorded[-1].hash) if recorded else (0, GENESIS)
    header: dict[str, Any] = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "game_id": game.game_id, "ruleset": game.ruleset,
        "options": dict(game.options or {}), "seed_commitment": game.seed_commitment,
        "created_at": game.created_at.isoformat(), "exported_as": viewer,
        "head": {"version": version, "hash": head}, "engine_version": ENGINE_VERSION,
    }
    if exported_at is not None:
        header["exported_at"] = exported_at
    yield header
    for rec, (_, before, _, _) in zip(recorded, walk(game.game_id, events)):
        line: dict[str, Any] = {
            "version": rec.version, "type": rec.type, "schema_version": rec.schema_version,
            "prev_hash": rec.prev_hash, "hash": rec.hash, "superseded_by": rec.superseded_by,
        }
        readable = complete or may_read(viewer, rec.type, rec.payload, before, finished=now.finished,
                                        superseded=rec.version in undone)
        if readable:
            line["payload"] = rec.payload
        if readable and (complete or metadata_public(rec.metadata) or own_metadata(viewer, rec.metadata, now)):
            line["metadata"] = rec.metadata
        if complete:
            line["dedupe_key"] = rec.dedupe_key
        withheld = [name for name in ("payload", "metadata") if name not in line]
        if withheld:
            line["withheld"] = withheld
        yield line


# -- reading --------------------------------------------------------------------------------------


def _header(text: str) -> dict[str, Any]:
    try:
        header = json.loads(text)
    except json.JSONDecodeError:
        raise ExportError("line 1 is not JSON: this is not a pbem export") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ExportError(f"line 1 is not a {FORMAT} header: this is not a pbem export")
    if header.get("format_version") != FORMAT_VERSION:
        raise ExportError(f"the export is format version {header.get('format_version')!r}; "
                          f"this pbem reads version {FORMAT_VERSION}")
    missing = sorted(_HEADER_KEYS - _HEADER_OPTIONAL - set(header))
    extra = sorted(set(header) - _HEADER_KEYS)
    if missing or extra:
        raise ExportError("the header " + "; ".join(
            part for part in (f"lacks {', '.join(missing)}" if missing else "",
                              f"has unknown fields {', '.join(extra)}" if extra else "") if part))
    head = header["head"]
    if (not isinstance(head, dict) or set(head) != {"version", "hash"} or not isinstance(head["version"], int)
            or not isinstance(head["hash"], str) or not _HEX64.fullmatch(head["hash"])):
        raise ExportError('the header\'s head is not {"version": N, "hash": 64 hex digits}')
    for key in ("game_id", "ruleset", "seed_commitment", "created_at", "exported_as", "engine_version"):
        if not isinstance(header[key], str):
            raise ExportError(f"the header's {key} is not a string")
    if not isinstance(header["options"], dict):
        raise ExportError("the header's options are not an object")
    try:
        datetime.fromisoformat(header["created_at"])
    except ValueError:
        raise ExportError(f"the header's created_at is not a date and time: {header['created_at']!r}") from None
    return header


def _event(text: str, number: int) -> ExportedEvent:
    where = f"line {number}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise ExportError(f"{where} is not JSON") from None
    if not isinstance(data, dict):
        raise ExportError(f"{where} is not a JSON object")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ExportError(f"{where} has no version number")
    where = f"version {version} ({where})"
    extra = sorted(set(data) - _EVENT_KEYS)
    if extra:
        raise ExportError(f"{where} has unknown fields: {', '.join(extra)}", version)
    for key in ("type", "prev_hash", "hash"):
        if not isinstance(data.get(key), str):
            raise ExportError(f"{where} has no {key}", version)
    for key in ("prev_hash", "hash"):
        if not _HEX64.fullmatch(data[key]):
            raise ExportError(f"{where}: its {key} is not 64 hex digits", version)
    if not isinstance(data.get("schema_version"), int):
        raise ExportError(f"{where} has no schema_version", version)
    if not (data.get("superseded_by") is None or isinstance(data["superseded_by"], int)):
        raise ExportError(f"{where}: superseded_by is not a version", version)
    if not (data.get("dedupe_key") is None or isinstance(data["dedupe_key"], str)):
        raise ExportError(f"{where}: dedupe_key is not a string", version)
    for key in ("payload", "metadata"):
        if key in data and not isinstance(data[key], dict):
            raise ExportError(f"{where}: its {key} is not an object", version)
    said = data.get("withheld", [])
    absent = [key for key in ("payload", "metadata") if key not in data]
    if not isinstance(said, list) or sorted(map(str, said)) != sorted(absent):
        raise ExportError(f"{where}: 'withheld' must list exactly the fields left out ({', '.join(absent) or 'none'})",
                          version)
    return ExportedEvent(version, data["type"], data["schema_version"], data.get("payload"), data.get("metadata"),
                         data.get("dedupe_key"), data["prev_hash"], data["hash"], data.get("superseded_by"))


def read_export(lines: Iterable[str]) -> Export:
    """Parse an export's lines (blank lines at the end are allowed); ExportError names the first unreadable one."""
    header: dict[str, Any] | None = None
    events: list[ExportedEvent] = []
    for number, raw in enumerate(lines, 1):
        text_ = raw.rstrip("\r\n")
        if not text_.strip():
            continue
        if header is None:
            if number != 1:
                raise ExportError("the export does not start with its header on line 1")
            header = _header(text_)
        else:
            events.append(_event(text_, number))
    if header is None:
        raise ExportError("the file is empty: this is not a pbem export")
    return Export(header, events)


def decode(data: bytes) -> list[str]:
    """The lines of an export file's bytes; ExportError naming the line that is not UTF-8."""
    lines = data.split(b"\n")
    out = []
    for number, raw in enumerate(lines, 1):
        try:
            out.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise ExportError(f"line {number} is not UTF-8") from None
    return out


# -- checking -------------------------------------------------------------------------------------


def check_export(export: Export) -> ExportCheck:
    """Check every link of the chain, rehash every event held whole, and tie the header to the hashed log.

    Stops at the first problem and names its version. The header is bound to
    the log by the hashes (the game id is inside every hashed event) and by
    GameCreated, which must agree with it.
    """
    game_id = export.game_id
    expected, previous, rehashed, withheld = 1, GENESIS, 0, 0
    before_withheld = False

    def broken(version: int, reason: str) -> ExportCheck:
        return ExportCheck(False, expected - 1, rehashed, withheld, expected - 1, previous, version, reason)

    for event in export.events:
        if event.version != expected:
            return broken(expected, f"version {expected} is missing or out of place: the line where it belongs "
                                    f"holds version {event.version}")
        if event.prev_hash != previous:
            what = "the genesis hash" if expected == 1 else f"the hash of version {expected - 1}"
            doubt = (f" (version {expected - 1} is withheld in this export, so either of the two may be the one "
                     "altered)") if before_withheld else ""
            return broken(expected, f"prev_hash at version {expected} does not match {what}{doubt}")
        if event.withheld:
            withheld += 1
        else:
            recomputed = chain_hash(event.prev_hash, canonical_bytes(
                game_id, event.version, event.type, event.schema_version, event.payload or {}, event.metadata or {}))
            if recomputed != event.hash:
                return broken(expected, f"hash mismatch at version {expected}: recorded {event.hash}, "
                                        f"recomputed {recomputed}")
            rehashed += 1
            problem = _agrees_with_header(export.header, event)
            if problem:
                return broken(expected, problem)
        before_withheld = bool(event.withheld)
        previous = event.hash
        expected += 1
    head = export.header["head"]
    last = expected - 1
    if head["version"] > last:
        return ExportCheck(False, last, rehashed, withheld, last, previous, last + 1,
                           f"the export ends at version {last} but its header's head is version {head['version']}: "
                           f"the events after version {last} are missing")
    if (head["version"], head["hash"]) != (last, previous):
        return ExportCheck(False, last, rehashed, withheld, last, previous, head["version"] or None,
                           f"the header's head (version {head['version']}, {head['hash']}) is not the last event's "
                           f"(version {last}, {previous})")
    return ExportCheck(True, last, rehashed, withheld, last, previous)


def _agrees_with_header(header: dict[str, Any], event: ExportedEvent) -> str | None:
    """The header repeats what hashed events say; a difference means it was altered.

    GameCreated holds the game id, the seed commitment and the rules options;
    the header's options may hold more (the service's own, such as
    ``deadline-hours``, which the log never records), never different ones.
    """
    data = event.payload or {}
    if event.type == "GameCreated":
        if data.get("game") != header["game_id"]:
            return f"the header's game_id differs from the one GameCreated recorded at version {event.version}"
        if data.get("seed_commitment") != header["seed_commitment"]:
            return f"the header's seed_commitment differs from the one GameCreated recorded at version {event.version}"
        changed = sorted(k for k, v in (data.get("options") or {}).items() if header["options"].get(k) != v)
        if changed:
            return (f"the header's options differ from those GameCreated recorded at version {event.version}: "
                    + ", ".join(changed))
    if event.type == "SeedRevealed" and commitment(str(data.get("seed", ""))) != header["seed_commitment"]:
        return f"the seed revealed at version {event.version} does not match the game's seed commitment"
    return None


def revealed_seed(export: Export) -> str | None:
    """The secret seed if the export holds its reveal (to everyone, or the moderator's in his own export)."""
    for event in export.events:
        if event.type == "SeedRevealed" and event.payload is not None:
            return str(event.payload["seed"])
    return None


# -- storing --------------------------------------------------------------------------------------


def imported_status() -> str:
    """The status of an imported game, which no loop of the service plays (the store knows it since migration 0003)."""
    return IMPORTED


def store_export(uow: UnitOfWork, export: Export) -> ExportCheck:
    """Store a complete, sound export as a new game in this database, exactly as it was; ImportRefused if not.

    The game keeps its id (the id is inside every hashed event, so a new one
    would break the chain), its players keep their ids (the log names them by
    id) with addresses that reach nobody, and it gets a status nothing plays.
    Dedupe keys are not stored: their one use is to recognise a mail
    delivered twice to a live game, and another installation's keys could
    make this one drop a genuinely new letter. The caller's unit of work
    rolls everything back on any refusal.
    """
    check = check_export(export)
    if not check.ok:
        raise ExportError(check.reason or "the export is broken", check.first_broken)
    if export.withheld:
        raise ImportRefused(
            f"this export was made as {export.header['exported_as']} and withholds {export.withheld} events, so it "
            "cannot be replayed; import a complete export (pbem export GAME --as moderator), or check this one "
            "with pbem import --check")
    game_id = export.game_id
    if uow.games.get(game_id) is not None or uow.events.head(game_id)[0]:
        raise ImportRefused(
            f"a game called {game_id!r} exists in this database already; the id cannot be changed on import "
            "because it is inside every hashed event (a new id would break the chain): import into another database")
    if not export.events:
        raise ImportRefused("the export holds no event, not even the game's creation: there is nothing to replay")
    events = [Event.from_payload(e.type, e.payload or {}) for e in export.events]
    try:
        seats = fold_log(game_id, events).players
    except (ValueError, KeyError) as exc:
        raise ImportRefused(f"this engine ({ENGINE_VERSION}) cannot replay the log: {exc}") from exc
    taken = [p.id for p in seats if uow.players.by_id(p.id) is not None]
    if taken:
        raise ImportRefused(
            f"player id{'s' if len(taken) > 1 else ''} {', '.join(map(str, taken))} of {game_id} "
            f"{'are' if len(taken) > 1 else 'is'} in use in this database; the log names players by id, so import "
            "into another database")
    seed = revealed_seed(export) or ""
    uow.games.create(game_id, ruleset=export.header["ruleset"], moderator_email=MODERATOR_ADDRESS,
                     now=datetime.fromisoformat(export.header["created_at"]), options=export.header["options"],
                     secret_seed=seed, status=imported_status())
    conn = uow.conn
    assert conn is not None
    # Games.create derives the commitment from the seed; without the seed, keep the one the log published.
    conn.execute(update(games).where(games.c.game_id == game_id).values(seed_commitment=export.header["seed_commitment"]))
    _add_players(conn, game_id, seats)
    stored = uow.events.append(game_id, 0, [
        NewEvent(e.type, e.payload or {}, e.metadata or {}, schema_version=e.schema_version) for e in export.events])
    if stored and stored[-1].hash != check.head:
        raise ImportRefused(f"the stored chain does not come out as exported (head {stored[-1].hash}, "
                            f"exported {check.head}); nothing was stored")
    for event in export.events:
        if event.superseded_by is not None:
            uow.events.mark_superseded(game_id, event.version - 1, event.version, event.superseded_by)
    return check


def _add_players(conn: Connection, game_id: str, seats: Sequence) -> None:
    """The seats as the log leaves them, under the ids the log uses; on PostgreSQL the id sequence moves past them."""
    for p in seats:
        conn.execute(players.insert().values(id=p.id, game_id=game_id, name=p.name, nation=p.nation,
                                             email=f"imported+{p.id}@invalid", secret_hash=None))
    if seats and conn.dialect.name == "postgresql":
        conn.execute(text("SELECT setval(pg_get_serial_sequence('players', 'id'), (SELECT max(id) FROM players))"))

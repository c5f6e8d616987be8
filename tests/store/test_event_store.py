"""Contract suite for the event log: every test runs on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from pbem.store import (
    GENESIS,
    ConcurrencyError,
    DuplicateDelivery,
    EventStore,
    NewEvent,
    RecordedEvent,
    UnitOfWork,
    canonical_bytes,
    chain_hash,
    verify_chain,
)
from pbem.store import events as events_module
from pbem.store.verify import chain_holds

NOW = datetime(2024, 11, 22, 12, 0, tzinfo=timezone.utc)


def ev(n: int, **kw) -> NewEvent:
    return NewEvent(type=kw.pop("type", "OrderRecorded"), payload={"n": n}, **kw)


def append(engine, game_id, expected, events):
    with engine.begin() as conn:
        return EventStore(conn).append(game_id, expected, events)


def read(engine, game_id, **kw):
    with engine.begin() as conn:
        return EventStore(conn).read(game_id, **kw)


# -- append and read -----------------------------------------------------------


def test_empty_game_head_is_genesis(db_engine):
    with db_engine.begin() as conn:
        store = EventStore(conn)
        assert store.head("nope") == (0, GENESIS)
        assert store.read("nope") == []
        assert store.all_games() == []


def test_append_read_round_trip(db_engine):
    events = [
        NewEvent(
            type="GameCreated",
            payload={"nations": ["Egypt", "Babylon"], "options": {"small_cities": True}},
            metadata={"actor": "moderator", "engine_version": "0.1.0"},
            dedupe_key="create:g1",
        ),
        NewEvent(
            type="OrderRecorded",
            payload={"text": "Crète → Égypte ✓", "tokens": 3, "ratio": 0.5, "none": None},
            metadata={"actor": "player:crete", "message_id": "<a@b>"},
            schema_version=2,
        ),
    ]
    recorded = append(db_engine, "g1", 0, events)
    assert [e.version for e in recorded] == [1, 2]
    assert recorded[0].prev_hash == GENESIS
    assert recorded[1].prev_hash == recorded[0].hash
    assert recorded[0].position < recorded[1].position
    assert recorded[1].schema_version == 2
    assert recorded[0].dedupe_key == "create:g1"

    back = read(db_engine, "g1")
    assert back == recorded
    assert back[1].payload["text"] == "Crète → Égypte ✓"
    assert back[0].metadata == {"actor": "moderator", "engine_version": "0.1.0"}
    with db_engine.begin() as conn:
        assert EventStore(conn).head("g1") == (2, recorded[1].hash)


def test_one_event_appends_return_what_is_read_back(db_engine):
    # One event a unit of work, as the mail path appends: the returned events
    # are the rows as stored, and each chains onto the one before.
    recorded = []
    for version in range(3):
        event = NewEvent("OrderRecorded", {"turn": version, "orders": ("MOVE", 2)}, {"actor": "p1"},
                         dedupe_key=f"mail:{version}")
        with UnitOfWork(db_engine) as uow:
            recorded += uow.events.append("g1", version, [event])
    assert read(db_engine, "g1") == recorded
    assert [e.prev_hash for e in recorded] == [GENESIS, recorded[0].hash, recorded[1].hash]
    assert recorded[2].payload == {"turn": 2, "orders": ["MOVE", 2]}


def test_an_appended_events_payload_is_what_was_stored_not_the_callers_dict(db_engine):
    """Returned events decode their payload and metadata from the stored texts when first read: a caller that
    changes its dict afterwards does not change them, and they are the events read back."""
    payload = {"orders": ["BUILD Memphis"]}
    with UnitOfWork(db_engine) as uow:
        [recorded] = uow.events.append("g", 0, [NewEvent("T", payload, {"actor": "p1"})])
    payload["orders"].append("changed after the append")
    assert recorded.payload == {"orders": ["BUILD Memphis"]}
    assert recorded.payload is recorded.payload and recorded.metadata == {"actor": "p1"}
    assert "BUILD Memphis" in repr(recorded)
    assert recorded == read(db_engine, "g")[0]
    with pytest.raises(AttributeError):
        recorded.no_such_field  # noqa: B018


def test_versions_per_game_positions_global(db_engine):
    a1 = append(db_engine, "a", 0, [ev(1), ev(2)])
    b1 = append(db_engine, "b", 0, [ev(1)])
    a2 = append(db_engine, "a", 2, [ev(3)])
    assert [e.version for e in a1 + a2] == [1, 2, 3]
    assert [e.version for e in b1] == [1]
    positions = [e.position for e in a1 + b1 + a2]
    assert positions == sorted(positions) and len(set(positions)) == 4
    with db_engine.begin() as conn:
        store = EventStore(conn)
        assert store.all_games() == ["a", "b"]
        assert [e.position for e in store.read_all()] == positions
        assert [e.position for e in store.read_all(after_position=positions[1])] == positions[2:]
        assert store.count() == 4 and store.count("a") == 3


def test_read_after_and_upto(db_engine):
    append(db_engine, "g", 0, [ev(i) for i in range(1, 8)])
    assert [e.version for e in read(db_engine, "g", after=3)] == [4, 5, 6, 7]
    assert [e.version for e in read(db_engine, "g", upto=2)] == [1, 2]
    assert [e.version for e in read(db_engine, "g", after=2, upto=5)] == [3, 4, 5]
    assert read(db_engine, "g", after=7) == []


def test_tuples_in_payload_hash_as_they_read_back(db_engine):
    recorded = append(db_engine, "g", 0, [NewEvent("T", {"xs": (1, 2)})])
    assert recorded[0].payload == {"xs": [1, 2]}
    assert verify_chain(read(db_engine, "g")).ok


NUMBERS = {
    "beyond 64 bits": 2**70, "below -2**63": -(2**65), "u64": 12345678901234567890, "i64 max": 2**63 - 1,
    "floats": [0.1, -0.0, 1e-320, 1.7976931348623157e308, 5e-324, 123456789.123456789], "digits in text": "1" * 25,
    "text": "Crète → Égypte ✓ \U0001F600", "nested": [{"a": [1, 2.5, None, True]}],
}


def test_numbers_and_text_read_back_exactly_as_written(db_engine):
    """Whatever decodes the stored JSON (orjson where it gives the same values, else json), the values read back
    are those written, to the type: an integer beyond 64 bits stays an int, a float keeps every digit."""
    recorded = append(db_engine, "g", 0, [NewEvent("T", NUMBERS, {"m": 2**80, "f": 0.3})])
    with db_engine.begin() as conn:
        back = EventStore(conn).read("g")
        folded = EventStore(conn).read_for_fold("g")
    exact = json.dumps(NUMBERS, sort_keys=True)
    assert json.dumps(recorded[0].payload, sort_keys=True) == exact
    assert json.dumps(back[0].payload, sort_keys=True) == exact
    assert json.dumps(back[0].metadata, sort_keys=True) == json.dumps({"m": 2**80, "f": 0.3}, sort_keys=True)
    assert [(f.version, f.type, json.dumps(f.payload, sort_keys=True), f.hash) for f in folded] == [
        (1, "T", exact, recorded[0].hash)
    ]
    assert verify_chain(back).ok


def test_read_for_fold_holds_what_read_holds(db_engine):
    append(db_engine, "g", 0, [ev(i) for i in range(1, 8)])
    with db_engine.begin() as conn:
        store = EventStore(conn)
        for kw in ({}, {"after": 3}, {"upto": 2}, {"after": 2, "upto": 5}, {"after": 7}):
            assert [(f.version, f.type, f.payload, f.hash) for f in store.read_for_fold("g", **kw)] == [
                (e.version, e.type, e.payload, e.hash) for e in store.read("g", **kw)
            ]


def test_nan_is_refused(db_engine):
    with pytest.raises(ValueError):
        append(db_engine, "g", 0, [NewEvent("T", {"x": float("nan")})])


# -- optimistic concurrency ------------------------------------------------------


def test_stale_expected_version_raises(db_engine):
    append(db_engine, "g", 0, [ev(1), ev(2)])
    with pytest.raises(ConcurrencyError) as info:
        append(db_engine, "g", 1, [ev(3)])
    assert info.value.game_id == "g"
    assert info.value.expected == 1 and info.value.actual == 2
    assert "'g'" in str(info.value) and "1" in str(info.value) and "2" in str(info.value)
    with pytest.raises(ConcurrencyError):
        append(db_engine, "g", 5, [ev(3)])
    assert [e.version for e in read(db_engine, "g")] == [1, 2]


def test_two_connections_racing_one_loses(db_engine):
    """A appends and holds its transaction open; B, which read the same head,
    tries to append too. Once A commits, B must fail with ConcurrencyError
    (on PostgreSQL via the unique constraint, on SQLite because BEGIN
    IMMEDIATE made B wait and then see A's event)."""
    append(db_engine, "g", 0, [ev(1)])
    outcome: dict = {}
    b_started = threading.Event()

    def writer_b():
        b_started.set()
        try:
            with db_engine.begin() as conn:
                outcome["result"] = EventStore(conn).append("g", 1, [ev(20)])
        except Exception as exc:  # noqa: BLE001
            outcome["error"] = exc

    with db_engine.begin() as conn_a:
        EventStore(conn_a).append("g", 1, [ev(10)])
        thread = threading.Thread(target=writer_b)
        thread.start()
        b_started.wait()
        time.sleep(0.3)  # let B reach its insert (PG) / BEGIN (SQLite)
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert isinstance(outcome.get("error"), ConcurrencyError), outcome
    if db_engine.dialect.name == "postgresql":
        # B passed the head check and was stopped by the unique constraint (the driver's
        # own error: the append runs its statements on the driver's cursor, pbem/store/prepared.py).
        assert isinstance(outcome["error"].__cause__, (IntegrityError, db_engine.dialect.loaded_dbapi.IntegrityError))
    events = read(db_engine, "g")
    assert [e.payload["n"] for e in events] == [1, 10]
    assert verify_chain(events).ok


def test_stale_reader_in_its_own_transaction(db_engine):
    """B read the head before A committed, then appends with that version."""
    with db_engine.connect() as conn_b:
        with conn_b.begin():
            version, _ = EventStore(conn_b).head("g")
        append(db_engine, "g", 0, [ev(1)])  # A wins
        with pytest.raises(ConcurrencyError):
            with conn_b.begin():
                EventStore(conn_b).append("g", version, [ev(2)])


# -- idempotency -------------------------------------------------------------------


def test_duplicate_dedupe_key_rolls_back_the_whole_batch(db_engine):
    append(db_engine, "g", 0, [ev(1, dedupe_key="msg:<1@x>")])
    with db_engine.begin() as conn:
        store = EventStore(conn)
        assert store.seen("msg:<1@x>")
        assert not store.seen("msg:<2@x>")
        with pytest.raises(DuplicateDelivery) as info:
            store.append(
                "g", 1, [ev(2, dedupe_key="msg:<2@x>"), ev(3, dedupe_key="msg:<1@x>"), ev(4)]
            )
        assert info.value.dedupe_key == "msg:<1@x>"
        assert info.value.game_id == "g"
        # Nothing of the batch is there and the transaction is still usable.
        assert store.head("g")[0] == 1
        assert not store.seen("msg:<2@x>")
        store.append("h", 0, [ev(9)])
    assert [e.version for e in read(db_engine, "g")] == [1]
    assert [e.version for e in read(db_engine, "h")] == [1]


def test_duplicate_wins_over_stale_version(db_engine):
    """A re-delivered message is reported as a duplicate even after the game
    moved on (the caller then acknowledges it as already processed)."""
    append(db_engine, "g", 0, [ev(1, dedupe_key="k")])
    append(db_engine, "g", 1, [ev(2)])
    with pytest.raises(DuplicateDelivery):
        append(db_engine, "g", 1, [ev(3, dedupe_key="k")])


def test_dedupe_key_is_global_across_games(db_engine):
    append(db_engine, "a", 0, [ev(1, dedupe_key="k")])
    with pytest.raises(DuplicateDelivery) as info:
        append(db_engine, "b", 0, [ev(1, dedupe_key="k")])
    assert info.value.game_id == "a"


def test_repeated_key_within_a_batch_is_a_caller_error(db_engine):
    with pytest.raises(ValueError):
        append(db_engine, "g", 0, [ev(1, dedupe_key="k"), ev(2, dedupe_key="k")])


def test_racing_duplicate_delivery(db_engine):
    """Two workers process the same message at once (different games so the
    version constraint cannot fire): the second gets DuplicateDelivery."""
    outcome: dict = {}
    b_started = threading.Event()

    def writer_b():
        b_started.set()
        try:
            with db_engine.begin() as conn:
                EventStore(conn).append("b", 0, [ev(1, dedupe_key="same")])
        except Exception as exc:  # noqa: BLE001
            outcome["error"] = exc

    with db_engine.begin() as conn_a:
        EventStore(conn_a).append("a", 0, [ev(1, dedupe_key="same")])
        thread = threading.Thread(target=writer_b)
        thread.start()
        b_started.wait()
        time.sleep(0.3)
    thread.join(timeout=30)
    assert isinstance(outcome.get("error"), DuplicateDelivery), outcome
    if db_engine.dialect.name == "postgresql":
        assert isinstance(outcome["error"].__cause__, (IntegrityError, db_engine.dialect.loaded_dbapi.IntegrityError))
    assert read(db_engine, "b") == []


# -- hash chain ----------------------------------------------------------------------


def test_chain_verifies_and_can_be_rederived_by_hand(db_engine):
    append(db_engine, "g", 0, [ev(1, metadata={"actor": "mod"}), ev(2)])
    append(db_engine, "g", 2, [ev(3)])
    events = read(db_engine, "g")
    report = verify_chain(events)
    assert report.ok and report.checked == 3 and report.first_broken is None
    assert report.head == events[-1].hash
    with db_engine.begin() as conn:
        assert EventStore(conn).head("g") == (3, report.head)

    # The recipe in docs/store.md, spelled out without the store's helpers.
    prev = "0" * 64
    for e in events:
        doc = {
            "game_id": e.game_id, "version": e.version, "type": e.type,
            "schema_version": e.schema_version, "payload": e.payload,
            "metadata": e.metadata,
        }
        body = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        prev = hashlib.sha256(prev.encode("ascii") + body.encode("utf-8")).hexdigest()
        assert prev == e.hash
        assert chain_hash(e.prev_hash, canonical_bytes(
            e.game_id, e.version, e.type, e.schema_version, e.payload, e.metadata
        )) == e.hash


def test_tampered_payload_names_the_first_broken_version(db_engine):
    append(db_engine, "g", 0, [ev(i) for i in range(1, 6)])
    with db_engine.begin() as conn:
        conn.execute(
            text("UPDATE events SET payload = :p WHERE game_id = 'g' AND version = 3"),
            {"p": '{"n":33}'},
        )
    events = read(db_engine, "g")
    report = verify_chain(events)
    assert not report.ok
    assert report.first_broken == 3
    assert report.checked == 2
    assert report.head == events[1].hash
    assert report.reason.startswith("hash mismatch at version 3: recorded ")
    assert events[2].hash in report.reason


def test_tampered_metadata_and_deleted_row_are_caught(db_engine):
    append(db_engine, "g", 0, [ev(i, metadata={"actor": "a"}) for i in range(1, 6)])
    with db_engine.begin() as conn:
        conn.execute(text(
            "UPDATE events SET metadata = '{\"actor\":\"b\"}' "
            "WHERE game_id = 'g' AND version = 4"
        ))
    assert verify_chain(read(db_engine, "g")).first_broken == 4

    append(db_engine, "h", 0, [ev(i) for i in range(1, 6)])
    with db_engine.begin() as conn:
        conn.execute(text("DELETE FROM events WHERE game_id = 'h' AND version = 2"))
    report = verify_chain(read(db_engine, "h"))
    assert report.first_broken == 3
    assert report.reason == "gap: expected version 2, found 3"


def test_rewritten_row_with_fresh_hash_breaks_the_link(db_engine):
    """Someone who recomputes the hash of the row they changed is still
    caught: the next event's prev_hash no longer matches."""
    recorded = append(db_engine, "g", 0, [ev(i) for i in range(1, 4)])
    e2 = recorded[1]
    forged = chain_hash(e2.prev_hash, canonical_bytes("g", 2, e2.type, 1, {"n": 99}, {}))
    with db_engine.begin() as conn:
        conn.execute(
            text("UPDATE events SET payload = :p, hash = :h "
                 "WHERE game_id = 'g' AND version = 2"),
            {"p": '{"n":99}', "h": forged},
        )
    report = verify_chain(read(db_engine, "g"))
    assert report.first_broken == 3
    assert report.reason == "prev_hash at version 3 does not match the hash of version 2"


def test_verify_a_tail(db_engine):
    append(db_engine, "g", 0, [ev(i) for i in range(1, 6)])
    events = read(db_engine, "g")
    report = verify_chain(events[2:], after_version=2, after_hash=events[1].hash)
    assert report.ok and report.checked == 3
    assert not verify_chain(events[2:]).ok


def test_superseded_events_stay_in_the_chain(db_engine):
    append(db_engine, "g", 0, [ev(i) for i in range(1, 5)])
    with db_engine.begin() as conn:
        store = EventStore(conn)
        rollback = store.append("g", 4, [NewEvent("RolledBack", {"to_version": 2})])[0]
        assert store.mark_superseded("g", 2, 4, rollback.version) == 2
    events = read(db_engine, "g")
    assert [e.superseded_by for e in events] == [None, None, 5, 5, None]
    assert verify_chain(events).ok


def _json_containers(children):
    # A function, not a lambda: hypothesis reads its source to see that it recurses, and a lambda over
    # several lines sometimes reads as one that does not (a HypothesisDeprecationWarning).
    return st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    _json_containers,
    max_leaves=12,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(payloads=st.lists(st.dictionaries(st.text(max_size=8), json_values), min_size=1, max_size=4))
def test_any_json_payload_round_trips_and_verifies(db_engine, payloads):
    with db_engine.begin() as conn:
        store = EventStore(conn)
        game_id = f"h{store.count()}"
        recorded = store.append(game_id, 0, [NewEvent("T", p) for p in payloads])
        back = store.read(game_id)
    assert back == recorded
    assert [e.payload for e in back] == payloads
    assert verify_chain(back).ok


# -- unit of work ----------------------------------------------------------------------


def test_unit_of_work_commits_on_normal_exit(db_engine):
    with UnitOfWork(db_engine) as uow:
        uow.lock_game("g")
        uow.games.create("g", ruleset="advciv", moderator_email="Mod@Example.org", now=NOW)
        uow.events.append("g", 0, [ev(1)])
        uow.outbox.enqueue(message_id="<o1@pbem>", recipient="a@x", raw=b"m",
                           kind="ack", game_id="g", now=NOW)
    with UnitOfWork(db_engine) as uow:
        assert uow.events.head("g")[0] == 1
        assert uow.outbox.pending_count() == 1
        assert uow.games.get("g").moderator_email == "mod@example.org"


def test_unit_of_work_rolls_back_on_exception(db_engine):
    with pytest.raises(RuntimeError):
        with UnitOfWork(db_engine) as uow:
            inbox_id, _ = uow.inbox.store(b"raw", "<m@x>", "a@x", ["g@pbem"], NOW)
            uow.events.append("g", 0, [ev(1, dedupe_key="<m@x>")])
            uow.outbox.enqueue(message_id="<o@pbem>", recipient="a@x", raw=b"m",
                               kind="ack", game_id="g", now=NOW)
            raise RuntimeError("the rules engine blew up")
    with UnitOfWork(db_engine) as uow:
        assert uow.events.head("g") == (0, GENESIS)
        assert not uow.events.seen("<m@x>")
        assert uow.outbox.pending_count() == 0
        assert uow.inbox.unprocessed() == []


def test_unit_of_work_survives_a_duplicate(db_engine):
    """The service's path for a re-delivered message: DuplicateDelivery is
    caught, the inbox row is marked and that still commits."""
    append(db_engine, "g", 0, [ev(1, dedupe_key="<m@x>")])
    with UnitOfWork(db_engine) as uow:
        inbox_id, is_new = uow.inbox.store(b"raw", "<m2@x>", "a@x", [], NOW)
        with pytest.raises(DuplicateDelivery):
            uow.events.append("g", 1, [ev(2, dedupe_key="<m@x>")])
        uow.inbox.mark(inbox_id, "done", error="duplicate", now=NOW)
    with UnitOfWork(db_engine) as uow:
        assert uow.inbox.get(inbox_id).status == "done"


def test_an_append_then_a_statement_through_sqlalchemy_commit_together(db_engine):
    """The unit of work begins on the driver; the append runs there, and the game row, written through
    SQLAlchemy after it, joins the same transaction instead of beginning another."""
    with UnitOfWork(db_engine) as uow:
        uow.events.append("g", 0, [ev(1)])
        uow.games.create("g", ruleset="advciv", moderator_email="mod@example.org", now=NOW)
    with UnitOfWork(db_engine) as uow:
        assert uow.events.head("g")[0] == 1
        assert uow.games.get("g") is not None


def test_an_append_then_a_statement_through_sqlalchemy_roll_back_together(db_engine):
    with pytest.raises(RuntimeError):
        with UnitOfWork(db_engine) as uow:
            uow.events.append("g", 0, [ev(1)])
            uow.games.create("g", ruleset="advciv", moderator_email="mod@example.org", now=NOW)
            raise RuntimeError("the rules engine blew up")
    with UnitOfWork(db_engine) as uow:
        assert uow.events.head("g") == (0, GENESIS)
        assert uow.games.get("g") is None


def test_an_append_alone_rolls_back_with_the_unit_of_work(db_engine):
    with pytest.raises(RuntimeError):
        with UnitOfWork(db_engine) as uow:
            uow.events.append("g", 0, [ev(1)])
            raise RuntimeError("after the append")
    with UnitOfWork(db_engine) as uow:
        assert uow.events.head("g") == (0, GENESIS)


@given(json_values)
@settings(max_examples=300, deadline=None)
def test_canonical_text_is_the_standard_librarys(value):
    """The store's encoder (the C encoder made once) writes exactly what json.dumps writes with the
    canonical settings: hashes made before and after it are the same."""
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    assert events_module._dumps(value) == expected
    assert events_module._dumps({"k": value, "a": [value]}) == json.dumps(
        {"k": value, "a": [value]}, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def test_canonical_text_refuses_what_json_refuses():
    for bad in (float("nan"), {"x": float("inf")}, {"x": object()}):
        with pytest.raises((ValueError, TypeError)):
            events_module._dumps(bad)


def test_recorded_event_type():
    assert RecordedEvent.__dataclass_params__.frozen
    with pytest.raises(Exception):
        NewEvent("T", {}).type = "U"  # type: ignore[misc]


def test_chain_holds_from_the_stored_texts_exactly_when_verify_chain_passes(db_engine):
    """`chain_holds` (no row decoded) agrees with `verify_chain` on a sound log, with the awkward numbers and text
    too, and says no where a text was altered or a row is missing; a text respelled without changing its value is
    a no there, which `verify_chain` (the one that decides) passes."""
    append(db_engine, "g", 0, [NewEvent("T", NUMBERS, {"m": 2**80, "f": 0.3}), *[ev(i) for i in range(2, 7)]])
    append(db_engine, "g", 6, [ev(7, metadata={"actor": "mod", "source": "cli"})])

    def both() -> tuple[bool, bool]:
        with db_engine.begin() as conn:
            store = EventStore(conn)
            return chain_holds("g", store.stored_texts("g")), verify_chain(store.read("g")).ok

    assert both() == (True, True)
    with db_engine.begin() as conn:
        conn.execute(text("UPDATE events SET payload = :p WHERE game_id = 'g' AND version = 4"), {"p": '{"n": 4}'})
    assert both() == (False, True)
    with db_engine.begin() as conn:
        conn.execute(text("UPDATE events SET payload = :p WHERE game_id = 'g' AND version = 4"), {"p": '{"n":44}'})
    assert both() == (False, False)
    with db_engine.begin() as conn:
        conn.execute(text("UPDATE events SET payload = :p WHERE game_id = 'g' AND version = 4"), {"p": '{"n":4}'})
        conn.execute(text("DELETE FROM events WHERE game_id = 'g' AND version = 7"))
    assert both() == (True, True)
    with db_engine.begin() as conn:
        conn.execute(text("DELETE FROM events WHERE game_id = 'g' AND version = 5"))
    assert both() == (False, False)

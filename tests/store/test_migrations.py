"""The alembic migrations build exactly the tables pbem/store/schema.py describes."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import threading

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from pbem.store.database import current_revision, ensure_schema, make_engine, upgrade
from pbem.store.schema import metadata


def test_migrations_match_metadata(db_url):
    engine = make_engine(db_url)
    try:
        upgrade(engine)
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"compare_type": True, "compare_server_default": True}
            )
            diff = compare_metadata(context, metadata)
        assert diff == []
    finally:
        engine.dispose()


def test_upgrade_creates_every_table_and_is_idempotent(db_url):
    engine = make_engine(db_url)
    try:
        assert current_revision(engine) is None
        ensure_schema(engine)
        head = current_revision(engine)
        assert head is not None
        tables = set(inspect(engine).get_table_names())
        assert set(metadata.tables) <= tables
        ensure_schema(engine)  # already at head: nothing happens
        upgrade(engine)
        assert current_revision(engine) == head
    finally:
        engine.dispose()


def test_upgrade_accepts_a_url(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        assert "events" in inspect(engine).get_table_names()
    finally:
        engine.dispose()


def test_the_comparison_would_notice_a_drift(sqlite_url):
    """Guard against a vacuous pass: a changed type and an extra column show up."""
    from sqlalchemy import Column, MetaData, String

    drifted = MetaData(naming_convention=metadata.naming_convention)
    for table in metadata.sorted_tables:
        table.to_metadata(drifted)
    drifted.tables["events"].append_column(Column("extra", String(10)))
    drifted.tables["players"].c.nation.type = String(7)
    engine = make_engine(sqlite_url)
    try:
        upgrade(engine)
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            diff = compare_metadata(context, drifted)
    finally:
        engine.dispose()
    kinds = {entry[0] if isinstance(entry, tuple) else entry[0][0] for entry in diff}
    assert "add_column" in kinds
    assert "modify_type" in kinds


def test_concurrent_upgrades_do_not_collide(db_url):
    """Several processes may call ensure_schema at start-up at the same time."""
    errors = []

    def start_up():
        engine = make_engine(db_url)
        try:
            upgrade(engine)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            engine.dispose()

    threads = [threading.Thread(target=start_up) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    engine = make_engine(db_url)
    try:
        assert current_revision(engine) is not None
    finally:
        engine.dispose()


def test_start_ups_on_a_new_sqlite_file_wait_for_the_one_migrating(sqlite_url, tmp_path):
    """While one process holds the start-up lock of a SQLite file, another's ensure_schema waits for it."""
    lock = open(tmp_path / "pbem.sqlite-startup", "a+b")  # noqa: SIM115 (held across the test)
    fcntl.flock(lock, fcntl.LOCK_EX)
    engine = make_engine(sqlite_url)
    done = threading.Event()

    def start_up():
        ensure_schema(engine)
        done.set()

    thread = threading.Thread(target=start_up)
    thread.start()
    try:
        assert not done.wait(0.5)
        assert not (tmp_path / "pbem.sqlite").exists()  # it has not even opened the file
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()
    thread.join(timeout=60)
    try:
        assert done.is_set() and current_revision(engine) is not None
    finally:
        engine.dispose()


START_UP = "import sys; from pbem.store.database import ensure_schema, make_engine; ensure_schema(make_engine(sys.argv[1]))"


def test_processes_starting_at_once_on_a_new_sqlite_file_all_start(tmp_path):
    """Real processes, as `pbem serve` workers and the CLI start on one new file: none fails with a locked database."""
    for round_ in range(4):
        url = f"sqlite:///{tmp_path / f'round{round_}.sqlite'}"
        starting = [subprocess.Popen([sys.executable, "-c", START_UP, url], stderr=subprocess.PIPE) for _ in range(4)]
        failures = [p.communicate(timeout=120)[1].decode() for p in starting if p.wait(timeout=120) != 0]
        assert failures == []
        engine = make_engine(url)
        try:
            assert current_revision(engine) is not None
        finally:
            engine.dispose()

"""Storage faults told apart from other errors, from the errors SQLite and the OS really raise."""

from __future__ import annotations

import contextlib
import errno
import sqlite3

import pytest
from sqlalchemy.exc import OperationalError

from pbem.store.database import check_writable, ensure_schema, make_engine
from pbem.store.faults import StorageFault, storage_fault


def test_sqlite_full_is_a_full_disk_naming_the_file(tmp_path):
    path = tmp_path / "small.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE t (x BLOB)")
        conn.execute("PRAGMA max_page_count = 1")  # as big as it is: SQLite answers SQLITE_FULL, as on a full disk
        with pytest.raises(sqlite3.OperationalError) as raised:
            conn.execute("INSERT INTO t VALUES (?)", (b"x" * 100_000,))
    fault = storage_fault(raised.value, f"sqlite:///{path}")
    assert fault is not None and fault.kind == "full"
    assert str(path) in str(fault) and "free some space" in str(fault)


def test_a_database_opened_read_only_is_named_with_what_to_do(tmp_path):
    path = tmp_path / "pbem.sqlite"
    writable = make_engine(f"sqlite:///{path}")
    read_only = make_engine(f"sqlite:///file:{path}?mode=ro&uri=true")
    try:
        ensure_schema(writable)
        with pytest.raises(StorageFault) as raised:
            check_writable(read_only)  # SQLite refuses the write (SQLITE_READONLY), though it opened and began
        assert raised.value.kind == "read-only"
        assert "writable by the user pbem runs as" in str(raised.value)
        check_writable(writable)  # the same file, writable: no fault
    finally:
        read_only.dispose()
        writable.dispose()


def test_the_fault_is_found_behind_what_it_caused(tmp_path):
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "mail" / "x"))
        except OSError:
            raise RuntimeError("no such savepoint")  # SQLite rolled back on SQLITE_FULL; the release then fails
    except RuntimeError as error:
        fault = storage_fault(error)
    assert fault is not None and fault.kind == "full" and str(tmp_path / "mail" / "x") in str(fault)


@pytest.mark.parametrize("error", [
    RuntimeError("a bug of ours"),
    OSError(errno.ENOENT, "No such file or directory", "/nowhere"),
    OperationalError("SELECT 1", {}, sqlite3.OperationalError("no such table: inbox")),
])
def test_other_errors_are_not_storage_faults(error):
    assert storage_fault(error) is None


"""Engine settings and URLs."""

from __future__ import annotations

from pbem.store.database import default_url, make_engine, normalize_url


def test_default_url(monkeypatch):
    monkeypatch.delenv("PBEM_DATABASE_URL", raising=False)
    assert default_url() == "sqlite:///pbem.sqlite"
    monkeypatch.setenv("PBEM_DATABASE_URL", "postgresql://u@h/db")
    assert default_url() == "postgresql://u@h/db"


def test_postgres_urls_use_psycopg3():
    assert normalize_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("postgresql+psycopg://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("sqlite:///x.sqlite") == "sqlite:///x.sqlite"
    engine = make_engine("postgresql://u@localhost/db")
    assert engine.dialect.driver == "psycopg"
    engine.dispose()


def test_sqlite_connection_settings(sqlite_url):
    engine = make_engine(sqlite_url)
    try:
        with engine.connect() as conn:
            pragma = lambda name: conn.exec_driver_sql(f"PRAGMA {name}").scalar()  # noqa: E731
            assert pragma("journal_mode") == "wal"
            assert pragma("synchronous") == 2  # FULL
            assert pragma("foreign_keys") == 1
            assert pragma("busy_timeout") >= 1000
    finally:
        engine.dispose()


def test_sqlite_transactions_begin_immediate(sqlite_url):
    """A second writer cannot even begin while the first holds a transaction."""
    import sqlite3

    engine = make_engine(sqlite_url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE t (x INTEGER)")
        with engine.begin() as conn:
            conn.exec_driver_sql("SELECT 1")  # a read-only start still takes the lock
            other = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), timeout=0.1,
                                    isolation_level=None)
            try:
                try:
                    other.execute("BEGIN IMMEDIATE")
                    raise AssertionError("second BEGIN IMMEDIATE should be locked out")
                except sqlite3.OperationalError as exc:
                    assert "locked" in str(exc)
            finally:
                other.close()
    finally:
        engine.dispose()

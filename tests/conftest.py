"""Database fixtures shared by the whole test suite.

* ``sqlite_url``   -- a fresh SQLite file in the test's tmp dir (empty, no schema)
* ``postgres_url`` -- a fresh, empty PostgreSQL database on a REAL server
* ``db_url``       -- parametrized over both (tests run once per backend)
* ``db_engine``    -- ``make_engine(db_url)`` with the migrations applied

PostgreSQL comes from ``$PBEM_TEST_POSTGRES_URL`` (an account allowed to
CREATE DATABASE; each test gets its own ``pbem_test_<random>`` database, dropped
afterwards) or, failing that, a throwaway server started once per session
with initdb/pg_ctl from PATH or /usr/lib/postgresql/*/bin (as the ``postgres``
user via runuser when running as root). If neither works the PostgreSQL tests
are skipped -- unless ``$CI`` is set, in which case they fail. The server and the
databases come from ``postgres_server.py`` beside this file, which ``bench/workers.py`` uses too.
"""

from __future__ import annotations

import os

import pytest
from postgres_server import ThrowawayPostgres, create_database, drop_database

from pbem.store.database import make_engine, normalize_url, upgrade

# Reports drawn as pictures cost 0.4 s each; games played through many phases by the tests (and the demos they
# start as subprocesses) go without. The pictures themselves are tested in tests/picture and
# tests/service/test_board_picture_by_mail.py, which turn them on.
os.environ.setdefault("PBEM_BOARD_PICTURES", "0")
# Every letter at once: the tests read the server's answers at the clock's own time; the ones about letters
# that wait (tests/service/test_offers_gathered.py, test_news_waits.py) hold the clock and set it themselves.
os.environ.setdefault("PBEM_GATHER_MINUTES", "0")

# -- PostgreSQL ----------------------------------------------------------------


@pytest.fixture(scope="session")
def _postgres_admin_url():
    """``(admin URL, None)`` for a server we may create databases on, or
    ``(None, reason)``. Started lazily: only when a test asks for PostgreSQL."""
    env_url = os.environ.get("PBEM_TEST_POSTGRES_URL", "").strip()
    if env_url:
        yield normalize_url(env_url), None
        return
    server = None
    try:
        server = ThrowawayPostgres()
        url = server.start()
    except Exception as exc:  # noqa: BLE001 - reported as skip / failure
        if server is not None:
            server.stop()
        yield None, f"no PostgreSQL for the tests: {exc}"
        return
    try:
        yield url, None
    finally:
        server.stop()


@pytest.fixture
def postgres_url(_postgres_admin_url):
    """A fresh, empty database on a real PostgreSQL server; dropped afterwards."""
    admin_url, reason = _postgres_admin_url
    if admin_url is None:
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: PostgreSQL tests must run)")
        pytest.skip(reason)
    url = create_database(admin_url)
    yield url
    drop_database(admin_url, url)


# -- SQLite and both -----------------------------------------------------------


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    """A fresh SQLite database file (empty, no schema) in the test's tmp dir."""
    return f"sqlite:///{tmp_path / 'pbem.sqlite'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request) -> str:
    """A fresh, empty database URL; the test runs once on each backend."""
    if request.param == "sqlite":
        return request.getfixturevalue("sqlite_url")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def db_engine(db_url):
    """An engine on ``db_url`` with all migrations applied."""
    engine = make_engine(db_url)
    upgrade(engine)
    yield engine
    engine.dispose()

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
are skipped -- unless ``$CI`` is set, in which case they fail.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from pbem.store.database import make_engine, normalize_url, upgrade

# Reports drawn as pictures cost 0.4 s each; games played through many phases by the tests (and the demos they
# start as subprocesses) go without. The pictures themselves are tested in tests/picture and
# tests/service/test_board_picture_by_mail.py, which turn them on.
os.environ.setdefault("PBEM_BOARD_PICTURES", "0")

# -- PostgreSQL ----------------------------------------------------------------


def _find_pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    candidates += sorted(glob.glob(f"/usr/pgsql-*/bin/{name}"), reverse=True)
    return candidates[0] if candidates else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _ThrowawayPostgres:
    """initdb + pg_ctl in a temp dir; trust auth, fsync off, 127.0.0.1 only."""

    def __init__(self) -> None:
        self.initdb = _find_pg_bin("initdb")
        self.pg_ctl = _find_pg_bin("pg_ctl")
        if not (self.initdb and self.pg_ctl):
            raise RuntimeError("initdb/pg_ctl not found (PATH, /usr/lib/postgresql/*/bin)")
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            # initdb refuses to run as root: run it as the postgres user.
            runuser = shutil.which("runuser") or (
                "/usr/sbin/runuser" if os.path.exists("/usr/sbin/runuser") else None
            )
            if runuser is None:
                raise RuntimeError("running as root and runuser is not available")
            self.as_user = [runuser, "-u", "postgres", "--"]
        self.root = Path(tempfile.mkdtemp(prefix="pbem-pg-"))
        if self.as_user:
            try:
                shutil.chown(self.root, user="postgres")
            except (LookupError, OSError) as exc:
                shutil.rmtree(self.root, ignore_errors=True)
                raise RuntimeError(f"running as root, no usable 'postgres' user: {exc}")
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        self.port = _free_port()
        self.started = False

    def _run(self, *args: str) -> None:
        result = subprocess.run(
            [*self.as_user, *args], capture_output=True, text=True, timeout=120
        )
        if result.returncode != 0:
            log = self.log.read_text(errors="replace") if self.log.exists() else ""
            raise RuntimeError(
                f"{' '.join(args[:2])} failed ({result.returncode}):\n"
                f"{result.stdout}\n{result.stderr}\n{log}"
            )

    def start(self) -> str:
        self._run(
            self.initdb, "-D", str(self.data), "-U", "postgres", "-A", "trust",
            "-E", "UTF8", "--no-locale", "--no-sync",
        )
        options = (
            f"-F -p {self.port} -k {self.root} "
            "-c listen_addresses=127.0.0.1 -c max_connections=100 "
            "-c full_page_writes=off -c synchronous_commit=off"
        )
        self._run(
            self.pg_ctl, "-D", str(self.data), "-l", str(self.log),
            "-o", options, "-w", "-t", "60", "start",
        )
        self.started = True
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        try:
            if self.started:
                self._run(self.pg_ctl, "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


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
        server = _ThrowawayPostgres()
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
    name = f"pbem_test_{secrets.token_hex(6)}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield make_url(admin_url).set(database=name).render_as_string(
            hide_password=False
        )
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


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

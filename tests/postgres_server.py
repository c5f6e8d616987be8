"""A throwaway PostgreSQL server and fresh databases on it, for the tests (`conftest.py`) and `bench/workers.py`.

Plain code, no pytest: the benchmark of several workers needs a real server
started the same way the tests start theirs. initdb and pg_ctl come from
PATH or /usr/lib/postgresql/*/bin; as root they run as the ``postgres`` user
(initdb refuses root). The server trusts local connections, listens on
127.0.0.1 only and runs with fsync off: its data is thrown away.
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

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool


def find_pg_bin(name: str) -> str | None:
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


class ThrowawayPostgres:
    """initdb + pg_ctl in a temp dir; trust auth, fsync off, 127.0.0.1 only."""

    def __init__(self) -> None:
        self.initdb = find_pg_bin("initdb")
        self.pg_ctl = find_pg_bin("pg_ctl")
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
        """Start the server; the URL of its ``postgres`` database, as the superuser (who may create databases)."""
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


def create_database(admin_url: str, prefix: str = "pbem_test") -> str:
    """A new, empty database ``<prefix>_<random>`` on the server of ``admin_url``; its URL."""
    name = f"{prefix}_{secrets.token_hex(6)}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        admin.dispose()
    return make_url(admin_url).set(database=name).render_as_string(hide_password=False)


def drop_database(admin_url: str, url: str) -> None:
    """Drop the database of ``url``, closing whatever connections still use it."""
    name = make_url(url).database
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()

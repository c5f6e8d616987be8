"""Storage faults: the database or its disk cannot take a write, for a reason outside pbem.

A full disk, a database file or folder that is read-only, a file system
mounted (or fallen back to) read-only, a failing disk. None of them is the
fault of a message or a command: what was not written can be written again
once the operator has freed space or made the files writable. Callers turn
such an error into a `StorageFault`, which says in one sentence which file
and what to do, and treat it as temporary: the SMTP server answers 4xx (the
relay keeps the mail), `pbem serve` keeps the message in its inbox and
handles it again later, `pbem ingest` exits with EX_TEMPFAIL.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from typing import Literal

from sqlalchemy import Engine
from sqlalchemy.engine import make_url

Kind = Literal["full", "read-only", "failing"]

#: sqlite3 primary result codes (the low byte of an extended code).
_SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_FULL, _SQLITE_CANTOPEN = 8, 10, 13, 14
#: PostgreSQL SQLSTATEs: disk_full, insufficient_resources, read_only_sql_transaction.
_PG_FULL, _PG_RESOURCES, _PG_READ_ONLY = "53100", "53000", "25006"

_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_READ_ONLY_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}


class StorageFault(Exception):
    """The database (or the Maildir beside it) cannot be written now; nothing was written, nothing is lost."""

    def __init__(self, kind: Kind, where: str, detail: str = "", *, database: bool = True) -> None:
        self.kind = kind
        self.where = where
        self.detail = detail
        self.database = database  # the database file (SQLite keeps two more files beside it), or another path
        super().__init__(self.sentence())

    def sentence(self) -> str:
        """What is wrong and what to do, in one sentence an operator can act on."""
        if self.kind == "full":
            return (f"the disk holding {self.where} is full ({self.detail or 'no space left'}): nothing was written; "
                    "free some space (df -h shows which disk)")
        if self.kind == "read-only" and self.database and os.path.isabs(self.where):
            name = os.path.basename(self.where)
            return (f"{self.where} cannot be written ({self.detail or 'read-only'}): make the file, and its folder "
                    f"(where SQLite keeps {name}-wal and {name}-shm), writable by the user pbem runs as, "
                    "or remount the file system read-write")
        if self.kind == "read-only":
            return (f"{self.where} cannot be written ({self.detail or 'read-only'}): make it writable by the user "
                    "pbem runs as (or the server's role, on PostgreSQL), or remount the file system read-write")
        return (f"the disk holding {self.where} is full or failing ({self.detail or 'I/O error'}): nothing was "
                "written; free some space (df -h), or check the disk (dmesg; a file system that fell back to "
                "read-only must be checked and mounted again)")


def database_file(db: Engine | str | None) -> str:
    """The database's file (SQLite) or its name and host (PostgreSQL), as an operator would look for it."""
    if db is None:
        return "the database"
    url = make_url(db) if isinstance(db, str) else db.url
    if url.get_backend_name() == "sqlite":
        return os.path.abspath(url.database) if url.database and url.database != ":memory:" else "the database"
    return f"the database {url.database} on {url.host or 'localhost'}"


def _state_of_folder(path: str) -> Kind | None:
    """Why a write under ``path`` may have failed, read from its file system: read-only, full, or unknown."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    try:
        stats = os.statvfs(folder)
    except OSError:
        return None
    if stats.f_flag & os.ST_RDONLY or not os.access(folder, os.W_OK):
        return "read-only"
    if stats.f_bavail == 0 or stats.f_favail == 0:
        return "full"
    return None


def storage_fault(error: BaseException, db: Engine | str | None = None) -> StorageFault | None:
    """``error`` as a StorageFault when it is one (a full disk, a read-only database, a failing disk); else None.

    SQLAlchemy's wrapper is looked through to the driver's error. SQLite's
    codes say "full" or "read-only" directly; its "disk I/O error" and
    "unable to open database file" are told apart by looking at the file
    system (mounted read-only, or no space left), since both a read-only
    mount and a full WAL index end in them.
    """
    seen: set[int] = set()
    while error is not None and id(error) not in seen:  # the fault, or what it caused: SQLite rolls back the
        seen.add(id(error))  # whole transaction on SQLITE_FULL, so releasing a savepoint then fails in its turn
        fault = _fault_of(error, db)
        if fault is not None:
            return fault
        error = error.__cause__ or error.__context__
    return None


def _fault_of(error: BaseException, db: Engine | str | None) -> StorageFault | None:
    if isinstance(error, StorageFault):
        return error
    original = getattr(error, "orig", None) or error
    where = database_file(db)
    if isinstance(original, sqlite3.Error):
        code = (getattr(original, "sqlite_errorcode", 0) or 0) & 0xFF
        text = str(original)
        if code == _SQLITE_FULL or "database or disk is full" in text:
            return StorageFault("full", where, text)
        if code == _SQLITE_READONLY or "readonly database" in text:
            return StorageFault("read-only", where, text)
        if code in (_SQLITE_IOERR, _SQLITE_CANTOPEN) or "disk i/o error" in text.lower():
            seen = _state_of_folder(where) if os.path.isabs(where) else None
            if seen is not None:
                return StorageFault(seen, where, text)
            if code == _SQLITE_IOERR:
                return StorageFault("failing", where, text)
        return None
    sqlstate = getattr(original, "sqlstate", None)
    if sqlstate in (_PG_FULL, _PG_RESOURCES):
        return StorageFault("full", where, str(original).strip().splitlines()[0])
    if sqlstate == _PG_READ_ONLY:
        return StorageFault("read-only", where, str(original).strip().splitlines()[0])
    if isinstance(original, OSError) and original.errno is not None:
        place = os.path.abspath(original.filename) if isinstance(original.filename, str) else where
        kind: Kind | None = ("full" if original.errno in _FULL_ERRNOS else "read-only"
                             if original.errno in _READ_ONLY_ERRNOS else "failing" if original.errno == errno.EIO
                             else None)
        if kind is not None:
            return StorageFault(kind, place, original.strerror or "", database=place == where)
    return None

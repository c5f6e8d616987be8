"""Core statements compiled once per database dialect and run on the driver's cursor.

The hot path of the store (an append: read the head, insert a row) ran two
statements through SQLAlchemy's execution layer, and that layer (events,
cache lookups, result objects) cost more than SQLite's own work and as much
as the fsync of a commit (docs/performance.md). A ``Prepared`` statement is
still written in SQLAlchemy Core and compiled by SQLAlchemy for whichever
dialect the connection speaks, so SQLite and PostgreSQL share the code and the
SQL (but for how an INSERT hands back the new row's key, below); only the
execution goes straight to the DBAPI cursor of the connection, inside the
caller's transaction. Errors are the driver's own
(``dialect.loaded_dbapi.IntegrityError`` and so on), not SQLAlchemy's
wrappers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.engine.interfaces import DBAPICursor, Dialect
from sqlalchemy.sql.expression import ColumnElement, Executable


class Prepared:
    """One statement; ``run(conn, params)`` executes it and returns the driver's cursor.

    An INSERT made with ``returns=`` (its table's integer primary key) hands
    back the new row's key through ``new_key(dialect)``: read from the
    driver's ``lastrowid`` where SQLAlchemy itself would read it
    (``dialect.postfetch_lastrowid``: SQLite, whose integer primary key is
    the row id), otherwise from ``RETURNING``. On SQLite the RETURNING
    clause and the fetch cost 40 % of the INSERT (docs/performance.md).
    """

    def __init__(self, statement: Executable, column_keys: Sequence[str] | None = None, *,
                 returns: ColumnElement | None = None) -> None:
        self.statement = statement
        self.column_keys = list(column_keys) if column_keys is not None else None
        self.returns = returns
        self._compiled: dict[str, tuple[str, tuple[str, ...] | None, dict[str, Any]]] = {}
        self._binders: dict[tuple[str, tuple[str, ...]], tuple[str, Callable[[tuple], Any]]] = {}

    def new_key(self, dialect: Dialect) -> Callable[[DBAPICursor], Any]:
        """How to read, from the cursor that has just run this INSERT, the key of the row it made."""
        return _last_row_id if _by_row_id(dialect) else _first_column

    def _compile(self, dialect: Dialect) -> tuple[str, tuple[str, ...] | None, dict[str, Any]]:
        statement = self.statement
        if self.returns is not None and not _by_row_id(dialect):
            statement = statement.returning(self.returns)  # type: ignore[attr-defined]
        compiled = statement.compile(dialect=dialect, column_keys=self.column_keys)
        fixed = {key: bind.value for key, bind in compiled.binds.items() if bind.value is not None}
        order = tuple(compiled.positiontup) if compiled.positional else None
        entry = (str(compiled), order, fixed)
        self._compiled[dialect.name] = entry
        return entry

    def run(self, conn: Connection, params: Mapping[str, Any]) -> DBAPICursor:
        """Execute once; the driver's cursor, to fetch from."""
        sql, order, fixed, cursor = self._ready(conn)
        cursor.execute(sql, self._arguments(params, order, fixed))
        return cursor

    def binder(self, dialect: Dialect, names: tuple[str, ...]) -> tuple[str, Callable[[tuple], Any]]:
        """The SQL for ``dialect`` and a function from a tuple of values, in the order of ``names``, to its arguments.

        For a statement run once per append: ``run`` builds the driver's
        arguments from a dict, key by key, and a durable one-event append
        is short enough for that to show (docs/performance.md). Here the
        mapping is worked out once per dialect: the values as they come when
        the driver's positional parameters are those names in that order
        (SQLite's ``?``), the fixed values of the statement (a LIMIT)
        appended after them, or a dict for named parameters (psycopg's
        ``%(name)s``).
        """
        found = self._binders.get((dialect.name, names))
        if found is None:
            found = self._binders[(dialect.name, names)] = self._make_binder(dialect, names)
        return found

    def _make_binder(self, dialect: Dialect, names: tuple[str, ...]) -> tuple[str, Callable[[tuple], Any]]:
        sql, order, fixed = self._compiled.get(dialect.name) or self._compile(dialect)
        if order is None:
            return sql, lambda values: {**fixed, **dict(zip(names, values))}
        if order[:len(names)] != names:  # the statements bound this way put their values first
            raise ValueError(f"{names!r} are not the first parameters of {sql!r} ({order!r})")
        tail = tuple(fixed[key] for key in order[len(names):])
        return sql, lambda values: values + tail

    def _ready(self, conn: Connection) -> tuple[str, tuple[str, ...] | None, dict[str, Any], DBAPICursor]:
        dialect = conn.dialect
        sql, order, fixed = self._compiled.get(dialect.name) or self._compile(dialect)
        return sql, order, fixed, driver_cursor(conn)

    @staticmethod
    def _arguments(params: Mapping[str, Any], order: tuple[str, ...] | None, fixed: dict[str, Any]) -> Any:
        if order is None:
            return {**fixed, **params} if fixed else params
        return tuple(params[key] if key in params else fixed[key] for key in order)


def _by_row_id(dialect: Dialect) -> bool:
    return bool(dialect.postfetch_lastrowid)


def _last_row_id(cursor: DBAPICursor) -> Any:
    return cursor.lastrowid


def _first_column(cursor: DBAPICursor) -> Any:
    return cursor.fetchone()[0]


def driver_cursor(conn: Connection) -> DBAPICursor:
    """A cursor of the driver's connection under ``conn``, inside a transaction.

    The unit of work has begun one on the driver (SQLite's driver says so);
    otherwise this begins SQLAlchemy's, as its own autobegin would (on
    SQLite: BEGIN IMMEDIATE; PostgreSQL's driver begins by itself), so that
    statements run on the cursor commit or roll back with the caller's
    transaction.
    """
    driver = conn.connection.driver_connection
    if not getattr(driver, "in_transaction", False) and not conn.in_transaction():
        conn.begin()
    return driver.cursor()

"""SQL run on the database driver's own cursor, inside an SQLAlchemy connection's transaction.

For the steps the server runs most (the worker API's claim, view, draft and submit; a chat's
message and reply), SQLAlchemy's work per statement (execution context, bind and result
processing, events) cost more CPU than the database's. Those statements are plain SQL strings,
built once per dialect; values are bound and read here exactly as the ORM stores them, so the
ORM reads these rows back unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

RowT = TypeVar("RowT")

_PARAM = re.compile(r"(?<![:\w]):(\w+)")


class DriverSQL:
    """One dialect's way of writing and binding driver SQL (`:name` parameters, written as
    `%(name)s` for psycopg)."""

    def __init__(self, dialect: str):
        self.postgres = dialect == "postgresql"
        if self.postgres:
            from psycopg.types.json import Json

            self._json = Json
        else:
            self._json = json.dumps

    def sql(self, statement: str) -> str:
        """`statement` with its `:name` parameters in the driver's style."""
        return _PARAM.sub(r"%(\1)s", statement) if self.postgres else statement

    def time(self, moment: datetime | None) -> Any:
        """A time as bound: SQLite stores the ORM's text form (always with microseconds)."""
        if moment is None or self.postgres:
            return moment
        return moment.isoformat(" ", "microseconds")

    def read_time(self, value: Any) -> datetime | None:
        if value is None or self.postgres:
            return value
        return datetime.fromisoformat(value)

    def json(self, value: Any) -> Any:
        """A value for a JSON column that stores None as SQL NULL (`none_as_null`)."""
        return None if value is None else self._json(value)

    def document(self, value: Any) -> Any:
        """A value for a plain JSON column: always a JSON document (None is JSON `null`)."""
        return self._json(value)

    def read_json(self, value: Any) -> Any:
        """A JSON column's value as read: psycopg decodes it, SQLite gives the text."""
        if value is None or self.postgres:
            return value
        return json.loads(value)


def run(connection: Connection, statement: str, values: dict[str, Any]) -> Any:
    """`statement` on a driver cursor of `connection`'s transaction; the cursor, to fetch
    from. A failure is SQLAlchemy's error (IntegrityError, OperationalError, ...), as it is
    for every statement SQLAlchemy runs, so callers catch one kind whichever way it ran."""
    dbapi_error = connection.dialect.loaded_dbapi.Error
    cursor = driver_cursor(connection)
    try:
        cursor.execute(statement, values)
    except dbapi_error as exc:
        raise DBAPIError.instance(statement, values, exc, dbapi_error) from None
    return cursor


def first(connection: Connection, statement: str, values: dict[str, Any],
          make: Callable[[tuple[Any, ...]], RowT]) -> RowT | None:
    """The statement's first row made into `make`'s type; None when it returns none."""
    row = run(connection, statement, values).fetchone()
    return None if row is None else make(row)


_CURSOR = "cep_driver_cursor"


def driver_cursor(connection: Connection) -> Any:
    """The driver cursor of `connection`'s database connection, made once per connection and
    reused: a new psycopg cursor looks its adapters up afresh, which cost a third of a
    statement's CPU in the client again. Its statements run one after the other, each read
    before the next is sent, as every caller here does. The pool clears `info` whenever it
    replaces the database connection, so the cursor never outlives its connection."""
    pooled = connection.connection
    cursor = pooled.info.get(_CURSOR)
    if cursor is None:
        cursor = pooled.info[_CURSOR] = pooled.dbapi_connection.cursor()
    return cursor

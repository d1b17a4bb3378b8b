"""SQL run on the database driver's own connection, under an SQLAlchemy connection.

For the steps the server runs most (the worker API's claim, view, draft and submit; a chat's
message and reply), SQLAlchemy's work per statement (execution context, bind and result
processing, events) cost more CPU than the database's. Those statements are plain SQL strings,
built once per dialect; values are bound and read here exactly as the ORM stores them, so the
ORM reads these rows back unchanged. Inside a transaction they run on the driver's cursor; on
PostgreSQL outside one (the worker API's single-statement steps) as prepared statements
through libpq, which lets go of the GIL once a statement instead of several times.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from datetime import datetime
from functools import cache
from typing import Any, TypeVar

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from collection_and_annotations.storage.socket_wait import SocketWait, cooperative_wait

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
        """A JSON column's value as read: psycopg decodes it, SQLite gives the text (or, for
        a document that is a bare number, the number: the column's numeric affinity)."""
        if value is None or self.postgres or not isinstance(value, str | bytes):
            return value
        return json.loads(value)


def run(connection: Connection, statement: str, values: dict[str, Any]) -> Any:
    """`statement` on the driver's connection of `connection`; something to fetch its rows
    from (`fetchone`, `fetchall`). A failure is SQLAlchemy's error (IntegrityError,
    OperationalError, ...), as it is for every statement SQLAlchemy runs, so callers catch
    one kind whichever way it ran. On PostgreSQL without a transaction (autocommit) the
    statement runs as a prepared statement through libpq (`_prepared_rows`), otherwise on
    the connection's driver cursor."""
    dbapi_error = connection.dialect.loaded_dbapi.Error
    try:
        if connection.dialect.name == "postgresql" and \
                connection.connection.dbapi_connection.autocommit:
            return _prepared_rows(connection, statement, values)
        cursor = driver_cursor(connection)
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


class _Rows:
    """A statement's rows as a cursor gives them."""

    def __init__(self, rows: list[tuple[Any, ...]]):
        self._rows = rows

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows


_PREPARED = "cep_prepared"
_POSITIONAL = re.compile(r"%\((\w+)\)s|%%")


@cache
def _positional(statement: str) -> tuple[bytes, bytes, tuple[str, ...]]:
    """A psycopg-style statement (`%(name)s`) as libpq takes it: its prepared name, its SQL
    with `$n` parameters, and the value names in `$n` order."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match.group(0) == "%%":
            return "%"
        if match.group(1) not in names:
            names.append(match.group(1))
        return f"${names.index(match.group(1)) + 1}"

    sql = _POSITIONAL.sub(number, statement)
    name = "cep_" + hashlib.sha1(sql.encode()).hexdigest()[:20]
    return name.encode(), sql.encode(), tuple(names)


def _prepared_rows(connection: Connection, statement: str, values: dict[str, Any]) -> _Rows:
    """PostgreSQL, autocommit: the statement prepared once per database connection and run
    with libpq's blocking PQexecPrepared, or, in a step whose waits go to the event loop
    (storage/socket_wait.py), with libpq's asynchronous calls. psycopg's cursor gives up the
    GIL several times a statement (sending, waiting, checking for results and
    notifications), and a request thread then queues for it again each time; under load that
    waiting, not the database, was most of a statement's time. PQexecPrepared gives it up
    once. Values are sent as text and their types taken from the SQL, rows are read by
    psycopg's own loaders."""
    from psycopg import errors, pq
    from psycopg.adapt import PyFormat, Transformer

    pooled = connection.connection
    dbapi_connection = pooled.dbapi_connection
    state = pooled.info.get(_PREPARED)
    if state is None:
        state = pooled.info[_PREPARED] = (set(), Transformer(dbapi_connection))
    prepared, transformer = state
    name, sql, names = _positional(statement)
    params = transformer.dump_sequence([values[key] for key in names],
                                       [PyFormat.TEXT] * len(names))
    result = _execute_prepared(dbapi_connection.pgconn, prepared, name, sql, params)
    if result.error_field(pq.DiagnosticField.SQLSTATE) == _NO_SUCH_STATEMENT:
        # psycopg deallocates every prepared statement of the connection when it rolls back
        # a transaction in which it prepared its own: prepare this one again (each of the
        # others finds out for itself; some may have been prepared again meanwhile).
        prepared.discard(name)
        result = _execute_prepared(dbapi_connection.pgconn, prepared, name, sql, params)
    if result.status not in (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK):
        raise errors.error_from_result(result, encoding=dbapi_connection.info.encoding)
    transformer.set_pgresult(result)
    return _Rows(transformer.load_rows(0, result.ntuples, tuple))


_NO_SUCH_STATEMENT = b"26000"  # invalid_sql_statement_name


def _execute_prepared(pgconn: Any, prepared: set[bytes], name: bytes, sql: bytes,
                      params: Any) -> Any:
    """The statement's result, prepared first if this connection has not prepared it (a
    failed PREPARE is returned as the result)."""
    from psycopg import pq

    wait = cooperative_wait()
    if name not in prepared:
        result = _command(pgconn, wait, pgconn.prepare, pgconn.send_prepare, name, sql, None)
        if result.status != pq.ExecStatus.COMMAND_OK:
            return result
        prepared.add(name)
    return _command(pgconn, wait, pgconn.exec_prepared, pgconn.send_query_prepared, name,
                    params, None, pq.Format.TEXT)


def _command(pgconn: Any, wait: SocketWait | None, blocking: Callable[..., Any],
             send: Callable[..., None], *args: Any) -> Any:
    """One libpq command's result: its blocking call, or, with a `wait`, its asynchronous
    `send` and the wait for the answer handed to `wait`."""
    if wait is None:
        return blocking(*args)
    send(*args)
    return _result(pgconn, wait)


def _result(pgconn: Any, wait: SocketWait) -> Any:
    """The result of the command just sent, its socket waits handed to `wait` (the event
    loop's, see storage/socket_wait.py): libpq's asynchronous protocol, as PQexec runs it."""
    while pgconn.flush():
        wait(pgconn.socket, True)
    while pgconn.is_busy():  # the answer is not all in yet (no read from a silent socket)
        wait(pgconn.socket, False)
        pgconn.consume_input()
    result = None
    while (last := pgconn.get_result()) is not None:
        result = last
    return result

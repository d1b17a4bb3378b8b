"""What the engine's statement modules share: column types as the models store them, and a
statement written twice where SQLite truly differs (it has no row locks)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Generic, NamedTuple, TypeVar

from sqlalchemy import JSON, Connection, DateTime, Executable, column, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.elements import ColumnClause

# The models' storage types (storage/models.py), for binds and result columns of text().
TIME = DateTime()
DOCUMENT = JSON()  # None is stored as JSON null
NULLABLE_DOCUMENT = JSON(none_as_null=True)  # None is stored as SQL NULL
LOCK_NOT_AVAILABLE = "55P03"  # PostgreSQL's SQLSTATE for a lock_timeout that ran out


def columns(*names: str | ColumnClause) -> list[ColumnClause]:
    """Result columns: a name alone for those whose driver value is already right."""
    return [column(name) if isinstance(name, str) else name for name in names]


StatementT = TypeVar("StatementT")


class PerDialect(NamedTuple, Generic[StatementT]):
    """A statement (or a step's statements) in its PostgreSQL and its SQLite version."""

    postgresql: StatementT
    sqlite: StatementT

    def on(self, connection: Connection) -> StatementT:
        return getattr(self, connection.dialect.name)


def locking(sql: str, lock: str, result: Sequence[str | ColumnClause]) -> PerDialect[Executable]:
    """`sql` with its `{lock}` placed: `lock` (a row-lock clause) on PostgreSQL, nothing on
    SQLite, whose write transactions hold the whole database (BEGIN IMMEDIATE); `result`: its
    result columns."""
    return PerDialect(*(text(sql.format(lock=clause)).columns(*columns(*result))
                        for clause in (lock, "")))


def waited_too_long(exc: DBAPIError) -> bool:
    """Whether a statement gave up waiting for a lock: PostgreSQL's lock_timeout, or SQLite's
    busy timeout on its write lock."""
    driver_error = exc.orig
    return getattr(driver_error, "sqlstate", None) == LOCK_NOT_AVAILABLE or \
        getattr(driver_error, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY


def first_line(exc: DBAPIError) -> str:
    """The driver's own first line of why a connection or statement failed, to show a user."""
    return str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)

"""Engine, sessions and migrations: SQLite (WAL) by default, PostgreSQL through a URL."""

from __future__ import annotations

import itertools
import os
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, make_url, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DatabaseError, DBAPIError, IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from collection_and_annotations.errors import UserError
from collection_and_annotations.storage.models import Base, Setting
from collection_and_annotations.storage.socket_wait import blocking_waits

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"


def dialect_insert(session: Session | Connection, model: type
                   ) -> postgresql.Insert | sqlite.Insert:
    """An INSERT that supports ON CONFLICT (both SQLite and PostgreSQL do)."""
    bind = session.get_bind() if isinstance(session, Session) else session
    dialect = sqlite if bind.dialect.name == "sqlite" else postgresql
    return dialect.insert(model)


def default_url(data_dir: str | Path) -> str:
    path = Path(data_dir).expanduser().resolve()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create the data directory ({exc.strerror}); set data_dir to a "
                        "writable directory (or database_url)", path) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UserError("the data directory is not writable; set data_dir to a writable "
                        "directory (or database_url)", path)
    return f"sqlite:///{path / 'cep.sqlite3'}"


READ_ONLY = "cep_read_only"


def _setup_sqlite(engine: Engine) -> None:
    """WAL so readers never block the writer; writers BEGIN IMMEDIATE so they queue instead of
    failing when a read transaction would have to upgrade; readers BEGIN DEFERRED (a snapshot
    that takes no lock)."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):  # type: ignore[no-untyped-def]
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection):  # type: ignore[no-untyped-def]
        # On the driver's connection: through SQLAlchemy's execution path this one statement
        # cost as much CPU as a worker API request's own statements. Its failure (the lock
        # not had within busy_timeout) is still SQLAlchemy's error, as callers expect.
        statement = "BEGIN" if connection.get_execution_options().get(READ_ONLY) else \
            "BEGIN IMMEDIATE"
        try:
            connection.connection.driver_connection.execute(statement)
        except sqlite3.Error as exc:
            raise DBAPIError.instance(statement, (), exc, sqlite3.Error) from None


def _setup_postgres(engine: Engine) -> None:
    """Every connection at READ COMMITTED, whatever the server's or database's default
    (`default_transaction_isolation`): the claim, submit and expiry statements rely on it
    (re-checking a row a concurrent transaction changed, `SKIP LOCKED`); at REPEATABLE READ
    concurrent claims fail with serialization errors. Set for the session, so it holds for
    the statements run without BEGIN too, and before SQLAlchemy reads the default."""

    @event.listens_for(engine, "connect", insert=True)
    def _on_connect(dbapi_connection, _record):  # type: ignore[no-untyped-def]
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL "
                           "READ COMMITTED")
        dbapi_connection.commit()


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        database = make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, pool_size=20, max_overflow=20)
        _setup_sqlite(engine)
    else:
        # No pre-ping: it costs a round trip per request; a dropped connection invalidates the
        # pool and fails one request instead.
        engine = create_engine(url, pool_size=20, max_overflow=20, pool_recycle=1800)
        _setup_postgres(engine)
    return engine


def _check_schema(connection: Connection, shown: str) -> None:
    """Refuse a database another program set up (a table with one of our names, no Alembic
    version) or a newer version of this one migrated (a revision we do not know)."""
    tables = set(inspect(connection).get_table_names())
    if "alembic_version" not in tables:
        clash = sorted(tables & set(Base.metadata.tables))
        if clash:
            raise UserError(f"the database {shown} is not ours: it holds tables named "
                            f"{', '.join(clash)} that this software did not create (no "
                            "alembic_version table); use another database (database_url=...)")
        return
    from alembic.script import ScriptDirectory  # Alembic (and Mako) load only to migrate

    stored = connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    known = {script.revision for script in ScriptDirectory(str(MIGRATIONS_DIR)).walk_revisions()}
    unknown = [revision for revision in stored if revision not in known]
    if unknown:
        raise UserError(f"the database {shown} was migrated by a newer version of this software "
                        f"(schema revision {unknown[0]} is unknown here): upgrade the software, "
                        "or use another database (database_url=...)")


@dataclass
class _Held:
    """The connections a thread (or greenlet) keeps, and of which kinds it keeps them."""

    kinds: frozenset[str]
    connections: dict[tuple[int, str], Connection] = field(default_factory=dict)


# Per thread, and per greenlet of the event loop (server/greenlet_pool.py): each has its own
# context.
_held: ContextVar[_Held | None] = ContextVar("cep_held_connections", default=None)
_serials = itertools.count()


@contextmanager
def reused_connections(kinds: tuple[str, ...] = ("read", "write")) -> Iterator[None]:
    """For a long-lived thread that runs many short transactions (a server's request threads):
    inside this block each database keeps one connection per kind (of `kinds`: write, read)
    for the thread instead of taking one from its pool for every transaction. Under load the
    pool's check-out and check-in cost a fifth of a worker API request's CPU. The connections
    close when the block ends."""
    held = _Held(frozenset(kinds))
    token = _held.set(held)
    try:
        yield
    finally:
        _held.reset(token)
        for connection in held.connections.values():
            connection.close()


class Database:
    """One per process: the engine and a session factory."""

    def __init__(self, url: str):
        self.url = url
        self._serial = next(_serials)  # this database's key among a thread's held connections
        self.engine = make_engine(url)
        # PostgreSQL reads without BEGIN and COMMIT, two round trips fewer: at its READ
        # COMMITTED level a transaction gives each statement its own snapshot anyway. Writes
        # of one statement use it too (`one_statement`).
        self._read_engine = self.engine.execution_options(**{READ_ONLY: True}, **(
            {} if url.startswith("sqlite") else {"isolation_level": "AUTOCOMMIT"}))
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._read_sessions = sessionmaker(self._read_engine, expire_on_commit=False)
        # SQLite takes one writer at a time; queueing this process's writers here is fairer and
        # faster than letting them poll the file lock through busy_timeout's sleeps. Readers
        # never wait for it.
        self._sqlite = url.startswith("sqlite")
        self._serialize_writes = threading.Lock() if self._sqlite else nullcontext()

    @property
    def one_statement_writes(self) -> bool:
        """PostgreSQL: a write of one statement is atomic on its own (`one_statement`), so a
        step written as checked single statements saves the round trips of BEGIN and COMMIT."""
        return not self._sqlite

    def check_reachable(self) -> None:
        """Connect and check the schema is ours and not newer, before anything is written."""
        shown = self.engine.url.render_as_string(hide_password=True)
        try:
            with self.engine.connect() as connection:
                _check_schema(connection, shown)
        except DatabaseError as exc:
            reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
            if self.url.startswith("sqlite") and "not a database" in reason:
                raise UserError("this is not an SQLite database (damaged, or another kind of "
                                "file): move it away to start afresh, or set data_dir or "
                                "database_url to another place",
                                make_url(self.url).database) from None
            raise UserError(f"cannot reach the database {shown}: {reason}; check "
                            "database_url (or drop it to use SQLite under data_dir)") from None

    def migrate(self) -> None:
        """Bring the schema to the newest migration (safe to call on every start)."""
        from alembic import command  # Alembic (and Mako) load only to migrate
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR))
        with self.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A write transaction: committed when the block ends, rolled back on an exception."""
        with blocking_waits(), self._serialize_writes, self._sessions() as session, \
                session.begin():
            yield session

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A write transaction on a plain connection: the worker API's hot path, where the ORM's
        per-statement work would cost more than the database."""
        with blocking_waits(), self._serialize_writes, \
                self._connection(self.engine, "write") as connection, connection.begin():
            yield connection

    def one_statement(self) -> AbstractContextManager[Connection]:
        """A write that PostgreSQL runs as one statement (atomic on its own): on the
        autocommit connection `snapshot` gives there, without BEGIN and COMMIT, two round
        trips fewer. On SQLite, where the same step may take several statements, a write
        transaction as `transaction` gives."""
        return self.transaction() if self._sqlite else self.snapshot()

    @contextmanager
    def driver_transaction(self) -> Iterator[Any]:
        """A write transaction on the driver's own connection, yielding its cursor: for the
        chat's frequent steps (engine/chat_sql.py), where even a plain connection's work per
        statement and per transaction would cost more than the database."""
        with blocking_waits(), self._serialize_writes:
            connection = self.engine.raw_connection()
            try:
                cursor = connection.cursor()
                if self._sqlite:
                    cursor.execute("BEGIN IMMEDIATE")
                yield cursor
                connection.commit()
            except BaseException:
                connection.rollback()
                raise
            finally:
                connection.close()

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """A read transaction on a plain connection (see `read`)."""
        with self._connection(self._read_engine, "read") as connection, connection.begin():
            yield connection

    @contextmanager
    def _connection(self, engine: Engine, kind: str) -> Iterator[Connection]:
        """The thread's held connection of `kind` when it has one free (see
        `reused_connections`), else one from the pool for this block."""
        state = _held.get()
        held = None if state is None or kind not in state.kinds else state.connections
        key = (self._serial, kind)
        connection = None if held is None else held.get(key)
        # No held connections here, or a transaction inside another: one from the pool.
        if held is None or (connection is not None and connection.in_transaction()):
            with engine.connect() as connection:
                yield connection
            return
        if connection is None or connection.closed:
            connection = held[key] = engine.connect()
        try:
            yield connection
        except (DBAPIError, engine.dialect.loaded_dbapi.Error):
            # The connection may be broken (statements on the driver's cursor bypass
            # SQLAlchemy's disconnect handling): the next transaction takes a new one.
            del held[key]
            connection.close()
            raise

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read that never waits for writers (and that writers never wait for); it must not
        write. On SQLite it is one consistent snapshot; on PostgreSQL each statement sees what
        was committed when it began (as in its default READ COMMITTED transactions)."""
        with self._read_sessions() as session, session.begin():
            yield session

    def setting(self, key: str) -> str:
        """A shared secret, created once per database so every server process agrees."""
        try:
            with self.session() as session:
                row = session.get(Setting, key)
                if row is None:
                    row = Setting(key=key, value=secrets.token_hex(32))
                    session.add(row)
                return row.value
        except IntegrityError:  # another process created it first
            with self.session() as session:
                return session.get(Setting, key).value

    def refresh_statistics(self, tables: tuple[str, ...]) -> None:
        """PostgreSQL: vacuum and analyse tables whose rows change state quickly (free units),
        so the planner keeps using the right index and scans skip no dead entries. Cheap, never
        blocks writers; a no-op on SQLite. Autovacuum does the same on a default server, but
        it may be off."""
        if self.engine.dialect.name != "postgresql":
            return
        with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.exec_driver_sql(f"VACUUM (ANALYZE) {', '.join(tables)}")

    def dispose(self) -> None:
        self.engine.dispose()


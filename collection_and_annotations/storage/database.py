"""Engine, sessions and migrations: SQLite (WAL) by default, PostgreSQL through a URL."""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, make_url, text
from sqlalchemy.dialects import registry
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite
from sqlalchemy.exc import DatabaseError, IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from collection_and_annotations.errors import UserError
from collection_and_annotations.storage.models import Base, Setting
from collection_and_annotations.storage.sql import first_line

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"


def schema_head() -> str:
    """The newest migration's revision, read from the numbered file names (`0011_arena.py`
    is revision 0011; tests/test_storage.py checks it is Alembic's head): a database already
    at it starts without loading Alembic (and Mako), which is most starts."""
    scripts = (MIGRATIONS_DIR / "versions").glob("[0-9]*_*.py")
    return max(path.name.split("_", 1)[0] for path in scripts)


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


LOCK_TIMEOUT_S = 5  # how long a step waits for a row lock another holds (PostgreSQL)


class SQLiteWrites(SQLiteDialect_pysqlite):
    """SQLite whose transactions begin IMMEDIATE: writers queue for the write lock instead of
    failing when a read transaction would have to upgrade. The dialect begins them, not a
    `begin` event listener: any engine event makes SQLAlchemy dispatch events around every
    statement (bench/RESULTS.md, "Worker API load"). A BEGIN that waits past busy_timeout
    fails as SQLAlchemy's OperationalError, as callers expect."""

    supports_statement_cache = True  # it compiles as its parent does
    begin_statement = "BEGIN IMMEDIATE"

    def do_begin(self, dbapi_connection: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(self.begin_statement)
        finally:
            cursor.close()


class SQLiteReads(SQLiteWrites):
    """SQLite whose transactions begin DEFERRED: a read snapshot that takes no lock."""

    supports_statement_cache = True
    begin_statement = "BEGIN"


registry.register("sqlite.cep_writes", __name__, "SQLiteWrites")
registry.register("sqlite.cep_reads", __name__, "SQLiteReads")


def _sqlite_engine(url: str, driver: str) -> Engine:
    """An engine on the SQLite file `url` whose transactions begin as `driver` says, in WAL so
    readers never block the writer."""
    engine = create_engine(make_url(url).set(drivername=f"sqlite+{driver}"), pool_size=20,
                           max_overflow=20)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):  # type: ignore[no-untyped-def]
        dbapi_connection.isolation_level = None  # the dialect begins transactions
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    return engine


def _setup_postgres(engine: Engine, lock_timeout_s: int) -> None:
    """Every connection at READ COMMITTED, whatever the server's or database's default
    (`default_transaction_isolation`): the claim, submit and expiry statements rely on it
    (re-checking a row a concurrent transaction changed, `SKIP LOCKED`); at REPEATABLE READ
    concurrent claims fail with serialization errors. Set for the session, before SQLAlchemy
    reads the default. A statement waits at most `lock_timeout_s` for a lock: a step stuck
    behind another is refused (engine/work.py `worker_step`) instead of holding its client
    and its connection without end."""

    @event.listens_for(engine, "connect", insert=True)
    def _on_connect(dbapi_connection, _record):  # type: ignore[no-untyped-def]
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL "
                           "READ COMMITTED")
            cursor.execute(f"SET lock_timeout = '{int(lock_timeout_s * 1000)}ms'")
        dbapi_connection.commit()


def make_engine(url: str, lock_timeout_s: int = LOCK_TIMEOUT_S,
                autocommit: bool = False) -> Engine:
    """An engine on `url`; on PostgreSQL with `autocommit`, one whose connections stay in
    autocommit (`Database.one_statement`)."""
    if url.startswith("sqlite"):
        database = make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = _sqlite_engine(url, "cep_writes")
    else:
        # No pre-ping: it costs a round trip per request; a dropped connection invalidates the
        # pool and fails one request instead.
        engine = create_engine(url, pool_size=20, max_overflow=20, pool_recycle=1800,
                               **({"isolation_level": "AUTOCOMMIT"} if autocommit else {}))
        _setup_postgres(engine, lock_timeout_s)
    return engine


def _check_schema(connection: Connection, shown: str) -> None:
    """Refuse a database another program set up (a table with one of our names, no Alembic
    version) or a newer version of this one migrated (a revision we do not know)."""
    stored = _stored_revisions(connection)
    if stored is None:
        clash = sorted(set(inspect(connection).get_table_names()) & set(Base.metadata.tables))
        if clash:
            raise UserError(f"the database {shown} is not ours: it holds tables named "
                            f"{', '.join(clash)} that this software did not create (no "
                            "alembic_version table); use another database (database_url=...)")
        return
    if stored == [schema_head()]:
        return
    from alembic.script import ScriptDirectory  # Alembic (and Mako) load only to migrate

    known = {script.revision for script in ScriptDirectory(str(MIGRATIONS_DIR)).walk_revisions()}
    unknown = [revision for revision in stored if revision not in known]
    if unknown:
        raise UserError(f"the database {shown} was migrated by a newer version of this software "
                        f"(schema revision {unknown[0]} is unknown here): upgrade the software, "
                        "or use another database (database_url=...)")


def _stored_revisions(connection: Connection) -> list[str] | None:
    """The schema revisions Alembic recorded in the database; None if it recorded none."""
    if not inspect(connection).has_table("alembic_version"):
        return None
    return list(connection.execute(text("SELECT version_num FROM alembic_version")).scalars())


class Database:
    """One per process: the engine and a session factory."""

    def __init__(self, url: str, lock_timeout_s: int = LOCK_TIMEOUT_S):
        self.url = url
        self.engine = make_engine(url, lock_timeout_s)
        # Reads see one snapshot: on PostgreSQL a REPEATABLE READ READ ONLY transaction, on
        # SQLite (WAL) any read transaction is one (its own connections, begun DEFERRED). Set
        # on each connection, not as an engine's execution options: those make SQLAlchemy
        # dispatch events around every statement of that engine (bench/RESULTS.md, "Worker
        # API load").
        sqlite = url.startswith("sqlite")
        self._snapshot_engine = _sqlite_engine(url, "cep_reads") if sqlite else self.engine
        # PostgreSQL's one-statement steps: connections that stay in autocommit, not a pooled
        # connection switched to autocommit and back at each step, which costs CPU and makes
        # the next transaction set its isolation again (bench/RESULTS.md, "Worker API load").
        self._autocommit_engine = None if sqlite else make_engine(url, lock_timeout_s,
                                                                  autocommit=True)
        self._snapshot_options = {} if sqlite else {"isolation_level": "REPEATABLE READ",
                                                    "postgresql_readonly": True}
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._read_sessions = sessionmaker(self._snapshot_engine, expire_on_commit=False)
        # SQLite takes one writer at a time; queueing this process's writers here is fairer and
        # faster than letting them poll the file lock through busy_timeout's sleeps. Readers
        # never wait for it.
        self._serialize_writes = threading.Lock() if sqlite else nullcontext()

    def check_reachable(self) -> None:
        """Connect and check the schema is ours and not newer, before anything is written."""
        shown = make_url(self.url).render_as_string(hide_password=True)
        try:
            with self.engine.connect() as connection:
                _check_schema(connection, shown)
        except DatabaseError as exc:
            reason = first_line(exc)
            if self.url.startswith("sqlite") and "not a database" in reason:
                raise UserError("this is not an SQLite database (damaged, or another kind of "
                                "file): move it away to start afresh, or set data_dir or "
                                "database_url to another place",
                                make_url(self.url).database) from None
            raise UserError(f"cannot reach the database {shown}: {reason}; check "
                            "database_url (or drop it to use SQLite under data_dir)") from None

    def migrate(self) -> None:
        """Bring the schema to the newest migration (safe to call on every start)."""
        with self.engine.begin() as connection:
            if _stored_revisions(connection) == [schema_head()]:
                return
            from alembic import command  # Alembic (and Mako) load only to migrate
            from alembic.config import Config

            config = Config()
            config.set_main_option("script_location", str(MIGRATIONS_DIR))
            if connection.dialect.name == "postgresql":  # a migration waits for its locks
                connection.exec_driver_sql("SET LOCAL lock_timeout = 0")
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A write transaction: committed when the block ends, rolled back on an exception."""
        with self._serialize_writes, self._sessions() as session, session.begin():
            yield session

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A write transaction on a plain connection (the worker steps' Core statements)."""
        with self._serialize_writes, self.engine.begin() as connection:
            yield connection

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """A read-only transaction on a plain connection that sees one snapshot of the
        database; it never waits for writers, nor they for it."""
        with self._snapshot_engine.connect() as connection:
            connection.execution_options(**self._snapshot_options)
            with connection.begin():
                yield connection

    def one_statement(self, write: bool) -> AbstractContextManager[Connection]:
        """A connection for a step that is one statement on PostgreSQL, in autocommit (the
        statement alone is atomic, sees one snapshot and holds its row locks to its end); on
        SQLite, whose version of a step may be several statements and whose BEGIN and COMMIT
        are no round trips, `transaction` (`write`) or `snapshot`."""
        if self._autocommit_engine is None:
            return self.transaction() if write else self.snapshot()
        return self._autocommit_engine.connect()

    @contextmanager
    def read(self) -> Iterator[Session]:
        """`snapshot` as an ORM session; it must not write."""
        with self._read_sessions() as session, session.begin():
            session.connection(execution_options=self._snapshot_options)
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
        if self._autocommit_engine is None:
            return
        with self._autocommit_engine.connect() as connection:
            connection.exec_driver_sql(f"VACUUM (ANALYZE) {', '.join(tables)}")

    def dispose(self) -> None:
        self.engine.dispose()
        self._snapshot_engine.dispose()
        if self._autocommit_engine is not None:
            self._autocommit_engine.dispose()


"""Shared fixtures: databases (SQLite and the local PostgreSQL), fixture paths, served tasks."""

from __future__ import annotations

import hashlib
import os
import secrets
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
import write_bytecode  # noqa: F401  (first: before the package's modules are compiled)
from helpers import REPO, migrated_sqlite
from sqlalchemy.engine import make_url

from collection_and_annotations.blueprints import build_blueprint
from collection_and_annotations.cli.run import open_task
from collection_and_annotations.config.loader import load_run_config
from collection_and_annotations.storage.database import MIGRATIONS_DIR, Database

# Tests stop launchers with Ctrl-C. A session started in the background of a script inherits
# SIGINT ignored, and so would every process it starts: they would not stop.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

SHARED = REPO.parent / "shared"
CHROMIUM = Path("/usr/bin/chromium")
# Chromium's flags for this machine: no sandbox as root, no GPU, no calls to Google's hosts;
# scrolls jump instead of animating, so a test waits for where they end, not for the animation.
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run",
               "--disable-smooth-scrolling"]
CEP_FIXTURES = SHARED / "fixtures" / "cep"
POSTGRES_URL = os.environ.get(
    "CEP_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def missing_service(reason: str) -> None:
    """Skip locally; under CI=true fail, so CI never passes by testing less than it claims."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason} (CI=true: a missing service fails the test instead of "
                    "skipping it)", pytrace=False)
    pytest.skip(reason)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test by the services it needs, whichever way it asks for them, so
    `-m "not browser and not postgres"` (the fast lane) never starts one. A test that takes
    `postgres_url` only for some parameters (`request.getfixturevalue`) marks those
    parameters itself (`pytest.param(..., marks=pytest.mark.postgres)`)."""
    for item in items:
        needs = set(getattr(item, "fixturenames", ()))
        if "postgres_url" in needs:
            item.add_marker(pytest.mark.postgres)
        if "browser" in needs:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """Debian's Chromium under Playwright, one per test module: its synchronous API keeps an
    event loop in this thread while it is open, which the asynchronous tests of other modules
    must not find there."""
    if not CHROMIUM.is_file():
        missing_service(f"{CHROMIUM} is missing: install it with `apt-get install chromium` "
                        "(Debian's package)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def cep_fixtures() -> Path:
    if not CEP_FIXTURES.is_dir():
        pytest.skip("../shared/fixtures/cep is absent (fixtures of the original project)")
    return CEP_FIXTURES


def _postgres_admin() -> psycopg.Connection:
    url = make_url(POSTGRES_URL)
    try:
        return psycopg.connect(host=url.host, port=url.port or 5432, user=url.username,
                               dbname=url.database, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        missing_service(f"PostgreSQL at {POSTGRES_URL} is unreachable: {exc}; start it (e.g. "
                        "`service postgresql start`, or `docker run -p 5432:5432 -e "
                        "POSTGRES_HOST_AUTH_METHOD=trust postgres`) or set CEP_TEST_POSTGRES_URL")


def _postgres_database_url(name: str) -> str:
    return make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)


def _template_name() -> str:
    """The template of this schema: a run after a migration changed never takes an older
    one."""
    schema = hashlib.sha256()
    for path in sorted(MIGRATIONS_DIR.rglob("*.py")):
        schema.update(path.read_bytes())
    return f"cep_template_{schema.hexdigest()[:16]}"


@pytest.fixture(scope="session")
def postgres_template() -> Iterator[str]:
    """A database at the newest schema, migrated once for the test processes using it (xdist's
    workers, concurrent runs), that a test's database is copied from: `CREATE DATABASE ...
    TEMPLATE` costs a small part of a migration. It allows no connections, which a copy would
    refuse to start with. Two advisory locks: one exclusive while a process makes, or decides
    to drop, the template, and one each process holds shared while it may copy it; the last to
    let go of that one drops it, and a process that comes later makes it again."""
    name = _template_name()
    with _postgres_admin() as admin:
        making, using = admin.execute("SELECT hashtext(%s), hashtext(%s)",
                                      [f"{name} making", f"{name} using"]).fetchone()
        admin.execute("SELECT pg_advisory_lock(%s)", [making])
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s AND datistemplate",
                             [name]).fetchone():
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # left half made
            admin.execute(f'CREATE DATABASE "{name}"')
            db = Database(_postgres_database_url(name))
            db.migrate()
            db.dispose()
            admin.execute(f'ALTER DATABASE "{name}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false')
        admin.execute("SELECT pg_advisory_lock_shared(%s)", [using])
        admin.execute("SELECT pg_advisory_unlock(%s)", [making])
        yield name
        admin.execute("SELECT pg_advisory_unlock_shared(%s)", [using])
        admin.execute("SELECT pg_advisory_lock(%s)", [making])
        if admin.execute("SELECT pg_try_advisory_lock(%s)", [using]).fetchone()[0]:
            admin.execute(f'ALTER DATABASE "{name}" WITH IS_TEMPLATE false')
            admin.execute(f'DROP DATABASE "{name}"')


def _drop_database(name: str) -> None:
    with _postgres_admin() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def _postgres_database(template: str) -> Iterator[str]:
    """A fresh PostgreSQL database copied from `template`, dropped after the block."""
    name = f"cep_test_{secrets.token_hex(6)}"
    with _postgres_admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    yield _postgres_database_url(name)
    _drop_database(name)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test."""
    with _postgres_database("template1") as url:
        yield url


@pytest.fixture
def migrated_postgres_url(postgres_template) -> Iterator[str]:
    """A fresh PostgreSQL database of the newest schema for one test."""
    with _postgres_database(postgres_template) as url:
        yield url


DATABASES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=DATABASES)
def empty_database_url(request, tmp_path) -> str:
    """A database without tables: an SQLite file to be, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'cep.sqlite3'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    """An SQLite database of the newest schema in `tmp_path`, for a test that serves on no
    other database (opening an empty file would migrate it)."""
    return migrated_sqlite(tmp_path / "cep.sqlite3")


@pytest.fixture(params=DATABASES)
def database_url(request, tmp_path) -> str:
    """A database of the newest schema, as every launch leaves it (tests of the migrations
    themselves take `empty_database_url`)."""
    if request.param == "sqlite":
        return migrated_sqlite(tmp_path / "cep.sqlite3")
    return request.getfixturevalue("migrated_postgres_url")


@pytest.fixture
def open_conf(tmp_path):
    """Open a conf against a database the way `welcome.py` does, without the HTTP server."""
    opened: list[Database] = []

    def _open(conf: str, database_url: str, *overrides: str):
        loaded = load_run_config(conf, [f"database_url={database_url}",
                                        f"data_dir={tmp_path / 'data'}", *overrides])
        db = Database(database_url)
        opened.append(db)
        return open_task(loaded.config, str(loaded.path), db, build_blueprint(loaded.config))

    yield _open
    for db in opened:
        db.dispose()

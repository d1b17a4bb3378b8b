"""Shared fixtures: databases (SQLite and the local PostgreSQL), fixture paths, served tasks."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from helpers import REPO, migrated_sqlite
from sqlalchemy.engine import make_url

from collection_and_annotations.blueprints import build_blueprint
from collection_and_annotations.cli.run import open_task
from collection_and_annotations.config.loader import load_run_config
from collection_and_annotations.storage.database import Database

SHARED = REPO.parent / "shared"
CHROMIUM = Path("/usr/bin/chromium")
# Chromium's flags for this machine: no sandbox as root, no GPU, no calls to Google's hosts.
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
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


@pytest.fixture
def postgres_url():
    """A fresh, empty PostgreSQL database for one test."""
    name = f"cep_test_{secrets.token_hex(6)}"
    with _postgres_admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    with _postgres_admin() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
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


@pytest.fixture
def database_url(empty_database_url, request) -> str:
    """A database of the newest schema, as every launch leaves it (tests of the migrations
    themselves take `empty_database_url`)."""
    if empty_database_url.startswith("sqlite"):
        migrated_sqlite(Path(make_url(empty_database_url).database))
    else:
        db = Database(empty_database_url)
        db.migrate()
        db.dispose()
    return empty_database_url


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

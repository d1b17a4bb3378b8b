"""Storage: migrations match the models on both databases; SQLite runs in WAL mode."""

from __future__ import annotations

import json
import threading
import time

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text

from collection_and_annotations.storage.database import (
    MIGRATIONS_DIR,
    Database,
    default_url,
    schema_head,
)
from collection_and_annotations.storage.models import Base


def test_migrations_build_the_models_schema(empty_database_url):
    db = Database(empty_database_url)
    db.migrate()
    db.migrate()  # every start applies migrations: the second time is a no-op
    with db.engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
        version = connection.scalar(text("select version_num from alembic_version"))
        free_index = connection.scalar(text(
            "SELECT sql FROM sqlite_master WHERE name = 'ix_units_free'"
            if connection.dialect.name == "sqlite" else
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_units_free'"))
    db.dispose()
    assert diff == []
    # a start at schema_head() skips Alembic: it must be the newest migration
    assert version == schema_head() == ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()
    # compare_metadata skips partial index conditions: the claim's index checked here.
    assert "claim_order" in free_index and "'launched'" in free_index


def test_sqlite_default_is_wal_under_data_dir(tmp_path):
    url = default_url(tmp_path / "nested" / "data")
    assert url.endswith("nested/data/cep.sqlite3")
    db = Database(url)
    db.migrate()
    with db.session() as session:
        assert session.scalar(text("PRAGMA journal_mode")) == "wal"
    assert db.setting("secret") == db.setting("secret")
    db.dispose()


# A task with a run and one assignment (ids 1), as a release's schema stores them.
ONE_TASK = (
    "INSERT INTO tasks (id, name, blueprint, created_at) VALUES (1, 't', 's', "
    "'2026-01-01 00:00:00')",
    "INSERT INTO task_runs (id, task_id, config, status, created_at) VALUES "
    "(1, 1, '{}', 'stopped', '2026-01-01 00:00:00')",
    "INSERT INTO assignments (id, task_id, key, data, created_at) VALUES "
    "(1, 1, 'k', '{}', '2026-01-01 00:00:00')",
)


def _migrate_to(db: Database, revision: str) -> None:
    from alembic import command
    from alembic.config import Config

    from collection_and_annotations.storage.database import MIGRATIONS_DIR

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    with db.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def test_upgrade_from_0001_keeps_drafts_and_rekeys_assignments_by_content(empty_database_url):
    """A database of the first release: its assignments get the content keys a new plan
    computes (so a rerun on the same data reports no change), and its drafts survive."""
    from collection_and_annotations.blueprints.static_annotation.task_data import content_key

    db = Database(empty_database_url)
    _migrate_to(db, "0001")
    source = {"dialogue_id": "d1", "group_id": "g1", "annotation_tasks": ["relevance"],
              "turns": [["user", "hi"], ["system", "hello"]]}
    with db.engine.begin() as connection:
        for statement in (
            "INSERT INTO tasks (id, name, blueprint, created_at) VALUES (1, 't', 's', "
            "'2026-01-01 00:00:00')",
            "INSERT INTO task_runs (id, task_id, config, status, created_at) VALUES "
            "(1, 1, '{}', 'stopped', '2026-01-01 00:00:00')",
            "INSERT INTO workers (id, provider, provider_worker_id, pseudonym, created_at) "
            "VALUES (1, 'local', 'w1', 'w_1', '2026-01-01 00:00:00')",
            "INSERT INTO units (id, public_id, assignment_id, task_run_id, status, worker_id, "
            "times_expired) VALUES (1, 'u_1', 1, 1, 'assigned', 1, 0)",
            "INSERT INTO drafts (unit_id, worker_id, answers, saved_at) VALUES "
            "(1, 1, '{\"a\": 1}', '2026-01-01 00:00:00')",
        ):
            if statement.startswith("INSERT INTO units"):
                connection.execute(text(
                    "INSERT INTO assignments (id, task_id, key, data, created_at) VALUES "
                    "(1, 1, 'identity-hash', :data, '2026-01-01 00:00:00')"),
                    {"data": json.dumps({"dialogues": [{"key": "d_x", "source": source}]})})
            connection.execute(text(statement))
    db.migrate()
    with db.engine.connect() as connection:
        assert connection.scalar(text("SELECT key FROM assignments")) == content_key([source])
        assert connection.execute(text("SELECT unit_id, worker_id FROM drafts")).all() == [
            (1, 1)]
        assert connection.scalar(text("SELECT pool FROM units")) == "main"
    db.dispose()


def test_units_of_earlier_runs_get_a_random_claim_order(empty_database_url):
    """A database of release 0007: its units, served in id order then, get random keys."""
    db = Database(empty_database_url)
    _migrate_to(db, "0007")
    with db.engine.begin() as connection:
        for statement in ONE_TASK:
            connection.execute(text(statement))
        for unit in range(1, 41):
            connection.execute(text(
                "INSERT INTO units (id, public_id, assignment_id, task_run_id, status, "
                "times_expired, pool) VALUES (:id, :public, 1, 1, 'launched', 0, 'main')"),
                {"id": unit, "public": f"u_{unit}"})
    db.migrate()
    with db.engine.connect() as connection:
        ids = connection.scalars(text("SELECT id FROM units ORDER BY claim_order")).all()
    db.dispose()
    assert sorted(ids) == list(range(1, 41)) and ids != sorted(ids)


def test_training_checks_of_an_earlier_worker_stay_with_their_attempt(empty_database_url):
    """A database of release 0008, where a training unit's checks were kept per unit: the
    checks of a worker who lost the unit become their attempt, the holder's stay theirs."""
    db = Database(empty_database_url)
    _migrate_to(db, "0008")
    with db.engine.begin() as connection:
        for statement in (
            *ONE_TASK,
            "INSERT INTO workers (id, provider, provider_worker_id, pseudonym, created_at) "
            "VALUES (1, 'local', 'w1', 'w_1', '2026-01-01 00:00:00'), "
            "(2, 'local', 'w2', 'w_2', '2026-01-01 00:00:00')",
            # unit 1 went from worker 1 to worker 2; unit 2 is worker 1's on its third try
            "INSERT INTO units (id, public_id, assignment_id, task_run_id, status, worker_id, "
            "times_expired, pool) VALUES (1, 'u_1', 1, 1, 'assigned', 2, 1, 'screening'), "
            "(2, 'u_2', 1, 1, 'assigned', 1, 2, 'screening')",
            "INSERT INTO unit_scores (unit_id, worker_id, task_id, pool, checks) VALUES "
            "(1, 1, 1, 'screening', '{\"d\": {\"first_mistakes\": 3}}'), "
            "(2, 1, 1, 'screening', '{}')",
        ):
            connection.execute(text(statement))
    db.migrate()
    with db.engine.connect() as connection:
        rows = connection.execute(text(
            "SELECT unit_id, attempt, worker_id FROM unit_scores ORDER BY unit_id")).all()
    db.dispose()
    assert rows == [(1, 0, 1), (2, 2, 1)]


def test_read_then_write_steps_of_two_processes_on_one_sqlite_file_both_commit(tmp_path):
    """Two servers on one SQLite file (one Database each, as two processes have), each step
    reading then writing: the second waits for the first's write lock and commits, never
    'database is locked' from a read transaction that would have to upgrade. Fails loudly if
    SQLAlchemy stops beginning the transactions IMMEDIATE for us."""
    url = default_url(tmp_path)
    first, second = Database(url), Database(url)
    first.migrate()
    go = threading.Event()
    errors: list[BaseException] = []

    def step(db: Database, key: str) -> None:
        go.wait(10)
        try:
            with db.transaction() as connection:
                connection.execute(text("SELECT count(*) FROM settings")).scalar()
                time.sleep(0.2)  # the other step begins meanwhile
                connection.execute(text("INSERT INTO settings (key, value) VALUES (:k, 'x')"),
                                   {"k": key})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=step, args=(db, key))
               for db, key in ((first, "a"), (second, "b"))]
    for thread in threads:
        thread.start()
    go.set()
    for thread in threads:
        thread.join(30)
    with first.snapshot() as connection:
        stored = connection.execute(text("SELECT key FROM settings ORDER BY key")).scalars()
        keys = [key for key in stored if key in ("a", "b")]
    first.dispose()
    second.dispose()
    assert not errors and keys == ["a", "b"], errors

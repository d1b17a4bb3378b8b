"""Storage: migrations match the models on both databases; SQLite runs in WAL mode."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from collection_and_annotations.storage.database import Database, default_url
from collection_and_annotations.storage.models import Base


def test_migrations_build_the_models_schema(database_url):
    db = Database(database_url)
    db.migrate()
    db.migrate()  # every start applies migrations: the second time is a no-op
    with db.engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
        version = connection.scalar(text("select version_num from alembic_version"))
    db.dispose()
    assert diff == []
    assert version == "0004"


def test_sqlite_default_is_wal_under_data_dir(tmp_path):
    url = default_url(tmp_path / "nested" / "data")
    assert url.endswith("nested/data/cep.sqlite3")
    db = Database(url)
    db.migrate()
    with db.session() as session:
        assert session.scalar(text("PRAGMA journal_mode")) == "wal"
    assert db.setting("secret") == db.setting("secret")
    db.dispose()

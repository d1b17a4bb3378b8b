"""`python -m collection_and_annotations quals list|grant|revoke|block|unblock`: manage
qualifications and blocks without touching the database by hand."""

from __future__ import annotations

from pathlib import Path

import click

from collection_and_annotations.quality import qualifications
from collection_and_annotations.storage.database import Database, default_url


def _database(data_dir: str, database_url: str | None) -> Database:
    if database_url is None and not (Path(data_dir) / "cep.sqlite3").is_file():
        raise click.ClickException(f"no database in {data_dir}; pass --data-dir or --database-url")
    db = Database(database_url or default_url(data_dir))
    db.migrate()
    return db


def _db_options(command):
    command = click.option("--data-dir", default="./data", show_default=True,
                           help="data_dir of the runs (for the default SQLite database)")(command)
    command = click.option("--database-url", default=None,
                           help="database_url of the runs, if one was set")(command)
    return click.option("--provider", default="local", show_default=True,
                        help="the provider the worker id belongs to")(command)


@click.group()
def quals() -> None:
    """List, grant and revoke qualifications; block and unblock workers."""


@quals.command("list")
@click.option("--name", default=None, help="only this qualification")
@click.option("--worker", default=None, help="only this worker (provider worker id)")
@_db_options
def list_(name: str | None, worker: str | None, data_dir: str, database_url: str | None,
          provider: str) -> None:
    """One line per granted qualification: name, worker, value, when."""
    db = _database(data_dir, database_url)
    with db.transaction() as connection:
        rows = qualifications.grants(connection, name, worker)
    for row in rows:
        click.echo(f"{row.qualification}\t{row.provider}:{row.provider_worker_id}\t"
                   f"{row.value}\t{row.granted_at.isoformat()}Z")
    click.echo(f"{len(rows)} granted", err=True)
    db.dispose()


def _change(name: str, worker: str, value: int | None, data_dir: str,
            database_url: str | None, provider: str) -> None:
    """Grant (value set) or revoke (None) one qualification of one worker."""
    db = _database(data_dir, database_url)
    try:
        with db.transaction() as connection:
            click.echo(qualifications.change(connection, provider, worker, name, value))
    except qualifications.NotChanged as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        db.dispose()


@quals.command()
@click.argument("name")
@click.argument("worker")
@click.option("--value", default=1, show_default=True, type=int)
@_db_options
def grant(name: str, worker: str, value: int, data_dir: str, database_url: str | None,
          provider: str) -> None:
    """Grant qualification NAME to WORKER (provider worker id)."""
    _change(name, worker, value, data_dir, database_url, provider)


@quals.command()
@click.argument("name")
@click.argument("worker")
@_db_options
def revoke(name: str, worker: str, data_dir: str, database_url: str | None,
           provider: str) -> None:
    """Revoke qualification NAME from WORKER."""
    _change(name, worker, None, data_dir, database_url, provider)


def _block_qualification(db: Database, task: str | None, name: str | None) -> str:
    if bool(task) == bool(name):
        raise click.ClickException("name the block with --task TASK (its conf's "
                                   "block_qualification) or --name QUALIFICATION")
    if name:
        return name
    with db.snapshot() as connection:
        found = qualifications.task_block_name(connection, str(task))
    if found is None:
        raise click.ClickException(f"no task '{task}' in this database")
    return found


@quals.command()
@click.argument("worker")
@click.option("--task", default=None, help="block in this task (and every task sharing its "
                                           "block qualification)")
@click.option("--name", default=None, help="the block qualification's name")
@_db_options
def block(worker: str, task: str | None, name: str | None, data_dir: str,
          database_url: str | None, provider: str) -> None:
    """Block WORKER: they get no more units where the block qualification applies."""
    db = _database(data_dir, database_url)
    qualification = _block_qualification(db, task, name)
    db.dispose()
    _change(qualification, worker, 1, data_dir, database_url, provider)


@quals.command()
@click.argument("worker")
@click.option("--task", default=None)
@click.option("--name", default=None)
@_db_options
def unblock(worker: str, task: str | None, name: str | None, data_dir: str,
            database_url: str | None, provider: str) -> None:
    """Lift a block (see `block`)."""
    db = _database(data_dir, database_url)
    qualification = _block_qualification(db, task, name)
    db.dispose()
    _change(qualification, worker, None, data_dir, database_url, provider)

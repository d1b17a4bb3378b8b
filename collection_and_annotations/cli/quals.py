"""`python -m collection_and_annotations quals list|grant|revoke|block|unblock`: manage
qualifications and blocks without touching the database by hand."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from collection_and_annotations.cli.database_options import database_options, stored_database_url
from collection_and_annotations.quality import qualifications
from collection_and_annotations.storage.database import Database


@contextmanager
def _database(data_dir: str, database_url: str | None) -> Iterator[Database]:
    db = Database(stored_database_url(data_dir, database_url))
    try:
        db.migrate()
        yield db
    finally:
        db.dispose()


def _db_options(command):
    return click.option("--provider", default="local", show_default=True,
                        help="the provider the worker id belongs to")(database_options(command))


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
    with _database(data_dir, database_url) as db, db.transaction() as connection:
        rows = qualifications.grants(connection, name, worker)
    for row in rows:
        click.echo(f"{row.qualification}\t{row.provider}:{row.provider_worker_id}\t"
                   f"{row.value}\t{row.granted_at.isoformat()}Z")
    click.echo(f"{len(rows)} granted", err=True)


def _change(db: Database, name: str, worker: str, value: int | None, provider: str) -> None:
    """Grant (value set) or revoke (None) one qualification of one worker."""
    try:
        with db.transaction() as connection:
            click.echo(qualifications.change(connection, provider, worker, name, value))
    except qualifications.NotChanged as exc:
        raise click.ClickException(str(exc)) from None


@quals.command()
@click.argument("name")
@click.argument("worker")
@click.option("--value", default=1, show_default=True, type=int)
@_db_options
def grant(name: str, worker: str, value: int, data_dir: str, database_url: str | None,
          provider: str) -> None:
    """Grant qualification NAME to WORKER (provider worker id)."""
    with _database(data_dir, database_url) as db:
        _change(db, name, worker, value, provider)


@quals.command()
@click.argument("name")
@click.argument("worker")
@_db_options
def revoke(name: str, worker: str, data_dir: str, database_url: str | None,
           provider: str) -> None:
    """Revoke qualification NAME from WORKER."""
    with _database(data_dir, database_url) as db:
        _change(db, name, worker, None, provider)


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


def _block_options(command):
    command = click.option("--name", default=None,
                           help="the block qualification's name")(_db_options(command))
    return click.option("--task", default=None, help="block in this task (and every task "
                        "sharing its block qualification)")(command)


def _set_block(worker: str, task: str | None, name: str | None, value: int | None,
               data_dir: str, database_url: str | None, provider: str) -> None:
    with _database(data_dir, database_url) as db:
        _change(db, _block_qualification(db, task, name), worker, value, provider)


@quals.command()
@click.argument("worker")
@_block_options
def block(worker: str, task: str | None, name: str | None, data_dir: str,
          database_url: str | None, provider: str) -> None:
    """Block WORKER: they get no more units where the block qualification applies."""
    _set_block(worker, task, name, 1, data_dir, database_url, provider)


@quals.command()
@click.argument("worker")
@_block_options
def unblock(worker: str, task: str | None, name: str | None, data_dir: str,
            database_url: str | None, provider: str) -> None:
    """Lift a block (see `block`)."""
    _set_block(worker, task, name, None, data_dir, database_url, provider)

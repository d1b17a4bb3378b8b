"""The `--data-dir` / `--database-url` options every command that reads stored runs takes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from collection_and_annotations.storage.database import default_url

F = TypeVar("F", bound=Callable[..., object])


def database_options(command: F) -> F:
    command = click.option("--data-dir", default="./data", show_default=True,
                           help="data_dir of the runs (for the default SQLite database)")(command)
    return click.option("--database-url", default=None,
                        help="database_url of the runs, if one was set")(command)


def stored_database_url(data_dir: str, database_url: str | None) -> str:
    """The runs' database; a clear error when there is none (never an empty new one)."""
    if database_url is None and not (Path(data_dir) / "cep.sqlite3").is_file():
        raise click.ClickException(f"no database in {Path(data_dir).expanduser().resolve()} "
                                   f"(--data-dir {data_dir}); pass the data_dir the task ran "
                                   "with as --data-dir, or its --database-url")
    if database_url is not None:
        _check_holds_runs(database_url)
    return database_url or default_url(data_dir)


def _check_holds_runs(url: str) -> None:
    """A --database-url that is not there, cannot be reached or holds no runs is refused
    before anything reads it (SQLite would otherwise create an empty file)."""
    from sqlalchemy import create_engine, inspect, make_url
    from sqlalchemy.exc import ArgumentError, DBAPIError

    from collection_and_annotations.storage.sql import first_line

    try:
        parsed = make_url(url)
    except ArgumentError:
        raise click.BadParameter(f"{url!r} is not a database URL (e.g. "
                                 "postgresql://user@host/db or sqlite:////path/cep.sqlite3)",
                                 param_hint="--database-url") from None
    shown = parsed.render_as_string(hide_password=True)
    if (parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:")
            and not Path(parsed.database).is_file()):
        raise click.ClickException(f"no SQLite database at {parsed.database} (--database-url "
                                   f"{shown}); pass the database_url the task ran with")
    engine = create_engine(parsed)
    try:
        with engine.connect() as connection:
            holds_runs = inspect(connection).has_table("tasks")
    except DBAPIError as exc:
        raise click.ClickException(f"cannot read the database {shown}: {first_line(exc)}; check "
                                   "--database-url") from None
    finally:
        engine.dispose()
    if not holds_runs:
        raise click.ClickException(f"the database {shown} holds no runs of this platform; pass "
                                   "the database_url the task ran with as --database-url")

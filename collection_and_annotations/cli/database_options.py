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
    return database_url or default_url(data_dir)

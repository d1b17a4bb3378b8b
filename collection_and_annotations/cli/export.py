"""`python -m collection_and_annotations export --task NAME --format jsonl|csv|submissions`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from collection_and_annotations.cli.database_options import database_options, stored_database_url
from collection_and_annotations.export.submissions import (
    UnknownTask,
    whole_submissions,
)
from collection_and_annotations.export.writers import write_export
from collection_and_annotations.storage.database import Database


@click.command()
@click.option("--task", "task_name", required=True, help="task_name of the conf")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "submissions"]),
              default="jsonl", show_default=True,
              help="jsonl/csv: one row per answered item; submissions: JSONL of whole submissions")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="file to write (default: standard output)")
@database_options
@click.option("--exclude-quality", is_flag=True,
              help="leave out screening (training) and gold units: real work only")
def export(task_name: str, fmt: str, output: Path | None, data_dir: str,
           database_url: str | None, exclude_quality: bool) -> None:
    """Export a task's submissions."""
    db = Database(stored_database_url(data_dir, database_url))
    out = output.open("w", encoding="utf-8", newline="") if output else sys.stdout
    try:
        kind = {"jsonl": "items-jsonl", "csv": "items-csv"}.get(fmt, fmt)
        records = whole_submissions(db, task_name, exclude_quality=exclude_quality)
        count = write_export(records, kind, out)
    except UnknownTask as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        if output:
            out.close()
        db.dispose()
    click.echo(f"exported {count} {'submissions' if fmt == 'submissions' else 'rows'}",
               err=True)

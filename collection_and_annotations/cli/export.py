"""`python -m collection_and_annotations export --task NAME --format FORMAT`: answers or chats."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from collection_and_annotations.cli.database_options import database_options, stored_database_url
from collection_and_annotations.export.identities import identities
from collection_and_annotations.export.submissions import (
    UnknownTask,
    whole_submissions,
)
from collection_and_annotations.export.writers import csv_option_columns, write_export
from collection_and_annotations.storage.database import Database


@click.command()
@click.option("--task", "task_name", required=True, help="task_name of the conf")
@click.option("--format", "fmt",
              type=click.Choice(["jsonl", "csv", "submissions", "dialogues", "identities",
                                 "battles"]),
              default="jsonl", show_default=True,
              help="jsonl/csv: one row per answered item; submissions: JSONL of whole "
                   "submissions; dialogues: collected chats as task data JSONL (with --output); "
                   "identities: pseudonym -> provider worker id, JSONL (for paying); "
                   "battles: an arena's votes in Chatbot Arena's battle format, JSONL")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="file to write (default: standard output)")
@database_options
@click.option("--exclude-quality", is_flag=True,
              help="leave out screening (training) and gold units: real work only")
@click.option("--include-judges", is_flag=True,
              help="add the answers of LLM judges (pool `judge`, field `judge`: its nickname; "
                   "docs/judges.md)")
@click.option("--annotation-tasks", default="",
              help="dialogues: the buckets each dialogue is to be annotated with, comma-separated")
@click.option("--annotators", type=click.IntRange(min=1), default=1, show_default=True,
              help="dialogues: annotators per dialogue, written to <output stem>_units.json")
def export(task_name: str, fmt: str, output: Path | None, data_dir: str,
           database_url: str | None, exclude_quality: bool, include_judges: bool,
           annotation_tasks: str, annotators: int) -> None:
    """Export a task's submissions, or the dialogues it collected."""
    if fmt == "dialogues":
        _export_dialogues(task_name, output, data_dir, database_url, annotation_tasks,
                          annotators)
        return
    db = Database(stored_database_url(data_dir, database_url))
    out = output.open("w", encoding="utf-8", newline="") if output else sys.stdout
    try:
        if fmt == "identities":
            rows = identities(db, task_name)
            out.writelines(json.dumps(row) + "\n" for row in rows)
            click.echo(f"exported {len(rows)} workers", err=True)
            return
        if fmt == "battles":
            from collection_and_annotations.export.battles import battles

            count = sum(out.write(json.dumps(row) + "\n") > 0 for row in battles(db, task_name))
            click.echo(f"exported {count} battles", err=True)
            return
        kind = {"jsonl": "items-jsonl", "csv": "items-csv"}.get(fmt, fmt)
        records = whole_submissions(db, task_name, exclude_quality=exclude_quality,
                                    judges="with" if include_judges else "without")
        columns = csv_option_columns(db, task_name) if kind == "items-csv" else ()
        count = write_export(records, kind, out, columns)
    except UnknownTask as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        if output:
            out.close()
        db.dispose()
    click.echo(f"exported {count} {'submissions' if fmt == 'submissions' else 'rows'}",
               err=True)


def _export_dialogues(task_name: str, output: Path | None, data_dir: str,
                      database_url: str | None, annotation_tasks: str, annotators: int) -> None:
    # the chat engine loads only for this format
    from collection_and_annotations.export.dialogues import units_file, write_dialogues

    tasks = [name.strip() for name in annotation_tasks.split(",") if name.strip()]
    if output is None or not tasks:
        raise click.UsageError("--format dialogues writes task data and its units file: give "
                               "--output FILE.jsonl and --annotation-tasks bucket1,bucket2 (the "
                               "buckets the annotation task will ask about)")
    db = Database(stored_database_url(data_dir, database_url))
    try:
        count = write_dialogues(db, task_name, output, tasks, annotators)
    except UnknownTask as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        db.dispose()
    click.echo(f"exported {count} dialogues to {output} (annotators per dialogue: "
               f"{units_file(output)})", err=True)

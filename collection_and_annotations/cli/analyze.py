"""`python -m collection_and_annotations analyze --task NAME ... --output report.html
--json results.json`."""

from __future__ import annotations

import json
from pathlib import Path

import click
from tqdm import tqdm

from collection_and_annotations.analysis.arena import add_leaderboard
from collection_and_annotations.analysis.behaviours import BehaviourFileError, load_behaviours
from collection_and_annotations.analysis.chat_logs import ChatLog, database_chat_logs
from collection_and_annotations.analysis.judges import JudgeData, without_judges
from collection_and_annotations.analysis.load import (
    Tables,
    add_records,
    database_records,
    file_records,
    read_buckets,
)
from collection_and_annotations.analysis.multiplicity import METHODS
from collection_and_annotations.analysis.report import render_report
from collection_and_annotations.analysis.results import STEPS, Settings, compute_results
from collection_and_annotations.cli.database_options import database_options, stored_database_url
from collection_and_annotations.errors import UserError
from collection_and_annotations.export.submissions import UnknownTask
from collection_and_annotations.export.writers import json_safe


@click.command()
@click.option("--task", "tasks", multiple=True, help="task_name to analyse (repeatable)")
@click.option("--by", default="bot", show_default=True,
              help="task data field naming a dialogue's bot (`<by>2` for a comparison's turns2)")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="HTML report to write")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="results.json to write")
@click.option("--from", "from_file", type=click.Path(dir_okay=False, exists=True,
                                                     path_type=Path),
              help="an `export --format submissions` file instead of the database")
@click.option("--buckets", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="annotation_buckets.json of the answers (needed with --from)")
@click.option("--behaviours", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="extra behaviour derivations (JSON, the shape of analysis/behaviours.json)")
@click.option("--resamples", default=1000, show_default=True, type=click.IntRange(0),
              help="bootstrap resamples per interval")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--confidence", default=0.95, show_default=True,
              type=click.FloatRange(0, 1, min_open=True, max_open=True))
@click.option("--adjust", type=click.Choice(sorted(METHODS)), default="holm",
              show_default=True,
              help="p-value adjustment across the report's tests: holm (family-wise error "
                   "rate) or bh (Benjamini-Hochberg, false discovery rate)")
@click.option("--max-failed-golds", default=0, show_default=True, type=click.IntRange(0),
              help="failed gold units a worker may have before the results without flagged "
                   "workers leave all their work out (the task's max_incorrect_golds)")
@database_options
def analyze(tasks: tuple[str, ...], by: str, output: Path | None, json_path: Path | None,
            from_file: Path | None, buckets: Path | None, behaviours: Path | None,
            resamples: int, seed: int, confidence: float, adjust: str, max_failed_golds: int,
            data_dir: str, database_url: str | None) -> None:
    """Results of a task's answers: results.json and a self-contained HTML report."""
    if output is None and json_path is None:
        raise click.UsageError("nothing to write: pass --output and/or --json")
    try:
        if from_file is not None:
            if buckets is None:
                raise click.UsageError("--from needs --buckets (the annotation_buckets.json)")
            records = file_records(from_file, read_buckets(buckets), list(tasks) or None)
            source = f"file {from_file.name}"
            logs: list[ChatLog] | None = None
        else:
            if not tasks:
                raise click.UsageError("pass --task (or --from an export file)")
            url = stored_database_url(data_dir, database_url)
            records = database_records(url, list(tasks))
            logs = database_chat_logs(url, list(tasks))
            source = "database"
        mapping = load_behaviours(behaviours)
        judges: dict[str, JudgeData] = {}  # LLM judges' answers: their own section
        with tqdm(records, desc="reading submissions", unit=" submissions", disable=None,
                  leave=False) as bar:
            tables = add_records(Tables(), without_judges(bar, judges, by), by=by)
    except (UnknownTask, BehaviourFileError, UserError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    settings = Settings(tasks=sorted(tasks), by=by, seed=seed, resamples=resamples,
                        confidence=confidence, source=source, max_failed_golds=max_failed_golds,
                        adjust=adjust)
    with tqdm(total=STEPS, desc="analysing", disable=None, leave=False) as bar:
        def step(name: str) -> None:
            bar.set_postfix_str(name)
            bar.update(1)

        results = json_safe(compute_results(tables, mapping, settings, step, logs, judges))
    if from_file is None:  # an arena's leaderboard, from its battles (docs/arena.md)
        add_leaderboard(results, url, tasks, resamples, seed, confidence)
    if json_path:
        json_path.write_text(json.dumps(results, indent=1, ensure_ascii=False,
                                         allow_nan=False) + "\n", encoding="utf-8")
    if output:
        output.write_text(render_report(results), encoding="utf-8")
    chats = f", {len(logs)} collected chats" if logs else ""
    judged = "".join(f"; judge {name}: {data.tables.records} submissions"
                     for name, data in sorted(judges.items()))
    click.echo(f"analysed {tables.records} submissions ({tables.rows} answer rows{chats})"
               f"{judged}", err=True)

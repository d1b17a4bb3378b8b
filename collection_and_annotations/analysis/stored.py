"""A stored task's results and report in one call: what the dashboard's report link serves
(`analyze --task` does the same with progress bars and files)."""

from __future__ import annotations

from collections.abc import Callable

from collection_and_annotations.analysis.arena import add_leaderboard
from collection_and_annotations.analysis.behaviours import load_behaviours
from collection_and_annotations.analysis.chat_logs import database_chat_logs
from collection_and_annotations.analysis.judges import JudgeData, without_judges
from collection_and_annotations.analysis.load import Tables, add_records, database_records
from collection_and_annotations.analysis.report import render_report
from collection_and_annotations.analysis.results import STEPS, Settings, compute_results
from collection_and_annotations.export.writers import json_safe

REPORT_STEPS = STEPS + 2  # reading the answers, the analysis's steps, writing the report


def stored_report(database_url: str, task_name: str, max_failed_golds: int = 0,
                  progress: Callable[[str], None] | None = None) -> str:
    """The HTML report of one task's stored answers and chats, with `analyze`'s defaults
    (bots read from `bot`, 1,000 resamples, seed 0): the same figures the CLI prints.
    `progress(step name)` is called as each of REPORT_STEPS begins."""
    step = progress or (lambda name: None)
    settings = Settings(tasks=[task_name], max_failed_golds=max_failed_golds)
    judges: dict[str, JudgeData] = {}
    step("reading the answers")
    tables = add_records(Tables(), without_judges(database_records(database_url, [task_name]),
                                                  judges, settings.by), by=settings.by)
    logs = database_chat_logs(database_url, [task_name])
    results = compute_results(tables, load_behaviours(None), settings, step, logs=logs,
                              judges=judges)
    step("writing the report")
    results = json_safe(results)
    add_leaderboard(results, database_url, [task_name], settings.resamples, settings.seed,
                    settings.confidence)
    return render_report(results, title=f"Evaluation results: {task_name}")

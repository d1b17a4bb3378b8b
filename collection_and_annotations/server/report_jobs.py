"""The dashboard's analysis report, computed once per data version in a process of its own
and kept: a second open of an unchanged task is instant, and the page can show how far a
computation got.

The data version is what the report reads changing: a submission added (or flagged later),
a review decision made. A computation runs in a spawned process (seconds to a minute of
statistics must not hold this server's interpreter while workers wait) that sends its steps
and then the report back through a queue.
"""

from __future__ import annotations

import multiprocessing
import threading
import traceback
from dataclasses import dataclass, field
from queue import Empty
from typing import Any

from sqlalchemy import func, select

from collection_and_annotations.engine.runs import task_units
from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.storage.models import ReviewDecision, Submission

Version = tuple[Any, ...]


@dataclass
class ReportJob:
    """One computation of the report for one data version."""

    version: Version
    step: str = "starting"
    done: int = 0  # steps begun
    total: int = 0
    html: str | None = None
    error: str | None = None
    finished: threading.Event = field(default_factory=threading.Event)

    def shown(self, current: Version) -> dict[str, Any]:
        """`{"state": "running"|"ready"|"failed", "step", "done", "total", "error",
        "current"}`: `current` says whether it is the report of the data as it is now."""
        state = "running" if not self.finished.is_set() else (
            "failed" if self.error else "ready")
        return {"state": state, "step": self.step, "done": self.done, "total": self.total,
                "error": self.error, "current": self.version == current}


_jobs: dict[tuple[str, str], ReportJob] = {}
_lock = threading.Lock()


def data_version(task: ServedTask) -> Version:
    """What the report of the task depends on, as a few numbers."""
    units = task_units(task.task_id)
    with task.db.read() as session:
        submissions = session.execute(
            select(func.max(Submission.id), func.count(),
                   func.count().filter(Submission.flagged_for_review))
            .where(Submission.unit_id.in_(units))).one()
        decisions = session.execute(select(func.max(ReviewDecision.id), func.count())
                                    .where(ReviewDecision.unit_id.in_(units))).one()
    return tuple(submissions) + tuple(decisions)


def report_job(task: ServedTask) -> tuple[ReportJob, Version]:
    """The job of the data as it is now (kept, running, or started), and that version. A
    job of an older version still running is left to finish first: one computation per task
    at a time."""
    from collection_and_annotations.analysis.stored import REPORT_STEPS

    current = data_version(task)
    key = (str(task.db.engine.url), task.task_name)
    with _lock:
        job = _jobs.get(key)
        if job is None or (job.version != current and job.finished.is_set()):
            job = _jobs[key] = ReportJob(current, total=REPORT_STEPS)
            threading.Thread(target=_run, args=(job, task), daemon=True,
                             name=f"report-{task.task_name}").start()
    return job, current


def _run(job: ReportJob, task: ServedTask) -> None:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_compute, daemon=True, args=(
        queue, task.db.url, task.task_name, task.blueprint.max_incorrect_golds()))
    process.start()
    try:
        while True:
            try:
                kind, value = queue.get(timeout=1.0)
            except Empty:
                if process.is_alive():
                    continue
                job.error = f"the report's process stopped (exit code {process.exitcode})"
                return
            if kind == "step":
                job.step, job.done = value, job.done + 1
            elif kind == "html":
                job.html = value
                return
            else:
                job.error = value
                return
    finally:
        process.join()
        job.finished.set()


def _compute(queue: Any, database_url: str, task_name: str, max_failed_golds: int) -> None:
    """Runs in the report's process: only it loads the statistics and plotting libraries."""
    from collection_and_annotations.analysis.stored import stored_report

    try:
        html = stored_report(database_url, task_name, max_failed_golds,
                             lambda name: queue.put(("step", name)))
    except Exception as exc:  # noqa: BLE001 (the server says why instead of hanging)
        traceback.print_exc()
        queue.put(("error", f"{type(exc).__name__}: {exc}"))
    else:
        queue.put(("html", html))

"""Read a task's submissions from the database and flatten them into answered items.

Submissions are read in pages of short read transactions (keyset on the submission id, up to the
newest id when the export starts): an export of any size never holds a transaction while it
writes its file, so workers submitting at the same time never wait for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from sqlalchemy import func, select

from collection_and_annotations.blueprints.base import JUDGE_POOL, QUALITY_POOLS, ExportReader
from collection_and_annotations.blueprints.registry import blueprint_class
from collection_and_annotations.blueprints.static_annotation.export_rows import ITEM_FIELDS
from collection_and_annotations.blueprints.static_annotation.speaker_names import display_names
from collection_and_annotations.engine.judge_work import JUDGE_PREFIX
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import (
    Assignment,
    ReviewDecision,
    Submission,
    Task,
    TaskRun,
    Unit,
    UnitScore,
    Worker,
    iso_utc,
)

__all__ = ["ITEM_FIELDS", "UnknownTask", "answered_items", "whole_submissions"]
PAGE_SIZE = 500
Judges = Literal["without", "with", "only"]  # which submissions of LLM judges to read


class UnknownTask(LookupError):
    pass


def find_task(db: Database, task_name: str) -> Task:
    with db.read() as session:
        task = session.scalars(select(Task).where(Task.name == task_name)).first()
        if task is None:
            known = ", ".join(session.scalars(select(Task.name).order_by(Task.name))) or "none"
            raise UnknownTask(f"no task named '{task_name}' in this database (tasks: {known})")
        return task


def whole_submissions(
    db: Database, task_name: str, page_size: int = PAGE_SIZE, exclude_quality: bool = False,
    ids: tuple[int, int | None] = (0, None), judges: Judges = "without",
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Each submission with its dialogues' own ids and the unit's layout, and the definitions
    (buckets) of its run. Each says which pool its unit came from (`main`, `screening`,
    `gold`) and, for screening and gold, its score; `exclude_quality` keeps real work only.
    `ids`: only submissions with `first < id <= last` (last None: the newest now), for
    readers that catch up on what arrived since they last read. `judges`: an LLM judge's
    submissions (pool `judge`, with `judge`: its nickname) are left out unless asked for."""
    task = find_task(db, task_name)
    reader: ExportReader = blueprint_class(task.blueprint)
    query = (
        select(Submission, Unit.public_id, Unit.layout, Worker.pseudonym, Assignment.data,
               Unit.pool, UnitScore.mistakes, UnitScore.passed, ReviewDecision,
               Worker.provider_worker_id, TaskRun.id)
        .join(Unit, Submission.unit_id == Unit.id)
        .join(Assignment, Unit.assignment_id == Assignment.id)
        .join(Worker, Submission.worker_id == Worker.id)
        .join(TaskRun, Submission.task_run_id == TaskRun.id)
        .outerjoin(UnitScore, (UnitScore.unit_id == Unit.id)
                   & (UnitScore.attempt == Unit.times_expired))
        .outerjoin(ReviewDecision, ReviewDecision.unit_id == Unit.id)
        .where(Assignment.task_id == task.id)
        .order_by(Submission.id)
        .limit(page_size)
    )
    if exclude_quality:
        query = query.where(Unit.pool.not_in(QUALITY_POOLS))
    if judges != "with":
        query = query.where((Unit.pool == JUDGE_POOL) if judges == "only"
                            else (Unit.pool != JUDGE_POOL))
    definitions: dict[int, dict[str, Any]] = {}
    names: dict[int, dict[str, str]] = {}
    after, newest = ids
    if newest is None:
        with db.read() as session:
            newest = session.scalar(select(func.max(Submission.id))) or 0
    while after < newest:
        with db.read() as session:
            rows = session.execute(
                query.where(Submission.id > after, Submission.id <= newest)).all()
            missing = {run_id for *_, run_id in rows} - definitions.keys()
            if missing:  # a run's definitions are read once, on its first page
                for run_id, config in session.execute(
                    select(TaskRun.id, TaskRun.config).where(TaskRun.id.in_(missing))
                ):
                    definitions[run_id] = config.get("buckets", {})
                    names[run_id] = run_speaker_names(config)
        if not rows:
            return
        for (submission, unit_id, layout, pseudonym, data, pool, mistakes, passed, decision,
             worker_key, run_id) in rows:
            shown = _with_source_fields(reader.export_dialogues(data, layout), data)
            dialogues, answers = reader.exported_answers(submission.answers, shown)
            record = {
                "task": task_name,
                "task_kind": task.blueprint,
                "run_id": run_id,
                "unit_id": unit_id,
                "worker": pseudonym,
                "submitted_at": iso_utc(submission.created_at),
                "timings": submission.timings,
                "layout": layout,
                "dialogues": dialogues,
                "answers": answers,
                "speaker_names": names[run_id],
                **quality_fields(pool, mistakes, passed, submission.flagged_for_review),
                "review": None if decision is None else {
                    "decision": decision.decision, "reason": decision.reason,
                    "sync_state": decision.sync_state},
            }
            if pool == JUDGE_POOL:
                record["judge"] = worker_key.removeprefix(JUDGE_PREFIX)
            yield record, definitions[run_id]
        after = rows[-1][0].id


def run_speaker_names(config: dict[str, Any]) -> dict[str, str]:
    """`{"system": name, "user": name}` of a run's stored conf (the page's speaker names)."""
    blueprint = ((config.get("conf") or {}).get("mephisto") or {}).get("blueprint") or {}
    return display_names(blueprint.get("speaker_names"))


def task_definitions(db: Database, task_name: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The buckets of every run of a task (a later run's definition wins) and the newest run's
    speaker names: the columns of an export that spans runs."""
    task = find_task(db, task_name)
    buckets: dict[str, Any] = {}
    names = display_names(None)
    with db.read() as session:
        for config in session.scalars(select(TaskRun.config).where(TaskRun.task_id == task.id)
                                      .order_by(TaskRun.id)):
            buckets.update(config.get("buckets") or {})
            names = run_speaker_names(config)
    return buckets, names


def quality_fields(pool: str, mistakes: int | None, passed: bool | None,
                   flagged: bool) -> dict[str, Any]:
    """What a requester needs to keep or drop a submission: its unit's pool, the score of a
    screening or gold unit (None for real work) and the review flag of real work done by a
    worker later disqualified by failed golds."""
    return {"pool": pool, "quality_mistakes": mistakes, "quality_passed": passed,
            "flagged_for_review": bool(flagged)}


# Scalar fields of a task data dialogue passed through to `dialogues[].source_fields` (the bot of
# a dialogue, `bot2` of a comparison's `turns2`, any tag `analyze --by` may name); ids, texts
# and the author's worker id are not.
_NOT_PASSED = frozenset({"dialogue_id", "group_id", "origin_worker_id"})


def _with_source_fields(dialogues: list[dict[str, Any]], data: Any) -> list[dict[str, Any]]:
    items = data.get("dialogues") if isinstance(data, dict) else None
    sources = {item.get("key"): item.get("source") for item in items or []
               if isinstance(item, dict)}
    for dialogue in dialogues:
        source = sources.get(dialogue.get("key"))
        if isinstance(source, dict):
            dialogue["source_fields"] = {
                k: v for k, v in source.items()
                if k not in _NOT_PASSED and isinstance(v, str | int | float | bool)}
    return dialogues


def answered_items(
    submission: dict[str, Any], definitions: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    """One row per answered item of a whole submission, as its kind of task reads it."""
    return blueprint_class(submission["task_kind"]).export_rows(submission, definitions)

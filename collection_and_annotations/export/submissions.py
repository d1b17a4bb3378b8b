"""Read a task's submissions from the database and flatten them into answered items."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import select

from collection_and_annotations.blueprints.static_annotation.buckets import TREE_CONFIGS
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import (
    Assignment,
    Submission,
    Task,
    TaskRun,
    Unit,
    Worker,
    iso_utc,
)

ITEM_FIELDS = (
    "task", "run_id", "unit_id", "worker", "dialogue_id", "group_id", "dialogue_key",
    "turn_index", "speaker", "bucket", "question", "answer", "submitted_at",
    "duration_seconds",
)


class UnknownTask(LookupError):
    pass


def whole_submissions(
    db: Database, task_name: str
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Each submission with its dialogues' own ids, and the bucket definitions of its run."""
    with db.session() as session:
        task = session.scalars(select(Task).where(Task.name == task_name)).first()
        if task is None:
            known = ", ".join(session.scalars(select(Task.name).order_by(Task.name))) or "none"
            raise UnknownTask(f"no task named '{task_name}' in this database (tasks: {known})")
        rows = session.execute(
            select(Submission, Unit.public_id, Worker.pseudonym, Assignment.data, TaskRun.config)
            .join(Unit, Submission.unit_id == Unit.id)
            .join(Assignment, Unit.assignment_id == Assignment.id)
            .join(Worker, Submission.worker_id == Worker.id)
            .join(TaskRun, Submission.task_run_id == TaskRun.id)
            .where(Assignment.task_id == task.id)
            .order_by(Submission.id)
        )
        for submission, unit_id, pseudonym, data, run_config in rows:
            dialogues = [
                {"key": d["key"], "dialogue_id": d["source"]["dialogue_id"],
                 "group_id": d["source"]["group_id"],
                 "speakers": [t[0] for t in d["source"]["turns"]]}
                for d in data["dialogues"]
            ]
            record = {
                "task": task_name,
                "run_id": submission.task_run_id,
                "unit_id": unit_id,
                "worker": pseudonym,
                "submitted_at": iso_utc(submission.created_at),
                "timings": submission.timings,
                "dialogues": dialogues,
                "answers": submission.answers,
            }
            yield record, run_config.get("buckets", {})


def _tree_items(value: dict[str, Any], options: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    for question, chosen in value.items():
        answers = options.get(question, {})
        checkbox = "checkbox" in answers.get("_type_", {})
        yield question, sorted(chosen) if checkbox else next(iter(chosen), None)
        for answer, nested in chosen.items():
            if nested:
                yield from _tree_items(nested, answers.get(answer, {}))


def _value_items(bucket: dict[str, Any], value: Any) -> Iterator[tuple[str | None, Any]]:
    config = bucket.get("config")
    if config in TREE_CONFIGS:
        yield from _tree_items(value, bucket.get("options", {}))
    elif config == "multiselect":
        yield f"{bucket.get('task_title')}_labels", value
    elif config == "comparative":
        yield bucket.get("question"), value
    elif config in ("likert-5-turn", "likert-5-dialogue"):
        questions = {o["label"]: o.get("question", o["label"]) for o in bucket["options"]}
        for label, rating in value.items():
            yield questions.get(label, label), rating
    else:
        yield from value.items()


def answered_items(
    submission: dict[str, Any], buckets: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    """One row per answered question of a whole submission."""
    by_key = {d["key"]: d for d in submission["dialogues"]}
    duration = submission["timings"].get("server", {}).get("duration_seconds")
    for key, answered in submission["answers"].items():
        dialogue = by_key[key]
        for bucket_name, targets in answered.items():
            bucket = buckets.get(bucket_name, {})
            for target, value in targets.items():
                turn = None if target == "dialogue" else int(target)
                for question, answer in _value_items(bucket, value):
                    yield {
                        "task": submission["task"], "run_id": submission["run_id"],
                        "unit_id": submission["unit_id"], "worker": submission["worker"],
                        "dialogue_id": dialogue["dialogue_id"],
                        "group_id": dialogue["group_id"], "dialogue_key": key,
                        "turn_index": turn,
                        "speaker": None if turn is None else dialogue["speakers"][turn],
                        "bucket": bucket_name, "question": question, "answer": answer,
                        "submitted_at": submission["submitted_at"],
                        "duration_seconds": duration,
                    }

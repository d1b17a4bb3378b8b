"""Stored static-annotation submissions as export rows: one row per answered question."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from collection_and_annotations.blueprints.static_annotation.buckets import TREE_CONFIGS

ITEM_FIELDS = (
    "task", "run_id", "unit_id", "worker", "dialogue_id", "group_id", "dialogue_key",
    "turn_index", "speaker", "bucket", "question", "answer", "submitted_at",
    "duration_seconds",
)


def export_dialogues(data: dict[str, Any], layout: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The unit's dialogues with their own ids, in the order the worker saw them."""
    return [
        {"key": d["key"], "dialogue_id": d["source"]["dialogue_id"],
         "group_id": d["source"]["group_id"],
         "speakers": [t[0] for t in d["source"]["turns"]]}
        for d in data["dialogues"]
    ]


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


def export_rows(submission: dict[str, Any], buckets: dict[str, Any]) -> Iterator[dict[str, Any]]:
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

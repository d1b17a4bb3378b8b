"""Stored static-annotation submissions as export rows: one row per answered question."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from collection_and_annotations.blueprints.static_annotation.buckets import TREE_CONFIGS
from collection_and_annotations.blueprints.static_annotation.client_timings import step_seconds
from collection_and_annotations.blueprints.static_annotation.comparisons import choice_parts
from collection_and_annotations.blueprints.static_annotation.layout import shown_dialogues
from collection_and_annotations.blueprints.static_annotation.question_texts import (
    Path,
    multiselect_question,
    option_columns,
    question_text,
)

EXPLANATION = "explanation"  # a bucket's key beside its targets: {target: why the answer}
# A row's 0/1 cell per option of a set-of-options answer: columns of the CSV, left out of JSONL
# (which keeps the answer's list).
OPTION_COLUMNS = "option_columns"
# What the worker saw (dialogue_position, bucket_position: 1-based; left: "turns"/"turns2" on
# the left of a comparison), what was chosen (chosen: the dialogue a comparison picked) and the
# time spent on the row's step (step_seconds, from the page's timings). The unit's pool (main,
# screening, gold), a screening/gold unit's score and the review flag come from the submission.
QUALITY_FIELDS = ("pool", "quality_mistakes", "quality_passed", "flagged_for_review")
# conversation_id: a collected chat's; bot/bot2: the `bot`/`bot2` fields of the dialogue (a
# comparison's `turns` and `turns2` sides), the bot nickname of a chat (requester side only).
ITEM_FIELDS = (
    "task", "run_id", "unit_id", "worker", "dialogue_id", "group_id", "conversation_id",
    "bot", "bot2", "dialogue_key",
    "dialogue_position", "turn_index", "speaker", "bucket", "bucket_position", "question",
    "question_text", "answer", "explanation", "left", "chosen", "submitted_at",
    "duration_seconds", "step_seconds",
    *QUALITY_FIELDS, "review_decision",
)


def export_dialogues(data: dict[str, Any], layout: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The unit's dialogues with their own ids, in the order the worker saw them."""
    return [
        {"key": d.item["key"], "dialogue_id": d.item["source"]["dialogue_id"],
         "group_id": d.item["source"].get("group_id"),  # training dialogues have none
         "speakers": [t[0] for t in d.item["source"]["turns"]],
         "position": d.position, "tasks": d.tasks, "left": d.left}
        for d in shown_dialogues(data, layout)
    ]


def _tree_items(value: dict[str, Any], options: dict[str, Any], parents: Path = ()
                ) -> Iterator[tuple[Path, Any, bool]]:
    for question, chosen in value.items():
        answers = options.get(question, {})
        checkbox = "checkbox" in answers.get("_type_", {})
        path = (*parents, question)
        yield path, sorted(chosen) if checkbox else next(iter(chosen), None), checkbox
        for answer, nested in chosen.items():
            if nested:
                yield from _tree_items(nested, answers.get(answer, {}), (*path, answer))


def _value_items(bucket: dict[str, Any], value: Any) -> Iterator[tuple[Path, Any, bool]]:
    """(question path, answer, whether the answer is a set of options) of one stored value."""
    config = bucket.get("config")
    if config in TREE_CONFIGS:
        yield from _tree_items(value, bucket.get("options", {}))
    elif config == "multiselect":
        yield (multiselect_question(bucket),), value, True
    elif config in ("comparative", "text"):
        question = bucket.get("question")
        yield (question,) if question is not None else (), \
            choice_parts(value)[0] if config == "comparative" else value, False
    elif config in ("likert-5-turn", "likert-5-dialogue"):
        questions = {o["label"]: o.get("question", o["label"]) for o in bucket["options"]}
        for label, rating in value.items():
            yield (questions.get(label, label),), rating, False
    else:
        for question, answer in value.items():
            yield (question,), answer, False


def _ticked(columns: dict[tuple[Path, str], str], path: Path, answer: Any
            ) -> dict[str, int] | None:
    """The 0/1 option columns of a set of options (None when one is not a known option:
    the answer then stays whole in its cell)."""
    mine = {option: column for (where, option), column in columns.items() if where == path}
    chosen = set(answer) if isinstance(answer, list) else None
    if not mine or chosen is None or not chosen <= mine.keys():
        return None
    return {column: int(option in chosen) for option, column in mine.items()}


def export_rows(submission: dict[str, Any], buckets: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """One row per answered question of a whole submission."""
    by_key = {d["key"]: d for d in submission["dialogues"]}
    timings = submission["timings"]
    duration = timings.get("server", {}).get("duration_seconds")
    seconds = step_seconds(timings.get("client"))
    quality = {name: submission.get(name) for name in QUALITY_FIELDS}
    # the requester's approve / reject / soft_reject, so a CSV can drop rejected work
    quality["review_decision"] = (submission.get("review") or {}).get("decision")
    names = submission.get("speaker_names") or {}
    for key, answered in submission["answers"].items():
        dialogue = by_key[key]
        tasks = dialogue.get("tasks") or []
        fields = dialogue.get("source_fields") or {}
        for bucket_name, targets in answered.items():
            bucket = buckets.get(bucket_name, {})
            comparative = bucket.get("config") == "comparative"
            columns = option_columns(bucket_name, bucket, names)
            explanations = targets.get(EXPLANATION)
            if not isinstance(explanations, dict):  # none, or a shape no version stored
                explanations = {}
            for target, value in targets.items():
                if target == EXPLANATION:  # beside the targets: each target's own reason
                    continue
                turn = None if target == "dialogue" else int(target)
                speaker = None if turn is None else dialogue["speakers"][turn]
                chosen = choice_parts(value, bucket.get("options"))[1] if comparative else None
                for path, answer, several in _value_items(bucket, value):
                    row = {
                        "task": submission["task"], "run_id": submission["run_id"],
                        "unit_id": submission["unit_id"], "worker": submission["worker"],
                        "dialogue_id": dialogue["dialogue_id"],
                        "group_id": dialogue["group_id"],
                        "conversation_id": dialogue.get("conversation_id"),
                        "bot": fields.get("bot"), "bot2": fields.get("bot2"),
                        "dialogue_key": key,
                        "dialogue_position": dialogue.get("position"),
                        "turn_index": turn,
                        "speaker": speaker,
                        "bucket": bucket_name,
                        "bucket_position": (tasks.index(bucket_name) + 1
                                            if bucket_name in tasks else None),
                        "question": path[-1] if path else None,
                        "question_text": question_text(path, names, speaker) or None,
                        "answer": answer, "explanation": explanations.get(target),
                        "left": dialogue.get("left"), "chosen": chosen,
                        "submitted_at": submission["submitted_at"],
                        "duration_seconds": duration,
                        "step_seconds": seconds.get((key, bucket_name)),
                        **quality,
                    }
                    ticked = _ticked(columns, path, answer) if several else None
                    if ticked is not None:
                        row[OPTION_COLUMNS] = ticked
                    yield row

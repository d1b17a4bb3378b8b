"""Questions as a worker read them, for exports: `SPEAKER_X`/`SPEAKER_Y` replaced by the
display names, a nested question led by the answers that opened it, and the 0/1 column of each
option of a checkbox or multiselect question (named the same in every row and the header)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from collection_and_annotations.blueprints.static_annotation.buckets import TREE_CONFIGS
from collection_and_annotations.blueprints.static_annotation.dependencies import RESERVED
from collection_and_annotations.blueprints.static_annotation.speaker_names import (
    DEFAULTS,
    PLACEHOLDERS,
)

PATH_SEPARATOR = " > "  # between a parent question, its answer and the nested question
COLUMN_SEPARATOR = " / "  # between a bucket, its question and an option in a column name
Path = tuple[str, ...]  # parent question, answer, ..., the question itself


def resolved(text: str, names: Mapping[str, str], speaker: str | None = None) -> str:
    """`text` with SPEAKER_X as the annotated turn's speaker (the bot for a dialogue), and
    SPEAKER_Y as the other one, as the page shows it."""
    names = {**DEFAULTS, **names}
    this = speaker if speaker in names else "system"
    other = next(s for s in DEFAULTS if s != this)
    shown = {placeholder: names[this if role == "system" else other]
             for placeholder, role in PLACEHOLDERS.items()}
    for placeholder, name in shown.items():
        text = text.replace(placeholder, name)
    return text


def question_text(path: Path, names: Mapping[str, str], speaker: str | None = None) -> str:
    return PATH_SEPARATOR.join(resolved(part, names, speaker) for part in path)


def _checkbox_questions(options: Any, parents: Path = ()) -> Iterator[tuple[Path, list[str]]]:
    """(path, its answers) of every checkbox question in a question tree, at any depth."""
    if not isinstance(options, dict):
        return
    for question, answers in options.items():
        if question in RESERVED or not isinstance(answers, dict):
            continue
        offered = [a for a in answers if a not in RESERVED]
        if "checkbox" in (answers.get("_type_") or {}):
            yield (*parents, question), offered
        for answer in offered:
            yield from _checkbox_questions(answers[answer], (*parents, question, answer))


def multiselect_question(bucket: Mapping[str, Any]) -> str:
    """The question a multiselect bucket's answer is stored under (the original's name)."""
    return f"{bucket.get('task_title')}_labels"


def option_columns(bucket_name: str, bucket: Mapping[str, Any], names: Mapping[str, str]
                   ) -> dict[tuple[Path, str], str]:
    """(question path, option) -> its 0/1 column, for each question whose answer is a set of
    options (multiselect values; checkbox questions of a tree)."""
    config = bucket.get("config")
    if config == "multiselect":
        path = (multiselect_question(bucket),)
        return {(path, str(o["value"])): f"{bucket_name}{COLUMN_SEPARATOR}{o['value']}"
                for o in bucket.get("options") or [] if isinstance(o, dict) and "value" in o}
    if config not in TREE_CONFIGS:
        return {}
    return {(path, answer): COLUMN_SEPARATOR.join(
                (bucket_name, question_text(path, names), resolved(answer, names)))
            for path, answers in _checkbox_questions(bucket.get("options")) for answer in answers}


def task_option_columns(buckets: Mapping[str, Any], names: Mapping[str, str]) -> list[str]:
    """Every option column of a task's buckets, bucket by bucket."""
    return [column for name, bucket in buckets.items()
            for column in option_columns(name, bucket, names).values()]

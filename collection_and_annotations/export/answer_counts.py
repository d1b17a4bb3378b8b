"""How often each answer was given, per bucket and question, over a task's real work: the
dashboard's results view, read through the same item rows as the CSV export, so the two agree.

Reading every submission costs time on a large task and the page asks every few seconds, so
the counts are kept per task and brought up to date with the submissions that arrived since.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from collection_and_annotations.blueprints.static_annotation.buckets import TREE_CONFIGS
from collection_and_annotations.blueprints.static_annotation.question_texts import resolved
from collection_and_annotations.engine.runs import real_work
from collection_and_annotations.export.submissions import answered_items, whole_submissions
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Assignment, Submission, Unit

FREE_TEXT = "(text)"
FREE_TEXT_CHARS = 64  # a longer answer is someone's words, not an option
NONE_CHOSEN = "(none)"  # a checkbox or multiselect question left with nothing ticked
Target = tuple[str, str, int | None]  # unit, dialogue key, turn


@dataclass
class _Tally:
    """Counts of the submissions up to `newest` (`seen` of them): submissions never change
    once stored, so a refresh only reads those that arrived since."""

    counts: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)
    answered: Counter[tuple[str, str]] = field(default_factory=Counter)
    texts: dict[tuple[str, str], str] = field(default_factory=dict)  # as the worker read it
    labels: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    several: set[tuple[str, str]] = field(default_factory=set)  # answers are sets of options
    nested: set[tuple[str, str]] = field(default_factory=set)  # asked after a parent answer
    targets: dict[str, set[Target]] = field(default_factory=dict)  # per bucket: asked
    newest: int = 0
    seen: int = 0

    def add(self, records: Iterable[tuple[dict[str, Any], dict[str, Any]]]) -> int:
        added = 0
        for record, definitions in records:
            added += 1
            names = record.get("speaker_names") or {}
            for row in answered_items(record, definitions):
                self._add_row(row, definitions.get(row["bucket"]) or {}, names)
        return added

    def _add_row(self, row: dict[str, Any], bucket: dict[str, Any],
                 names: dict[str, str]) -> None:
        question = (str(row["bucket"]), str(row["question"]))
        config = bucket.get("config")
        self.targets.setdefault(question[0], set()).add(
            (row["unit_id"], row["dialogue_key"], row["turn_index"]))
        if question not in self.texts:
            self.texts[question] = _question_text(row, bucket, names)
            self.labels[question] = _labels(bucket)
            if config in TREE_CONFIGS and row["question"] not in (bucket.get("options") or {}):
                self.nested.add(question)
        if isinstance(row["answer"], list):
            self.several.add(question)
        keys = _comparison_keys(row) if config == "comparative" else _answer_keys(row["answer"])
        self.counts.setdefault(question, Counter()).update(keys)
        self.answered[question] += 1

    def shown(self) -> list[dict[str, Any]]:
        shown = []
        for question, tally in self.counts.items():
            answered = self.answered[question]
            # a nested question is asked only after its parent's answer: its rows are all
            asked = answered if question in self.nested else len(self.targets[question[0]])
            labels = self.labels[question]
            shown.append({
                "bucket": question[0], "question": question[1], "text": self.texts[question],
                "n": asked, "answers": dict(_in_order(tally, labels)),
                "labels": {value: labels[value] for value in tally if value in labels},
                "no_answer": asked - answered, "several": question in self.several})
        return shown


_tallies: dict[tuple[str, str], _Tally] = {}
_lock = threading.Lock()


def _question_text(row: dict[str, Any], bucket: dict[str, Any], names: dict[str, str]) -> str:
    """The question as the worker read it: speakers named, a nested one after its parents; a
    multiselect bucket's own question (its stored name is `<title>_labels`)."""
    if bucket.get("config") == "multiselect":
        return resolved(bucket.get("question") or "Labels", names)
    return row.get("question_text") or str(row["question"])


def _labels(bucket: dict[str, Any]) -> dict[str, str]:
    """Value -> what the page showed: a multiselect option's label, a rating with its
    description."""
    if bucket.get("config") == "multiselect":
        return {str(o["value"]): str(o.get("label", o["value"]))
                for o in bucket.get("options") or [] if isinstance(o, dict) and "value" in o}
    details = bucket.get("label_details") or {}
    return {str(value): f"{value}: {text}" for value, text in details.items()}


def _in_order(tally: Counter[str], labels: dict[str, str]) -> list[tuple[str, int]]:
    """Ratings by number, then the options in the bucket's order, then the other answers."""
    order = {value: place for place, value in enumerate(labels)}

    def place(value: str) -> tuple[int, int, str]:
        if value.isdigit():
            return 0, int(value), ""
        return (1, order[value], "") if value in order else (2, 0, value)

    return [(value, tally[value]) for value in sorted(tally, key=place)]


def _comparison_keys(row: dict[str, Any]) -> list[str]:
    """A comparison counts for the dialogue chosen (its bot when the data names it), never
    for the side of the screen it was on; no preference counts as its option."""
    chosen = row.get("chosen")
    if chosen == "turns":
        return [str(row.get("bot") or "first dialogue (turns)")]
    if chosen == "turns2":
        return [str(row.get("bot2") or "second dialogue (turns2)")]
    return _answer_keys(row["answer"])


def _answer_keys(answer: Any) -> list[str]:
    """Checkbox answers count each ticked option (nothing ticked as NONE_CHOSEN); free text
    counts as one kind."""
    if isinstance(answer, list):
        return [key for value in answer for key in _answer_keys(value)] or [NONE_CHOSEN]
    if answer is None:
        return []
    if isinstance(answer, str) and (len(answer) > FREE_TEXT_CHARS or "\n" in answer):
        return [FREE_TEXT]
    return [str(answer).lower() if isinstance(answer, bool) else str(answer)]


def _stamp(db: Database, task_id: int) -> tuple[int, int]:
    """The newest real-work submission of the task and how many there are."""
    with db.read() as session:
        newest, count = session.execute(
            select(func.max(Submission.id), func.count()).select_from(Submission)
            .join(Unit, Unit.id == Submission.unit_id).join(Assignment)
            .where(Assignment.task_id == task_id, real_work())).one()
    return newest or 0, count


def answer_counts(db: Database, task_name: str, task_id: int) -> list[dict[str, Any]]:
    """`[{"bucket", "question", "text", "n", "answers": {answer: count}, "labels": {answer:
    shown as}, "no_answer", "several"}]` in the order the questions first appear. The page
    asks every few seconds: only submissions that arrived
    since the last answer are read (all of them again only when one with a lower id committed
    late, which the count shows)."""
    key = (str(db.engine.url), task_name)
    with _lock:  # one refresh at a time: they would read the same rows
        newest, count = _stamp(db, task_id)
        tally = _tallies.get(key) or _Tally()
        if (tally.newest, tally.seen) != (newest, count):
            reading = (tally.newest, newest)
            if tally.seen + tally.add(whole_submissions(db, task_name, exclude_quality=True,
                                                        ids=reading)) != count:
                tally = _Tally()
                tally.add(whole_submissions(db, task_name, exclude_quality=True,
                                            ids=(0, newest)))
            tally.newest, tally.seen = newest, count
            _tallies[key] = tally
        return tally.shown()

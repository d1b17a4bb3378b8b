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

from collection_and_annotations.engine.runs import real_work
from collection_and_annotations.export.submissions import answered_items, whole_submissions
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Assignment, Submission, Unit

FREE_TEXT = "(text)"
FREE_TEXT_CHARS = 64  # a longer answer is someone's words, not an option


@dataclass
class _Tally:
    """Counts of the submissions up to `newest` (`seen` of them): submissions never change
    once stored, so a refresh only reads those that arrived since."""

    counts: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)
    answered: Counter[tuple[str, str]] = field(default_factory=Counter)
    newest: int = 0
    seen: int = 0

    def add(self, records: Iterable[tuple[dict[str, Any], dict[str, Any]]]) -> int:
        added = 0
        for record, definitions in records:
            added += 1
            for row in answered_items(record, definitions):
                question = (str(row["bucket"]), str(row["question"]))
                self.counts.setdefault(question, Counter()).update(_answer_keys(row["answer"]))
                self.answered[question] += 1
        return added

    def shown(self) -> list[dict[str, Any]]:
        return [{"bucket": bucket, "question": question, "text": question,
                 "n": self.answered[(bucket, question)], "answers": dict(sorted(tally.items()))}
                for (bucket, question), tally in self.counts.items()]


_tallies: dict[tuple[str, str], _Tally] = {}
_lock = threading.Lock()


def _answer_keys(answer: Any) -> list[str]:
    """Checkbox answers count each ticked option; free text counts as one kind."""
    if isinstance(answer, list):
        return [key for value in answer for key in _answer_keys(value)]
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
    """`[{"bucket", "question", "text", "n", "answers": {answer: count}}]` in the order the
    questions first appear. The page asks every few seconds: only submissions that arrived
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

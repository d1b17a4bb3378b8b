"""How often each answer was given, per bucket and question, over a task's real work: the
dashboard's results view, read through the same item rows as the CSV export, so the two agree.

Reading every submission costs time on a large task and the page asks every few seconds, so
the counts are kept per task until a new submission arrives.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from sqlalchemy import func, select

from collection_and_annotations.blueprints.base import QUALITY_POOLS
from collection_and_annotations.export.submissions import answered_items, whole_submissions
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Assignment, Submission, Unit

FREE_TEXT = "(text)"
FREE_TEXT_CHARS = 64  # a longer answer is someone's words, not an option

_cache: dict[tuple[str, str], tuple[tuple[Any, ...], list[dict[str, Any]]]] = {}
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


def _stamp(db: Database, task_id: int) -> tuple[Any, ...]:
    """Changes whenever the counts may: the newest submission and how many there are."""
    with db.read() as session:
        return tuple(session.execute(
            select(func.max(Submission.id), func.count()).select_from(Submission)
            .join(Unit, Unit.id == Submission.unit_id).join(Assignment)
            .where(Assignment.task_id == task_id, Unit.pool.not_in(QUALITY_POOLS))).one())


def answer_counts(db: Database, task_name: str, task_id: int) -> list[dict[str, Any]]:
    """`[{"bucket", "question", "text", "n", "answers": {answer: count}}]` in the order the
    questions first appear."""
    key, stamp = (str(db.engine.url), task_name), _stamp(db, task_id)
    with _lock:
        cached = _cache.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    counts: dict[tuple[str, str], Counter[str]] = {}
    answered: Counter[tuple[str, str]] = Counter()
    for record, definitions in whole_submissions(db, task_name, exclude_quality=True):
        for row in answered_items(record, definitions):
            question = (str(row["bucket"]), str(row["question"]))
            keys = _answer_keys(row["answer"])
            counts.setdefault(question, Counter()).update(keys)
            answered[question] += 1
    result = [{"bucket": bucket, "question": question, "text": question,
               "n": answered[(bucket, question)], "answers": dict(sorted(tally.items()))}
              for (bucket, question), tally in counts.items()]
    with _lock:
        _cache[key] = (stamp, result)
    return result

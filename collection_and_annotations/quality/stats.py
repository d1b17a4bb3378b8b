"""Screening and gold outcomes for the requester: counted in the database from `unit_scores`.

The launcher asks every second, so each view is one aggregate query (`ix_unit_scores_task_id`);
rows still being checked (`passed` NULL: a training unit not yet submitted) are not outcomes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from collection_and_annotations.blueprints.base import GOLD_POOL, SCREENING_POOL
from collection_and_annotations.storage.models import UnitScore, Worker


@dataclass(frozen=True)
class Outcomes:
    """Scored screening attempts and gold units, passed and failed."""

    screening_passed: int = 0
    screening_failed: int = 0
    gold_passed: int = 0
    gold_failed: int = 0

    @classmethod
    def of(cls, counts: dict[tuple[str, bool], int]) -> Outcomes:
        return cls(counts.get((SCREENING_POOL, True), 0), counts.get((SCREENING_POOL, False), 0),
                   counts.get((GOLD_POOL, True), 0), counts.get((GOLD_POOL, False), 0))

    @property
    def any(self) -> bool:
        return bool(self.screening_passed or self.screening_failed or self.golds)

    @property
    def golds(self) -> int:
        return self.gold_passed + self.gold_failed

    @property
    def gold_pass_rate(self) -> float | None:
        return round(self.gold_passed / self.golds, 4) if self.golds else None

    def as_json(self) -> dict[str, Any]:
        return {"screening": {"passed": self.screening_passed, "failed": self.screening_failed},
                "gold": {"passed": self.gold_passed, "failed": self.gold_failed,
                         "pass_rate": self.gold_pass_rate}}

    def summary(self) -> str:
        """For the launcher's progress line."""
        parts = []
        if self.screening_passed or self.screening_failed:
            parts.append(f"screening {self.screening_passed} passed, "
                         f"{self.screening_failed} failed")
        if self.golds:
            parts.append(f"golds {self.gold_passed}/{self.golds} passed "
                         f"({100 * self.gold_passed / self.golds:.0f}%)")
        return "; ".join(parts)


def _scored(task_id: int):  # noqa: ANN202 (a select under construction)
    return (select(UnitScore.pool, UnitScore.passed, func.count())
            .where(UnitScore.task_id == task_id, UnitScore.passed.is_not(None)))


def task_outcomes(session: Session, task_id: int) -> Outcomes:
    """The task's outcomes over every run (one query)."""
    rows = session.execute(_scored(task_id).group_by(UnitScore.pool, UnitScore.passed)).all()
    return Outcomes.of({(pool, bool(passed)): count for pool, passed, count in rows})


def worker_outcomes(session: Session, task_id: int) -> dict[str, Outcomes]:
    """Per worker pseudonym (never the provider's worker id), one query."""
    rows = session.execute(
        _scored(task_id).add_columns(Worker.pseudonym)
        .join(Worker, Worker.id == UnitScore.worker_id)
        .group_by(Worker.pseudonym, UnitScore.pool, UnitScore.passed)).all()
    counts: dict[str, dict[tuple[str, bool], int]] = {}
    for pool, passed, count, pseudonym in rows:
        counts.setdefault(pseudonym, {})[(pool, bool(passed))] = count
    return {pseudonym: Outcomes.of(c) for pseudonym, c in sorted(counts.items())}

"""Screening battles (`use_screening_task: true`): before any real battle, a worker without
`passed_qualification_name` gets `screening_battles` battles of pairs with a known better bot
(`screening_pairs: ["better>worse", ...]`), one at a time, looking exactly like real ones.

A screening battle is passed when every vote in it prefers the better bot (as a gold battle,
gold.py). `screening_battles` passed in a row grant `passed_qualification_name`; a failed one
ends the worker's attempt: with attempts left (`screening_attempts`, as for the static kind)
they may start again, else they get the task's block qualification. Each battle's score is a
`unit_scores` row of pool `screening`; only the battle that ends an attempt has an outcome
(`passed`), so the requester's screening figures count attempts as for the static kind.
Screening battles are quality units: never in a pair's quota, the leaderboard or the export.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, select

from collection_and_annotations.blueprints.arena.gold import (
    KnownBetterBattles,
    known_better_pairs,
    wrong_votes,
)
from collection_and_annotations.blueprints.base import (
    SCREENING_POOL,
    NoWork,
    ResumeUnit,
    SubmittedUnit,
    WorkerContext,
)
from collection_and_annotations.errors import UserError
from collection_and_annotations.quality import qualifications, score_sql
from collection_and_annotations.quality.pools import NO_ATTEMPT_LEFT, NOT_ELIGIBLE, TRY_AGAIN
from collection_and_annotations.storage.models import UnitScore, utcnow

KEY = "mephisto.blueprint"
NEXT_BATTLE = ("Well done: you passed this screening battle. {left} more before the task: "
               "continue to the next one.")


@dataclass(frozen=True)
class ScreeningBattles(KnownBetterBattles):
    POOL = SCREENING_POOL
    battles: int  # passed in a row to qualify
    attempts: int
    passed: str  # the qualification granted

    @classmethod
    def from_conf(cls, cfg: Any, known: Sequence[str]) -> ScreeningBattles | None:
        """The conf's screening (None unless `use_screening_task`), its pairs declared."""
        pairs = known_better_pairs(cfg.screening_pairs, "screening_pairs", known)
        if not cfg.use_screening_task:
            if pairs:
                raise UserError(f"{KEY}.screening_pairs is for use_screening_task: true; set "
                                "it, or remove screening_pairs")
            return None
        if not pairs:
            raise UserError(f"use_screening_task is on but {KEY}.screening_pairs is not set: "
                            "name pairs of bots with a known better one, e.g. "
                            "['helpful>echo']")
        if not cfg.passed_qualification_name:
            raise UserError(f"use_screening_task is on but {KEY}.passed_qualification_name "
                            "is not set")
        return cls(pairs, int(cfg.screening_battles), int(cfg.screening_attempts),
                   str(cfg.passed_qualification_name))

    def route(self, connection: Connection, worker: WorkerContext) -> list[str] | None:
        """[screening] until the worker holds `passed` (their open screening battle first:
        one at a time); None once they do."""
        if self.passed in worker.qualifications:
            return None
        if SCREENING_POOL in worker.open_units:
            raise ResumeUnit(worker.open_units[SCREENING_POOL])
        if _record(connection, worker.worker_id, worker.task_id)[0] >= self.attempts:
            raise NoWork(NO_ATTEMPT_LEFT)
        return [SCREENING_POOL]

    def score(self, connection: Connection, unit: SubmittedUnit, block: str
              ) -> dict[str, Any]:
        """Score a submitted screening battle: the outcome the worker is told, a grant of
        `passed` after enough in a row, or of `block` after the last attempt failed."""
        wrong = wrong_votes(connection, unit)
        task_id = connection.execute(score_sql.TASK_OF_RUN,
                                     {"run_id": unit.task_run_id}).scalar_one()
        failed, streak = _record(connection, unit.worker_id, task_id)
        passed = False if wrong else True if streak + 1 >= self.battles else None
        connection.execute(score_sql.SAVE_SCORE, {
            "unit_id": unit.id, "attempt": unit.attempt, "worker_id": unit.worker_id,
            "task_id": task_id, "pool": SCREENING_POOL, "checks": {}, "mistakes": wrong,
            "passed": passed, "scored_at": utcnow()})
        if passed is None:
            left = self.battles - streak - 1
            return {"screening": {"passed": True, "message": NEXT_BATTLE.format(left=left),
                                  "battles_left": left}}
        if passed:
            qualifications.grant(connection, unit.worker_id, self.passed)
            return {"screening": {"passed": True, "message": None}}
        left = self.attempts - failed - 1
        if left > 0:
            return {"screening": {"passed": False, "message": TRY_AGAIN.format(left=left)}}
        qualifications.grant(connection, unit.worker_id, block)
        return {"screening": {"passed": False, "message": NOT_ELIGIBLE}}


def _record(connection: Connection, worker_id: int, task_id: int) -> tuple[int, int]:
    """The worker's failed screening battles in the task, and their battles passed since the
    last failed one."""
    outcomes = connection.execute(
        select(UnitScore.passed).where(UnitScore.worker_id == worker_id,
                                       UnitScore.task_id == task_id,
                                       UnitScore.pool == SCREENING_POOL)
        .order_by(UnitScore.scored_at, UnitScore.unit_id)).scalars().all()
    failed = [n for n, passed in enumerate(outcomes) if passed is False]
    return len(failed), len(outcomes) - 1 - (failed[-1] if failed else -1)

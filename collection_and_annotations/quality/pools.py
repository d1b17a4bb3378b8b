"""Screening and gold for the static annotation kind: their assignments, the routing of a
worker who asks for work, the per-dialogue check and scoring at submit.

Everything here runs on the server: expected answers and explanations stay in the stored
assignment data and leave only in a check's feedback, after the worker submitted that dialogue.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, func, select, update

from collection_and_annotations.blueprints.base import (
    GOLD_POOL,
    MAIN_POOL,
    SCREENING_POOL,
    AssignmentPlan,
    NoWork,
    ResumeUnit,
    SubmitRefused,
    SubmittedUnit,
    WorkerContext,
)
from collection_and_annotations.blueprints.static_annotation.buckets import Bucket
from collection_and_annotations.quality import qualifications, score_sql
from collection_and_annotations.quality.files import AnnotatedDialogue
from collection_and_annotations.quality.scoring import feedback, wrong_turns
from collection_and_annotations.quality.settings import DEFAULT_SUPPLY, QualitySettings
from collection_and_annotations.storage.models import (
    Assignment,
    Submission,
    Unit,
    UnitScore,
    utcnow,
)

NOT_ELIGIBLE = ("Thank you for your interest. Based on the training task, you are not eligible "
                "for this task; there is no more work for you here.")
TRY_AGAIN = ("You did not pass the training task this time. You may try again {left} more "
             "time(s): open your task link again to start a new training unit.")
# A block may come from a failed training, failed golds or the requester: say none of them.
BLOCKED = ("Thank you for your interest. You are not eligible for more work in this task; "
           "there is no more work for you here.")
NO_ATTEMPT_LEFT = ("Thank you for your interest. You have already had your attempt at the "
                   "training task, so you cannot start it again; there is no more work for "
                   "you here.")
SCREENING_FULL = ("The training task is full for now, so no new workers can start; thank you "
                  "for your interest, and please try again later.")


def _key(kind: str, sources: list[dict[str, Any]]) -> str:
    return hashlib.sha256((kind + json.dumps(sources, sort_keys=True)).encode()).hexdigest()[:32]


def _item(dialogue: AnnotatedDialogue) -> dict[str, Any]:
    return {"key": f"d_{secrets.token_hex(8)}", "source": dialogue.source}


def quality_plans(settings: QualitySettings) -> list[AssignmentPlan]:
    """The screening assignment (all training dialogues, in file order) and one assignment
    per gold dialogue; each a per-run supply of units."""
    plans = []
    if settings.screening:
        sources = [d.source for d in settings.training]
        plans.append(AssignmentPlan(
            key=_key("screening", sources),
            annotators=settings.max_screening_units or DEFAULT_SUPPLY, groups=[],
            excluded_workers=[], pool=SCREENING_POOL, per_run=True,
            data={"dialogues": [_item(d) for d in settings.training], "quality": "screening",
                  "graded": settings.graded},
            label="screening: " + ", ".join(d.name for d in settings.training)))
    if settings.golds:
        for gold in settings.gold_dialogues:
            key = _key("gold", [gold.source])
            plans.append(AssignmentPlan(
                key=key, annotators=settings.max_gold_units or DEFAULT_SUPPLY,
                groups=[f"gold:{key}"],  # each gold at most once per worker
                excluded_workers=[], pool=GOLD_POOL, per_run=True,
                data={"dialogues": [_item(gold)], "quality": "gold"},
                label=f"gold: {gold.name}"))
    return plans


def _screening_full(connection: Connection, run_id: int) -> bool:
    """No free screening unit in this run (the cap is the run's supply of them)."""
    return connection.execute(score_sql.FREE_SCREENING_UNIT, {"run_id": run_id}).first() is None


def route(connection: Connection, settings: QualitySettings, worker: WorkerContext
          ) -> list[str]:
    """Blocked: no work. Not yet qualified: their open training unit, else a new one while
    they have attempts left. Otherwise their open gold unit, else real work, with a gold
    unit first when the schedule says one is due."""
    holds = worker.qualifications
    if settings.block in holds:
        raise NoWork(BLOCKED)
    if settings.screening and settings.passed not in holds:
        _resume_open(worker, SCREENING_POOL)
        if _attempts(connection, worker.worker_id, worker.task_id) \
                >= settings.screening_attempts:
            raise NoWork(NO_ATTEMPT_LEFT)
        if _screening_full(connection, worker.run_id):
            raise NoWork(SCREENING_FULL, 503)
        return [SCREENING_POOL]
    _resume_open(worker, GOLD_POOL)
    return _real_work(settings, worker.units_by_pool)


def _resume_open(worker: WorkerContext, pool: str) -> None:
    """A worker holds at most one training or gold unit: a claim while one is open (on
    another visit) goes back to it. A second training unit would give a second try after
    the first showed the expected answers; a second gold unit beside an open one would tell
    them apart from real work."""
    if pool in worker.open_units:
        raise ResumeUnit(worker.open_units[pool])


def _attempts(connection: Connection, worker_id: int, task_id: int) -> int:
    """The worker's training attempts in the task: each training unit they saw feedback on
    (checked a dialogue of), submitted, expired or abandoned."""
    return connection.execute(score_sql.SCREENING_ATTEMPTS, {
        "worker_id": worker_id, "task_id": task_id}).scalar_one()


def _real_work(settings: QualitySettings, done: Mapping[str, int]) -> list[str]:
    """Real work, with a gold unit first when the schedule says one is due (`done`: the
    worker's units in the task, per pool)."""
    if not settings.golds:
        return [MAIN_POOL]
    due = settings.min_golds + done.get(MAIN_POOL, 0) // settings.gold_every
    return [GOLD_POOL, MAIN_POOL] if done.get(GOLD_POOL, 0) < due else [MAIN_POOL]


def _task_id(connection: Connection, run_id: int) -> int:
    return connection.execute(score_sql.TASK_OF_RUN, {"run_id": run_id}).scalar_one()


def _score_row(connection: Connection, unit: SubmittedUnit) -> dict[str, Any]:
    """The checks of this worker's try at the unit (none yet: {})."""
    checks = connection.execute(score_sql.SCORE_CHECKS,
                                {"unit_id": unit.id, "attempt": unit.attempt}).scalar()
    return dict(checks) if checks is not None else {}


def _save_score(connection: Connection, unit: SubmittedUnit, checks: dict[str, Any],
                mistakes: int | None = None, passed: bool | None = None) -> None:
    connection.execute(score_sql.SAVE_SCORE, {
        "unit_id": unit.id, "attempt": unit.attempt, "worker_id": unit.worker_id,
        "task_id": _task_id(connection, unit.task_run_id), "pool": unit.pool,
        "checks": checks, "mistakes": mistakes, "passed": passed,
        "scored_at": utcnow() if passed is not None else None})


def check_dialogue(connection: Connection, buckets: Mapping[str, Bucket],
                   unit: SubmittedUnit, dialogue_key: str) -> dict[str, Any] | None:
    """Score one training dialogue; its first check's mistakes are what grading counts."""
    if unit.pool != SCREENING_POOL:
        return None
    item = next((d for d in unit.data["dialogues"] if d["key"] == dialogue_key), None)
    if item is None:
        return None
    wrong = wrong_turns(item["source"], buckets, unit.answers)
    checks = _score_row(connection, unit)
    first = dialogue_key not in checks
    if first:
        checks[dialogue_key] = {"first_mistakes": len(wrong)}
    checks[dialogue_key] = {**checks[dialogue_key], "open": len(wrong)}
    _save_score(connection, unit, checks)
    return {"dialogue": dialogue_key, "first_check": first, "mistakes": len(wrong),
            "counted_mistakes": checks[dialogue_key]["first_mistakes"],
            "corrected": not wrong, "wrong": feedback(item["source"], buckets, wrong)}


def after_submit(connection: Connection, settings: QualitySettings,
                 buckets: Mapping[str, Bucket], unit: SubmittedUnit) -> dict[str, Any] | None:
    if unit.pool == SCREENING_POOL:
        return _grade_screening(connection, settings, buckets, unit)
    if unit.pool == GOLD_POOL:
        _score_gold(connection, settings, buckets, unit)
    return None  # a gold unit's answer is the same as a real unit's


def _grade_screening(connection: Connection, settings: QualitySettings,
                     buckets: Mapping[str, Bucket], unit: SubmittedUnit) -> dict[str, Any]:
    checks = _score_row(connection, unit)
    dialogues = unit.data["dialogues"]
    for item in dialogues:
        if item["key"] not in checks or wrong_turns(item["source"], buckets,
                                                     unit.answers.get(item["key"])):
            raise SubmitRefused("check every training dialogue and correct the turns it "
                                "marks before finishing the training")
    mistakes, passed = 0, True
    for position in unit.data.get("graded", [len(dialogues) - 1]):
        item = dialogues[position]
        counted = checks[item["key"]]["first_mistakes"]
        mistakes += counted
        passed &= counted <= int(item["source"]["pass_criteria"])
    _save_score(connection, unit, checks, mistakes, passed)
    if passed:
        qualifications.grant(connection, unit.worker_id, settings.passed)
        return {"screening": {"passed": True, "message": None}}
    left = settings.screening_attempts - _attempts(
        connection, unit.worker_id, _task_id(connection, unit.task_run_id))
    if left > 0:  # `screening_attempts` allows another try (of a new training unit)
        return {"screening": {"passed": False, "message": TRY_AGAIN.format(left=left)}}
    qualifications.grant(connection, unit.worker_id, settings.block)
    return {"screening": {"passed": False, "message": NOT_ELIGIBLE}}


def _score_gold(connection: Connection, settings: QualitySettings,
                buckets: Mapping[str, Bucket], unit: SubmittedUnit) -> None:
    item = unit.data["dialogues"][0]
    answers = unit.answers.get(item["key"]) if isinstance(unit.answers, dict) else None
    mistakes = len(wrong_turns(item["source"], buckets, answers))
    passed = mistakes <= settings.allowed_gold_mistakes
    _save_score(connection, unit, {}, mistakes, passed)
    task_id = _task_id(connection, unit.task_run_id)
    failed = connection.execute(score_sql.FAILED_GOLDS, {
        "worker_id": unit.worker_id, "task_id": task_id, "failed": False}).scalar_one()
    if failed > settings.max_incorrect_golds:
        qualifications.grant(connection, unit.worker_id, settings.block)
        if settings.flag_for_review:
            flag_since_last_passed_gold(connection, unit.worker_id, task_id)


def flag_since_last_passed_gold(connection: Connection, worker_id: int, task_id: int,
                                real_pools: Sequence[str] = (MAIN_POOL,)) -> int:
    """Flag the worker's real work (units of `real_pools`) in this task submitted after their
    last passed gold (all of it when none passed): golds failing is evidence against it.
    Returns how many."""
    last_passed = connection.execute(select(func.max(UnitScore.scored_at)).where(
        UnitScore.worker_id == worker_id, UnitScore.task_id == task_id,
        UnitScore.pool == GOLD_POOL, UnitScore.passed.is_(True))).scalar_one()
    real_work = (select(Unit.id).join(Assignment, Assignment.id == Unit.assignment_id)
                 .where(Assignment.task_id == task_id, Unit.pool.in_(real_pools)))
    query = update(Submission).where(
        Submission.worker_id == worker_id, Submission.unit_id.in_(real_work),
        Submission.flagged_for_review.is_(False))
    if last_passed is not None:
        query = query.where(Submission.created_at > last_passed)
    return connection.execute(query.values(flagged_for_review=True)).rowcount

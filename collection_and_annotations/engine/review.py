"""The requester's review decisions and bonuses, recorded as rows before anything is sent.

A decision is one row per unit, so a retried request finds it and gets the same answer; a
bonus is one row per (unit, amount, reason). `engine/provider_sync.py` sends them to the
provider's platform once each.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from collection_and_annotations.blueprints.base import JUDGE_POOL
from collection_and_annotations.engine.runs import DONE_STATUSES
from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.engine.work import WorkRefused
from collection_and_annotations.providers.base import DECISIONS
from collection_and_annotations.storage.models import (
    Assignment,
    Bonus,
    ReviewDecision,
    Unit,
    iso_utc,
    utcnow,
)

UNIT_STATUS = {"approve": "accepted", "reject": "rejected", "soft_reject": "soft_rejected"}
MAX_BONUS = 100.0  # in the currency's units: a typo of 50 for 0.50 is refused, not paid
MAX_REASON = 2000


class ReviewRefused(WorkRefused):
    """A decision or bonus not recorded; `status` is the HTTP status the API answers with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message, status)


def _unit(session: Session, task_id: int, public_id: str) -> Unit:
    unit = session.scalars(select(Unit).join(Assignment).where(
        Unit.public_id == public_id, Assignment.task_id == task_id).with_for_update()).first()
    if unit is None:
        raise ReviewRefused(f"no unit '{public_id}' in this task", 404)
    if unit.pool == JUDGE_POOL:
        raise ReviewRefused(f"unit {public_id} holds an LLM judge's answers: they are not "
                            "reviewed or paid", 409)
    return unit


def decision_json(row: ReviewDecision) -> dict[str, Any]:
    return {"decision": row.decision, "reason": row.reason,
            "rejection_category": row.rejection_category, "decided_at": iso_utc(row.decided_at),
            "sync_state": row.sync_state, "attempts": row.attempts, "last_error": row.last_error}


def bonus_json(row: Bonus) -> dict[str, Any]:
    return {"bonus_id": row.id, "amount": row.amount_cents / 100, "reason": row.reason,
            "state": row.state, "attempts": row.attempts, "last_error": row.last_error,
            "created_at": iso_utc(row.created_at)}


def decide(task: ServedTask, public_id: str, decision: Any, reason: Any, category: Any) -> int:
    """Record a decision (the same one again is a no-op); returns its row id.
    A rejected unit whose work goes back to the pool becomes `returned` and a new unit of the
    same assignment is launched in the current run."""
    if decision not in DECISIONS:
        raise ReviewRefused(f"decision must be one of {', '.join(DECISIONS)}")
    if not isinstance(reason, str) or len(reason) > MAX_REASON:
        raise ReviewRefused(f"reason must be text of at most {MAX_REASON} characters")
    if category is not None and (not isinstance(category, str) or len(category) > 32):
        raise ReviewRefused("rejection_category must be text of at most 32 characters")
    problem = task.provider.check_decision(decision, reason, category)
    if problem:
        raise ReviewRefused(problem, 422)
    with task.db.session() as session:
        unit = _unit(session, task.task_id, public_id)
        existing = session.scalars(
            select(ReviewDecision).where(ReviewDecision.unit_id == unit.id)).first()
        if existing is not None:
            if (existing.decision, existing.reason) == (decision, reason):
                return existing.id
            raise ReviewRefused(f"unit {public_id} was already decided ({existing.decision}); "
                                "a decision is final once recorded", 409)
        if unit.status != "completed":
            raise ReviewRefused(f"unit {public_id} is {unit.status}: only completed units are "
                                "reviewed", 409)
        if decision != "reject" and unit.provider_verified is False:
            raise ReviewRefused(f"unit {public_id} came with a worker identity the platform "
                                "does not list (flagged): it is never approved or paid", 409)
        now = utcnow()
        row = ReviewDecision(unit_id=unit.id, decision=decision, reason=reason,
                             rejection_category=category, decided_at=now,
                             sync_state="pending", attempts=0, next_attempt_at=now)
        session.add(row)
        unit.status = UNIT_STATUS[decision]
        if decision == "reject" and task.return_rejected_units:
            unit.status = "returned"
            session.add(Unit(public_id=f"u_{secrets.token_hex(10)}",
                             assignment_id=unit.assignment_id, task_run_id=task.run_id,
                             pool=unit.pool, status="launched", times_expired=0,
                             layout=unit.layout))
        session.flush()
        return row.id


def add_bonus(task: ServedTask, public_id: str, amount: Any, reason: Any) -> int:
    """Record a bonus for the unit's worker; the same unit, amount and reason again is the
    same bonus (a retried request pays once)."""
    if isinstance(amount, bool) or not isinstance(amount, int | float) or not (
            0 < amount <= MAX_BONUS):
        raise ReviewRefused(f"amount must be a number above 0 and at most {MAX_BONUS} (in the "
                            "currency's units, e.g. 0.5)")
    cents = round(amount * 100)
    if cents < 1:
        raise ReviewRefused("amount must be at least 0.01")
    if not isinstance(reason, str) or not reason or len(reason) > MAX_REASON:
        raise ReviewRefused(f"give a reason (text of at most {MAX_REASON} characters): the "
                            "worker sees it")
    with task.db.session() as session:
        unit = _unit(session, task.task_id, public_id)
        if unit.status not in (*DONE_STATUSES, "returned") or unit.worker_id is None:
            raise ReviewRefused(f"unit {public_id} is {unit.status}: bonuses are for submitted "
                                "work", 409)
        if unit.provider_verified is False:
            raise ReviewRefused(f"unit {public_id} came with a worker identity the platform "
                                "does not list (flagged): it is never paid", 409)
        key = hashlib.sha256(f"{unit.id}\x00{cents}\x00{reason}".encode()).hexdigest()
        existing = session.scalars(select(Bonus).where(Bonus.dedupe_key == key)).first()
        if existing is not None:
            return existing.id
        now = utcnow()
        row = Bonus(unit_id=unit.id, worker_id=unit.worker_id, amount_cents=cents,
                    reason=reason, dedupe_key=key, attempts=0, created_at=now,
                    state="pending" if task.provider.pays else "not_sent", next_attempt_at=now)
        session.add(row)
        try:
            session.flush()
        except IntegrityError:  # the same request, committed in between
            raise ReviewRefused("this bonus was just recorded by another request; repeat "
                                "the request to see it", 409) from None
        return row.id

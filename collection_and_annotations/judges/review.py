"""The judges in the requester dashboard (docs/dashboard.md, "Judges"), apart from the
people's review queue: each judge's progress and cost, and what the judges answered about the
item of a person's submission (the same dialogues), with the calls that failed."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from collection_and_annotations.blueprints.base import JUDGE_POOL
from collection_and_annotations.engine.judge_work import ANSWER, FAILED, INVALID, JUDGE_PREFIX
from collection_and_annotations.engine.runs import DONE_STATUSES
from collection_and_annotations.storage.models import (
    Assignment,
    JudgeCall,
    Submission,
    Unit,
    Worker,
    iso_utc,
)


def _name(worker_key: str) -> str:
    return worker_key.removeprefix(JUDGE_PREFIX)


def judges_overview(session: Session, task_id: int) -> list[dict[str, Any]]:
    """Per judge of the task: units answered and open, calls, tokens, cost, last failure."""
    units = {name: (answered, open_) for name, answered, open_ in session.execute(
        select(Worker.provider_worker_id,
               func.count(case((Unit.status.in_(DONE_STATUSES), 1))),
               func.count(case((Unit.status == "assigned", 1))))
        .join(Unit, Unit.worker_id == Worker.id).join(Assignment)
        .where(Assignment.task_id == task_id, Unit.pool == JUDGE_POOL)
        .group_by(Worker.provider_worker_id))}
    in_task = (select(Unit.id).join(Assignment)
               .where(Assignment.task_id == task_id, Unit.pool == JUDGE_POOL))
    shown = []
    for name, calls, invalid, failed, tokens_in, tokens_out, cost, last in session.execute(
            select(Worker.provider_worker_id, func.count(),
                   func.count(case((JudgeCall.outcome == INVALID, 1))),
                   func.count(case((JudgeCall.outcome == FAILED, 1))),
                   func.sum(JudgeCall.input_tokens), func.sum(JudgeCall.output_tokens),
                   func.sum(JudgeCall.cost), func.max(JudgeCall.id))
            .join(Worker, Worker.id == JudgeCall.worker_id)
            .where(JudgeCall.unit_id.in_(in_task))
            .group_by(Worker.provider_worker_id).order_by(Worker.provider_worker_id)):
        latest = session.get(JudgeCall, last)
        answered, open_ = units.get(name, (0, 0))
        shown.append({"judge": _name(name), "units_answered": answered, "units_open": open_,
                      "calls": calls, "invalid_replies": invalid, "failed_calls": failed,
                      "input_tokens": tokens_in, "output_tokens": tokens_out, "cost": cost,
                      "settings": latest.settings, "prompt_sha256": latest.prompt_sha256,
                      "last_call_at": iso_utc(latest.created_at)})
    return shown


def judge_answers(session: Session, task_id: int, public_id: str, chats: bool
                  ) -> list[dict[str, Any]] | None:
    """The judges' answers about the item of this person's unit (its assignment in a static
    task, its chats in a chat task: `chats`), keyed by dialogue key as the person's are, each
    with the failures of its open questions; None when the task has no such unit of a
    person."""
    unit = session.execute(
        select(Unit.assignment_id, Unit.pool).join(Assignment)
        .where(Unit.public_id == public_id, Assignment.task_id == task_id)).first()
    if unit is None or unit.pool == JUDGE_POOL:
        return None
    keys = (f"a{unit.assignment_id}", f"u{public_id}")
    rows = session.execute(
        select(Unit.id, Unit.public_id, Unit.status, Worker.provider_worker_id,
               Submission.answers, Submission.timings, Submission.created_at)
        .join(Worker, Worker.id == Unit.worker_id)
        .outerjoin(Submission, Submission.unit_id == Unit.id)
        .where(Unit.assignment_id == unit.assignment_id, Unit.pool == JUDGE_POOL,
               Unit.provider_session.in_(keys))
        .order_by(Worker.provider_worker_id)).all()
    failures: dict[int, list[dict[str, Any]]] = defaultdict(list)
    open_units = [row.id for row in rows if row.answers is None]
    if open_units:
        answered = {(u, k, b) for u, k, b in session.execute(
            select(JudgeCall.unit_id, JudgeCall.dialogue_key, JudgeCall.bucket)
            .where(JudgeCall.unit_id.in_(open_units), JudgeCall.outcome == ANSWER))}
        for call in session.scalars(select(JudgeCall).where(
                JudgeCall.unit_id.in_(open_units), JudgeCall.outcome != ANSWER)
                .order_by(JudgeCall.id)):
            if (call.unit_id, call.dialogue_key, call.bucket) not in answered:
                failures[call.unit_id].append({
                    "dialogue_key": call.dialogue_key, "bucket": call.bucket,
                    "outcome": call.outcome, "reason": call.reason,
                    "at": iso_utc(call.created_at)})
    return [{"judge": _name(row.provider_worker_id), "unit_id": row.public_id,
             "status": row.status,
             # a chat submission stores its dialogues beside the answers
             "answers": row.answers["answers"] if chats and row.answers else row.answers,
             "submitted_at": iso_utc(row.created_at) if row.created_at else None,
             "summary": ((row.timings or {}).get("client") or {}).get("judge"),
             "failures": failures.get(row.id, [])} for row in rows]

"""The requester's review queue: submitted units filtered and paged, one submission in full,
and the decisions and bonuses that did not reach the platform sent again or settled
(docs/dashboard.md).

A page of the queue is one COUNT and one LIMIT/OFFSET query, whatever the task's size; the
bucket filter looks into the assignment's JSON with the database's own JSON functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, func, select, text, update
from sqlalchemy.orm import Session

from collection_and_annotations.blueprints.base import JUDGE_POOL, MAIN_POOL, QUALITY_POOLS
from collection_and_annotations.engine.chat import transcripts
from collection_and_annotations.engine.dashboard import in_task, seconds_between
from collection_and_annotations.engine.provider_sync import (
    FAILED_DECISION,
    sync_due,
)
from collection_and_annotations.engine.review import ReviewRefused, bonus_json, decision_json
from collection_and_annotations.engine.runs import task_units
from collection_and_annotations.engine.work import WorkRefused
from collection_and_annotations.providers.base import Provider
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import (
    Assignment,
    Bonus,
    ReviewDecision,
    Submission,
    Unit,
    Worker,
    iso_utc,
    utcnow,
)

STATUSES = ("completed", "accepted", "rejected", "soft_rejected", "returned")
DECISIONS = ("none", "approve", "reject", "soft_reject")
FLAGS = ("flagged", "unverified")
POOLS = (MAIN_POOL, *QUALITY_POOLS)
MAX_LIMIT = 200
# stored sync states -> the dashboard's words: sent, pending, failed, recorded (nothing to send)
DECISION_STATES = {"done": "sent", "sending": "pending", "not_sent": "recorded"}
BONUS_STATES = {"set_up": "pending", "paying": "pending", "not_sent": "recorded"}


class QueueRefused(WorkRefused):
    """A filter or page the queue does not know; the message says which values it takes."""


@dataclass(frozen=True)
class QueueFilter:
    worker: str | None = None
    status: str | None = None
    decision: str | None = None
    bucket: str | None = None
    flag: str | None = None
    pool: str | None = None

    @classmethod
    def of(cls, args: dict[str, str]) -> QueueFilter:
        """From query parameters; unknown values are refused with the accepted ones."""
        for name, allowed in (("status", STATUSES), ("decision", DECISIONS), ("flag", FLAGS),
                              ("pool", POOLS)):
            if args.get(name) and args[name] not in allowed:
                raise QueueRefused(f"{name} must be one of {', '.join(allowed)}", 400)
        return cls(**{name: args.get(name) or None
                      for name in ("worker", "status", "decision", "bucket", "flag", "pool")})


def shown_decision(row: ReviewDecision | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {**decision_json(row),
            "sync_state": DECISION_STATES.get(row.sync_state, row.sync_state)}


def shown_bonus(row: Bonus) -> dict[str, Any]:
    return {"id": row.id, **bonus_json(row), "state": BONUS_STATES.get(row.state, row.state)}


def _has_bucket(session: Session, bucket: str) -> ColumnElement[bool]:
    """The unit's assignment has a dialogue annotated with `bucket` (static annotation)."""
    if session.get_bind().dialect.name == "sqlite":
        found = text("EXISTS (SELECT 1 FROM json_each(assignments.data, '$.dialogues') d, "
                     "json_each(d.value, '$.source.annotation_tasks') t "
                     "WHERE t.value = :bucket)")
    else:
        found = text("EXISTS (SELECT 1 FROM json_array_elements(assignments.data -> "
                     "'dialogues') d, json_array_elements_text(d -> 'source' -> "
                     "'annotation_tasks') t WHERE t = :bucket)")
    return found.bindparams(bucket=bucket)  # type: ignore[return-value]


def _filtered(session: Session, query: Select, task_id: int, chosen: QueueFilter,
              chat_buckets: list[str] | None) -> Select:
    query = (query.select_from(Submission).join(Unit, Unit.id == Submission.unit_id)
             .join(Assignment, Assignment.id == Unit.assignment_id)
             .join(Worker, Worker.id == Submission.worker_id)
             .outerjoin(ReviewDecision, ReviewDecision.unit_id == Unit.id)
             .where(in_task(task_id), Unit.pool != JUDGE_POOL))  # judges: judges/review.py
    if chosen.worker:
        query = query.where(Worker.pseudonym == chosen.worker)
    if chosen.status:
        query = query.where(Unit.status == chosen.status)
    if chosen.decision == "none":
        query = query.where(ReviewDecision.id.is_(None))
    elif chosen.decision:
        query = query.where(ReviewDecision.decision == chosen.decision)
    if chosen.flag == "flagged":
        query = query.where(Submission.flagged_for_review.is_(True))
    elif chosen.flag == "unverified":
        query = query.where(Unit.provider_verified.is_(False))
    if chosen.pool == MAIN_POOL:
        query = query.where(Unit.pool.not_in(QUALITY_POOLS))
    elif chosen.pool:
        query = query.where(Unit.pool == chosen.pool)
    if chosen.bucket:
        if chat_buckets is None:
            query = query.where(_has_bucket(session, chosen.bucket))
        elif chosen.bucket not in chat_buckets:  # every chat unit asks the same buckets
            query = query.where(Submission.id.is_(None))
    return query


def _item_buckets(data: dict[str, Any], chat_buckets: list[str] | None) -> list[str]:
    if chat_buckets is not None:
        return chat_buckets
    found: dict[str, None] = {}
    for item in data.get("dialogues", []):
        found.update(dict.fromkeys(item.get("source", {}).get("annotation_tasks", [])))
    return list(found)


def _item_bots(data: dict[str, Any]) -> list[str]:
    if "bots" in data:
        return list(data["bots"])
    found: dict[str, None] = {}
    for item in data.get("dialogues", []):
        source = item.get("source", {})
        found.update(dict.fromkeys(str(source[k]) for k in ("bot", "bot2") if source.get(k)))
    return list(found)


def _columns(session: Session) -> tuple[Any, ...]:
    return (Unit.public_id, Worker.pseudonym, Unit.pool, Unit.status, Submission.created_at,
            seconds_between(session, Unit.assigned_at, Submission.created_at),
            ReviewDecision, Submission.flagged_for_review, Unit.provider_verified,
            Assignment.data)


def _item(row: Any, chat_buckets: list[str] | None) -> dict[str, Any]:
    (unit_id, worker, pool, status, submitted, duration, decision, flagged, verified,
     data) = row
    # chat tasks keep one pool per bot spec: all of them are main work
    shown_pool = pool if pool in QUALITY_POOLS else MAIN_POOL
    return {"unit_id": unit_id, "worker": worker, "pool": shown_pool,
            "kind": "static" if chat_buckets is None else "chat",
            "status": status, "submitted_at": iso_utc(submitted),
            "duration_s": None if duration is None else round(float(duration), 3),
            "decision": shown_decision(decision), "flagged": bool(flagged),
            "verified": verified, "buckets": _item_buckets(data, chat_buckets),
            "bots": _item_bots(data)}


def review_page(session: Session, task_id: int, chosen: QueueFilter, offset: int, limit: int,
                chat_buckets: list[str] | None) -> dict[str, Any]:
    """Submitted units, newest first. `chat_buckets`: the buckets every unit of a chat task
    asks (None for static tasks, whose units say their own)."""
    if offset < 0 or not 1 <= limit <= MAX_LIMIT:
        raise QueueRefused(f"offset must be 0 or more and limit between 1 and {MAX_LIMIT}", 400)
    total = session.scalar(_filtered(session, select(func.count()), task_id, chosen,
                                     chat_buckets))
    rows = session.execute(_filtered(session, select(*_columns(session)), task_id, chosen,
                                     chat_buckets)
                           .order_by(Submission.id.desc()).offset(offset).limit(limit)).all()
    return {"total": total, "offset": offset, "limit": limit,
            "items": [_item(row, chat_buckets) for row in rows]}


def submission_record(session: Session, task_id: int, public_id: str,
                      chat_buckets: list[str] | None) -> tuple[dict[str, Any], int, int] | None:
    """One submitted unit as the queue lists it, with its stored answers, timings, bonuses and
    conversations; and its worker's id and unit id (for the worker page's view). None: no
    submission of that unit in the task."""
    found = session.execute(
        _filtered(session, select(*_columns(session), Submission.answers, Submission.timings,
                                  Submission.worker_id, Unit.id, Unit.times_expired),
                  task_id, QueueFilter(), chat_buckets)
        .where(Unit.public_id == public_id)).first()
    if found is None:
        return None
    record = _item(found[:10], chat_buckets)
    answers, timings, worker_id, unit_id, attempt = found[10:]
    bonuses = session.scalars(select(Bonus).where(Bonus.unit_id == unit_id)
                              .order_by(Bonus.id)).all()
    record.update({
        "bonuses": [shown_bonus(b) for b in bonuses], "answers": answers, "timings": timings,
        "conversations": [] if chat_buckets is None else [
            {"conversation_id": chat.conversation_id, "bot": chat.bot, "status": chat.status,
             "position": chat.position,
             "messages": [{"index": m.index, "role": m.role, "text": m.text,
                           "labels": m.labels} for m in chat.messages]}
            for chat in transcripts(session.connection(), unit_id, attempt)],
        "dialogue_ids": _dialogue_ids(session, unit_id),
    })
    return record, worker_id, unit_id


def _dialogue_ids(session: Session, unit_id: int) -> dict[str, Any]:
    """The data's `dialogue_id` per opaque key of the unit's dialogues: the requester knows
    their dialogues by these (`demo-garden`), never by the keys the worker page gets."""
    data = session.scalar(select(Assignment.data)
                          .join(Unit, Unit.assignment_id == Assignment.id)
                          .where(Unit.id == unit_id)) or {}
    return {d["key"]: d.get("source", {}).get("dialogue_id")
            for d in data.get("dialogues", []) if isinstance(d, dict) and "key" in d}


def retry_failures(db: Database, provider: Provider, task_id: int) -> None:
    """Make the failed sends of the task due now and run one pass of the provider sync (the
    uncertain bonuses stay: only the requester knows whether the platform paid)."""
    now = utcnow()
    units = task_units(task_id)
    with db.session() as session:
        session.execute(update(ReviewDecision).where(
            ReviewDecision.unit_id.in_(units), FAILED_DECISION)
            .values(next_attempt_at=now).execution_options(synchronize_session=False))
        session.execute(update(Bonus).where(Bonus.unit_id.in_(units), Bonus.state == "failed")
                        .values(next_attempt_at=now)
                        .execution_options(synchronize_session=False))
    sync_due(db, provider, task_id)


def resolve_bonus(db: Database, task_id: int, bonus_id: int, paid: Any) -> None:
    """Settle an uncertain bonus after the requester checked the platform: paid, or back to
    be sent (its set-up kept when the platform had one, so it is paid, not set up again)."""
    if not isinstance(paid, bool):
        raise ReviewRefused('give "paid": true (the platform paid it) or false (it did not)')
    with db.session() as session:
        row = session.scalars(select(Bonus).join(Unit, Unit.id == Bonus.unit_id).join(Assignment)
                              .where(Bonus.id == bonus_id, in_task(task_id))
                              .with_for_update()).first()
        if row is None:
            raise ReviewRefused(f"no bonus {bonus_id} in this task", 404)
        if row.state != "uncertain":
            raise ReviewRefused(f"bonus {bonus_id} is {row.state}: only an uncertain bonus is "
                                "settled by hand", 409)
        now = utcnow()
        if paid:
            row.state, row.paid_at, row.last_error, row.next_attempt_at = "paid", now, None, None
        else:
            row.state = "set_up" if row.provider_ref else "pending"
            row.next_attempt_at = now

"""Where an LLM judge's work is kept (docs/judges.md): its units and each of its calls.

A judge is a worker of provider `model` whose id is `judge:<nickname>`. It gets a unit of its
own per item it answers (an assignment of a static task, or a person's chat unit), made
already assigned to it in the pool `judge`: no person's claim routes to that pool, and the
task's progress, exports and figures leave it out. The item's key is the unit's
`provider_session` (the judge's "visit"). Answers are submitted by `work.submit`, through the
task kind's own checks. Each call of the model is a `judge_calls` row; an item's accepted
answer waits there until its unit is submitted, so a run killed and started again asks only
what had no answer yet.
"""

from __future__ import annotations

import secrets
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from collection_and_annotations.blueprints.base import JUDGE_POOL
from collection_and_annotations.engine.allocation import lock_worker
from collection_and_annotations.engine.runs import DONE_STATUSES
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Assignment, JudgeCall, Unit, utcnow

JUDGE_PROVIDER = "model"
JUDGE_PREFIX = "judge:"  # a judge's provider worker id: `judge:<nickname>`
ANSWER, INVALID, FAILED = "answer", "invalid", "failed"  # JudgeCall.outcome


@dataclass(frozen=True)
class JudgeItem:
    """Something a judge answers once: `key` names it among the task's items."""

    key: str
    assignment_id: int
    data: dict[str, Any]


@dataclass(frozen=True)
class JudgeUnit:
    """A judge's open unit (one item), as the runner works on it."""

    id: int
    public_id: str
    key: str
    data: dict[str, Any]
    layout: dict[str, Any] | None
    new: bool  # made by this run: nothing of it is stored yet


class Call(NamedTuple):
    """One call of a judge's model on one bucket of one dialogue of its unit."""

    unit_id: int
    worker_id: int
    dialogue_key: str
    bucket: str
    outcome: str  # ANSWER | INVALID | FAILED
    answer: Any  # ANSWER: the bucket's value ({target: value}), as a worker submits it
    reason: str | None
    reply: str | None
    prompt_sha256: str
    settings: dict[str, Any]
    schema_used: bool
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None
    latency_ms: int | None


@dataclass(frozen=True)
class JudgeUnits:
    worker_id: int  # the judge's
    open: list[JudgeUnit]  # to work on, in the items' order
    done: int  # items it had answered before


def open_judge_units(
    db: Database, task_id: int, run_id: int, nickname: str, items: Sequence[JudgeItem],
    layout: Callable[[JudgeItem], dict[str, Any] | None], limit: int | None = None,
) -> JudgeUnits:
    """The judge's open units of `items` (at most `limit`), each made where it has none yet
    (with `layout(item)`). The judge (a worker) is made on first use; its row stays locked
    meanwhile, so two runs of one judge make an item's unit once."""
    with db.transaction() as connection:
        worker_id = lock_worker(connection, JUDGE_PROVIDER, JUDGE_PREFIX + nickname)
        held = {key: (unit_id, public_id, status, unit_layout) for key, unit_id, public_id,
                status, unit_layout in connection.execute(
                    select(Unit.provider_session, Unit.id, Unit.public_id, Unit.status,
                           Unit.layout).join(Assignment)
                    .where(Assignment.task_id == task_id, Unit.worker_id == worker_id,
                           Unit.pool == JUDGE_POOL,
                           Unit.status.in_(("assigned", *DONE_STATUSES))))}
        done = sum(1 for item in items if item.key in held
                   and held[item.key][2] in DONE_STATUSES)
        units: list[JudgeUnit] = []
        now = utcnow()
        for item in items:
            if limit is not None and len(units) >= limit:
                break
            found = held.get(item.key)
            if found is not None and found[2] in DONE_STATUSES:
                continue
            if found is None:
                unit_layout = layout(item)
                public_id = f"u_{secrets.token_hex(10)}"
                unit_id = connection.scalar(insert(Unit).returning(Unit.id).values(
                    public_id=public_id, assignment_id=item.assignment_id, task_run_id=run_id,
                    pool=JUDGE_POOL, status="assigned", worker_id=worker_id,
                    provider_session=item.key, assigned_at=now, layout=unit_layout,
                    claim_order=0))
                found = (unit_id, public_id, "new", unit_layout)
            units.append(JudgeUnit(found[0], found[1], item.key, item.data, found[3],
                                   found[2] == "new"))
        return JudgeUnits(worker_id, units, done)


_INSERT_CALL = insert(JudgeCall)


def record_call(db: Database, call: Call) -> bool:
    """Store one call; False when it is an answer to an item that already has one (another
    run of the same judge answered it first: `answers` gives that one)."""
    try:
        with db.transaction() as connection:
            connection.execute(_INSERT_CALL, {**call._asdict(), "created_at": utcnow()})
    except IntegrityError:
        if call.outcome != ANSWER:
            raise
        return False
    return True


def answers(db: Database, unit_ids: Sequence[int]) -> dict[int, dict[tuple[str, str], Any]]:
    """The accepted answers of the units' items: unit -> (dialogue key, bucket) -> value."""
    found: dict[int, dict[tuple[str, str], Any]] = {unit_id: {} for unit_id in unit_ids}
    with db.snapshot() as connection:
        for start in range(0, len(unit_ids), 1000):
            for unit_id, key, bucket, answer in connection.execute(
                    select(JudgeCall.unit_id, JudgeCall.dialogue_key, JudgeCall.bucket,
                           JudgeCall.answer)
                    .where(JudgeCall.unit_id.in_(unit_ids[start:start + 1000]),
                           JudgeCall.outcome == ANSWER)):
                found[unit_id][(key, bucket)] = answer
    return found


def call_totals(db: Database, unit_id: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What the calls of a unit cost in all (retries and refused replies included), and the
    model's time per item as the page's timings give a worker's (`steps`): stored with its
    submission. A call without a reply cost nothing; the cost is known when every reply's
    is."""
    with db.snapshot() as connection:
        rows = connection.execute(
            select(JudgeCall.dialogue_key, JudgeCall.bucket, JudgeCall.outcome,
                   JudgeCall.reply.is_not(None), JudgeCall.input_tokens,
                   JudgeCall.output_tokens, JudgeCall.cost, JudgeCall.latency_ms)
            .where(JudgeCall.unit_id == unit_id).order_by(JudgeCall.id)).all()
    replies = [row for row in rows if row[3]]
    latency: dict[tuple[str, str], int] = defaultdict(int)
    for key, bucket, *_, milliseconds in rows:
        latency[(key, bucket)] += milliseconds or 0
    totals = {
        "calls": len(rows), "invalid_replies": sum(row[2] == INVALID for row in rows),
        "failed_calls": sum(row[2] == FAILED for row in rows),
        "input_tokens": _total(row[4] for row in replies),
        "output_tokens": _total(row[5] for row in replies),
        "cost": _total(row[6] for row in replies),
        "latency_ms": sum(row[7] or 0 for row in rows)}
    return totals, [{"dialogue": key, "bucket": bucket, "intervals": [[0, ms]]}
                    for (key, bucket), ms in sorted(latency.items())]


def _total(values: Any) -> Any:
    """The sum, None when any value (or every one) is unknown."""
    values = list(values)
    return None if not values or None in values else sum(values)

"""What the requester dashboard shows of a task: the overview, the workers and the payments that
did not reach the platform (docs/dashboard.md).

The page asks every few seconds and a task may hold 150,000 units, so each figure is an
aggregate query (medians too: a window over the durations, only the middle rows come back);
Python only shapes the results.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, case, func, literal, or_, select
from sqlalchemy.orm import Session

from collection_and_annotations.blueprints.base import (
    GOLD_POOL,
    JUDGE_POOL,
    QUALITY_POOLS,
    SCREENING_POOL,
)
from collection_and_annotations.engine.provider_sync import FAILED_DECISION, UNSETTLED_BONUS
from collection_and_annotations.engine.runs import DONE_STATUSES, Progress, real_work
from collection_and_annotations.quality.stats import Outcomes, task_outcomes, worker_outcomes
from collection_and_annotations.storage.models import (
    Assignment,
    Bonus,
    Conversation,
    GrantedQualification,
    Qualification,
    ReviewDecision,
    Submission,
    TaskRun,
    Unit,
    Worker,
    iso_utc,
    utcnow,
)

# throughput: the narrowest bucket that shows the whole task in at most MAX_POINTS points
BUCKET_SECONDS = (60, 300, 900, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400)
MAX_POINTS = 120
RUN_STATES = {"completed": "complete"}  # TaskRun.status -> the overview's word
# a unit's status as the overview's runs count it: done ones as completed
_SHOWN_STATUS = case((Unit.status.in_(DONE_STATUSES), "completed"), else_=Unit.status)


def in_task(task_id: int) -> ColumnElement[bool]:
    """Units of the task (join Assignment)."""
    return Assignment.task_id == task_id


def seconds_between(session: Session, start: Any, end: Any) -> ColumnElement[float]:
    """`end - start` in seconds, as SQL (SQLite stores times as text)."""
    if session.get_bind().dialect.name == "sqlite":
        return (func.julianday(end) - func.julianday(start)) * 86400.0
    return func.extract("epoch", end - start)


def _submitted_work(task_id: int):  # noqa: ANN202 (a select under construction)
    return (select(Submission.id).join(Unit, Unit.id == Submission.unit_id)
            .join(Assignment, Assignment.id == Unit.assignment_id)
            .where(in_task(task_id), real_work()))


@dataclass(frozen=True)
class Timing:
    """Seconds from taking a unit to submitting it."""

    count: int = 0
    median_s: float | None = None
    p90_s: float | None = None


# (numerator, denominator) of each quantile shown: the median and the 90th percentile
MEDIAN, P90 = (1, 2), (9, 10)


def _ranks(n: Any, share: tuple[int, int]) -> tuple[Any, Any]:
    """The ranks (from 0) of the two rows around the `share` quantile of `n` rows, as
    numpy's default (linear) interpolation places it: floor and ceiling of share * (n - 1).
    Integer arithmetic, so the SQL that picks the rows and Python that reads them agree."""
    numerator, denominator = share
    return (numerator * (n - 1) // denominator,
            (numerator * (n - 1) + denominator - 1) // denominator)


def _quantile(values: Mapping[int, float], n: int, share: tuple[int, int]) -> float:
    """The `share` quantile, interpolated between the two rows around it (rows by rank)."""
    low, high = _ranks(n, share)
    numerator, denominator = share
    weight = (numerator * (n - 1) - low * denominator) / denominator
    return round(values[low] + (values[high] - values[low]) * weight, 3)


def unit_timings(session: Session, task_id: int, by_worker: bool) -> dict[int, Timing]:
    """Median and 90th percentile of the time per submitted unit of real work, over the task
    (key 0) or per worker id. The database ranks the durations; only the rows around the
    two quantiles come back."""
    key = Submission.worker_id if by_worker else literal(0)
    durations = (_submitted_work(task_id).with_only_columns(
        key.label("k"), seconds_between(session, Unit.assigned_at, Submission.created_at)
        .label("d")).where(Unit.assigned_at.is_not(None)).subquery())
    window = {"partition_by": durations.c.k} if by_worker else {}
    ranked = select(durations.c.k, durations.c.d,
                    (func.row_number().over(order_by=durations.c.d, **window) - 1).label("r"),
                    func.count().over(**window).label("n")).subquery()
    r, n = ranked.c.r, ranked.c.n
    wanted = or_(*(r == rank for share in (MEDIAN, P90) for rank in _ranks(n, share)))
    rows: dict[int, tuple[int, dict[int, float]]] = {}
    for k, d, rank, count in session.execute(select(ranked.c.k, ranked.c.d, r, n)
                                             .where(wanted)):
        rows.setdefault(k, (count, {}))[1][rank] = float(d)
    return {k: Timing(count, _quantile(values, count, MEDIAN), _quantile(values, count, P90))
            for k, (count, values) in rows.items()}


def throughput(session: Session, task_id: int, now: datetime) -> dict[str, Any]:
    """Submissions of real work per time bucket, from the first one to now."""
    first = session.scalar(_submitted_work(task_id).with_only_columns(
        func.min(Submission.created_at)))
    if first is None:
        return {"bucket_seconds": BUCKET_SECONDS[0], "points": []}
    span = (now - first).total_seconds()
    width = next((w for w in BUCKET_SECONDS if span / w < MAX_POINTS), BUCKET_SECONDS[-1])
    epoch = datetime(1970, 1, 1)
    bucket = func.floor(seconds_between(session, literal(epoch), Submission.created_at) / width)
    counts = dict(session.execute(_submitted_work(task_id).with_only_columns(
        bucket, func.count()).group_by(bucket)).all())
    start = int((first - epoch).total_seconds() // width)
    end = max(start, int((now - epoch).total_seconds() // width))
    return {"bucket_seconds": width, "points": [
        {"t": iso_utc(epoch + timedelta(seconds=b * width)),
         "submissions": int(counts.get(b, 0))} for b in range(start, end + 1)]}


def _pass_rate(passed: int, failed: int) -> dict[str, Any]:
    total = passed + failed
    return {"passed": passed, "failed": failed,
            "pass_rate": round(passed / total, 4) if total else None}


def runs(session: Session, task_id: int, status: ColumnElement[str], *where: Any,
         zero: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The task's runs, oldest first, each with its units (those `where` keeps) counted by
    `status` (a column or an expression over Unit), the `zero` ones shown when there are none."""
    rows = session.scalars(select(TaskRun).where(TaskRun.task_id == task_id)
                           .order_by(TaskRun.id)).all()
    counts: dict[int, dict[str, int]] = {r.id: dict.fromkeys(zero, 0) for r in rows}
    for run_id, shown, count in session.execute(
            select(Unit.task_run_id, status, func.count()).join(Assignment)
            .where(in_task(task_id), *where).group_by(Unit.task_run_id, status)):
        counts[run_id][shown] = count
    return [{"run_id": r.id, "status": r.status, "started_at": iso_utc(r.created_at),
             "units": counts[r.id]} for r in rows]


def _quotas(session: Session, task_id: int, pools: Mapping[str, str]) -> list[dict[str, Any]]:
    """Per bot spec of a chat task: units wanted (open and done), done and held now."""
    if not pools:
        return []
    counts = {pool: {"needed": 0, "done": 0, "in_progress": 0} for pool in pools}
    for pool, status, count in session.execute(
            select(Unit.pool, Unit.status, func.count()).join(Assignment)
            .where(in_task(task_id), Unit.pool.in_(list(pools)),
                   Unit.status.in_(("launched", "assigned", *DONE_STATUSES)))
            .group_by(Unit.pool, Unit.status)):
        counts[pool]["needed"] += count
        if status in DONE_STATUSES:
            counts[pool]["done"] += count
        elif status == "assigned":
            counts[pool]["in_progress"] += count
    return [{"bot": spec, **counts[pool]} for pool, spec in pools.items()]


def sync_failures(session: Session, task_id: int) -> dict[str, Any]:
    """Decisions whose send failed; bonuses that failed or may or may not have been paid."""
    reviews = session.execute(
        select(Unit.public_id, ReviewDecision).join(Unit, Unit.id == ReviewDecision.unit_id)
        .join(Assignment).where(in_task(task_id), FAILED_DECISION)
        .order_by(ReviewDecision.id)).all()
    bonuses = session.execute(
        select(Unit.public_id, Worker.pseudonym, Bonus).join(Unit, Unit.id == Bonus.unit_id)
        .join(Assignment).join(Worker, Worker.id == Bonus.worker_id)
        .where(in_task(task_id), UNSETTLED_BONUS)
        .order_by(Bonus.id)).all()
    return {
        "reviews": [{"unit_id": unit_id, "decision": row.decision, "attempts": row.attempts,
                     "last_error": row.last_error} for unit_id, row in reviews],
        "bonuses": [{"id": row.id, "unit_id": unit_id, "worker": worker,
                     "amount": row.amount_cents / 100, "state": row.state,
                     "attempts": row.attempts, "last_error": row.last_error}
                    for unit_id, worker, row in bonuses],
    }


def overview(session: Session, task_id: int, run_id: int, progress: Progress,
             chat_pools: Mapping[str, str], taking_work: bool = True) -> dict[str, Any]:
    """Everything of the overview but the names the server adds (task, provider).
    `progress` from `runs.unit_counts`; `chat_pools` pool -> bot spec ({} without chats);
    `taking_work` False: a review-only server (`serve --task`), whose state says so."""
    now = utcnow()
    status = session.scalar(select(TaskRun.status).where(TaskRun.id == run_id)) or "running"
    if progress.total and progress.complete:
        state = "complete"
    else:
        state = RUN_STATES.get(status, status) if taking_work else "review_only"
    timing = unit_timings(session, task_id, by_worker=False).get(0, Timing())
    outcomes = task_outcomes(session, task_id)
    # the quality-control pools the task has units in: it screens or mixes in gold
    quality = set(session.scalars(select(Unit.pool).join(Assignment).where(
        in_task(task_id), Unit.pool.in_(QUALITY_POOLS)).distinct()))
    live = session.scalar(select(func.count()).select_from(Conversation)
                          .join(Unit, Unit.id == Conversation.unit_id).join(Assignment)
                          .where(in_task(task_id), Conversation.status == "active",
                                 Unit.status == "assigned")) or 0
    return {
        "state": state, "server_time": iso_utc(now),
        "progress": {"total": progress.total, "done": progress.done,
                     "in_progress": progress.in_progress, "waiting": progress.waiting},
        "runs": [{**run, "status": RUN_STATES.get(run["status"], run["status"])}
                 for run in runs(session, task_id, _SHOWN_STATUS, real_work(),
                                 Unit.status.in_(("launched", "assigned", *DONE_STATUSES)),
                                 zero=("launched", "assigned", "completed"))],
        "throughput": throughput(session, task_id, now),
        "time_per_unit": asdict(timing),
        "screening": {**_pass_rate(outcomes.screening_passed, outcomes.screening_failed),
                      "used": SCREENING_POOL in quality},
        "gold": {**_pass_rate(outcomes.gold_passed, outcomes.gold_failed),
                 "used": GOLD_POOL in quality},
        "live_chats": live,
        "quotas": _quotas(session, task_id, chat_pools),
        "sync_failures": {kind: len(failed)
                          for kind, failed in sync_failures(session, task_id).items()},
    }


def workers(session: Session, task_id: int, block: str,
            blocklist: Collection[str] = ()) -> list[dict[str, Any]]:
    """Every worker who held a unit of the task (newest activity first; judges are not
    workers). `block`: the task's block qualification; `blocklist`: provider worker ids the
    conf's block list names. Flags: blocked; disqualified (failed the screening, or blocked
    after failed golds); flagged_work (a submission flagged for review); unverified (a visit
    the platform does not list)."""
    done = and_(Unit.status.in_(DONE_STATUSES), real_work())
    rows = session.execute(
        select(Worker.id, Worker.pseudonym, Worker.provider, Worker.provider_worker_id,
               func.count(case((done, 1))), func.count(case((Unit.status == "assigned", 1))),
               func.max(func.coalesce(Unit.completed_at, Unit.assigned_at)),
               func.count(case((Unit.provider_verified.is_(False), 1))))
        .join(Unit, Unit.worker_id == Worker.id).join(Assignment)
        .where(in_task(task_id), Unit.pool != JUDGE_POOL)
        .group_by(Worker.id, Worker.pseudonym, Worker.provider, Worker.provider_worker_id)
    ).all()
    ids = select(Unit.worker_id).join(Assignment).where(in_task(task_id))
    flagged = dict(session.execute(
        select(Submission.worker_id, func.count()).join(Unit, Unit.id == Submission.unit_id)
        .join(Assignment).where(in_task(task_id), Submission.flagged_for_review.is_(True))
        .group_by(Submission.worker_id)).all())
    grants: dict[int, list[dict[str, Any]]] = {}
    for worker_id, name, value in session.execute(
            select(GrantedQualification.worker_id, Qualification.name, GrantedQualification.value)
            .join(Qualification, Qualification.id == GrantedQualification.qualification_id)
            .where(GrantedQualification.worker_id.in_(ids)).order_by(Qualification.name)):
        grants.setdefault(worker_id, []).append({"name": name, "value": value})
    timings = unit_timings(session, task_id, by_worker=True)
    outcomes = worker_outcomes(session, task_id)
    shown = []
    for worker_id, pseudonym, provider, provider_id, units_done, held, last, forged in rows:
        outcome = outcomes.get(pseudonym, Outcomes())
        quals = grants.get(worker_id, [])
        blocked = provider_id in blocklist or any(q["name"] == block for q in quals)
        screening = ("passed" if outcome.screening_passed
                     else "failed" if outcome.screening_failed else None)
        flags = [name for name, on in (
            ("blocked", blocked),
            ("disqualified", screening == "failed" or (blocked and outcome.gold_failed > 0)),
            ("flagged_work", flagged.get(worker_id, 0) > 0),
            ("unverified", forged > 0)) if on]
        shown.append({
            "pseudonym": pseudonym, "provider": provider, "units_done": units_done,
            "in_progress": held, "median_s": timings.get(worker_id, Timing()).median_s,
            "last_seen": iso_utc(last) if last else None, "screening": screening,
            "gold": {"passed": outcome.gold_passed, "failed": outcome.gold_failed},
            "qualifications": quals, "flags": flags,
        })
    shown.sort(key=lambda w: w["last_seen"] or "", reverse=True)
    return shown

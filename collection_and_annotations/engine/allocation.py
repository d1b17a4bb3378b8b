"""Give a worker a unit, inside one database transaction.

Correct under concurrent claims: on PostgreSQL the worker row is locked and units are taken with
FOR UPDATE SKIP LOCKED; on SQLite every write transaction is BEGIN IMMEDIATE. The unique key of
`worker_groups` is the last guard against a worker getting a group twice. The statements are
in `work_sql`.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    DateTime,
    Row,
    Update,
    bindparam,
    delete,
    func,
    select,
    update,
)
from sqlalchemy.orm import Session

from collection_and_annotations.blueprints.base import (
    MAIN_POOL,
    SCREENING_POOL,
    NoWork,
    ResumeUnit,
    WorkerContext,
)
from collection_and_annotations.engine.work import WorkRefused, worker_step
from collection_and_annotations.engine.work_sql import (
    AFTER_TAKE,
    TAKE_UNIT,
    UPSERT_WORKER,
    WORKER_STATE,
)
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import (
    Conversation,
    Draft,
    TaskRun,
    Unit,
    WorkerGroup,
    utcnow,
)


@dataclass(frozen=True)
class Limits:
    allowed_concurrent: int = 1
    maximum_units_per_worker: int = 0
    max_num_concurrent_units: int = 0
    assignment_duration_in_seconds: int = 3600
    # `required_qualifications`: a worker lacking one of these gets no unit of any pool
    required_qualifications: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Claim:
    worker_id: int
    unit_public_id: str
    status: str


# Said to a worker lacking a required qualification (granted by another task's screening).
NOT_QUALIFIED = ("Thank you for your interest. This task is open only to workers who hold "
                 "{names}, which a screening task grants: finish that task first, then open "
                 "this link again. If you did it and did not qualify, there is no work for "
                 "you here.")


class ClaimRefused(WorkRefused):
    """The worker gets no unit; `status` is the HTTP status the API answers with."""

    def __init__(self, message: str, status: int = 409):
        super().__init__(message, status)


def lock_worker(connection: Connection, provider: str, provider_worker_id: str) -> int:
    """The worker's id, created on first sight; the row stays locked until the transaction
    ends, so one worker's claims happen one by one (a single upsert, one round trip)."""
    return connection.execute(UPSERT_WORKER.on(connection), {
        "provider": provider, "provider_worker_id": provider_worker_id,
        "now": utcnow()}).scalar_one()


def _worker_and_units(connection: Connection, provider: str, provider_worker_id: str,
                      task_id: int
                      ) -> tuple[int, list[tuple[str, str, str | None, str]], frozenset[str]]:
    """`lock_worker`, the worker's units in the task, newest first ((public id, status,
    provider session, pool) each), and the names of the qualifications they hold: read after
    the row is locked, so every earlier claim of theirs is seen."""
    worker_id = lock_worker(connection, provider, provider_worker_id)
    rows = connection.execute(WORKER_STATE, {"task_id": task_id, "worker_id": worker_id}).all()
    return worker_id, [tuple(row)[1:] for row in rows if row.status is not None], \
        frozenset(row.name for row in rows if row.status is None)


def release_statement(*condition: ColumnElement[bool]) -> Update:
    """The one statement that returns the units meeting `condition` to the pool, returning
    their ids (built once per condition, its values bound at each call).

    A conditional UPDATE: the condition is re-checked on each row as it is written, so a
    submit that commits first wins (its unit is `completed` and stays so). Rows another
    transaction holds (a submit in progress) are skipped, not waited for, so concurrent
    sweeps cannot deadlock; the next sweep sees them."""
    locked = (select(Unit.id).where(*condition).order_by(Unit.id)
              .with_for_update(skip_locked=True).scalar_subquery())
    return (update(Unit).where(Unit.id.in_(locked), *condition)
            .values(status="launched", worker_id=None, provider_session=None, assigned_at=None,
                    deadline=None, times_expired=Unit.times_expired + 1)
            .returning(Unit.id).execution_options(synchronize_session=False))


_OVERDUE = release_statement(Unit.task_run_id == bindparam("run_id"),
                             Unit.status == "assigned", Unit.deadline < bindparam("now"))
_ONE_UNIT = release_statement(Unit.id == bindparam("unit_id"), Unit.status == "assigned")
_RELEASED = bindparam("ids", expanding=True)
_FORGET_GROUPS = delete(WorkerGroup).where(WorkerGroup.unit_id.in_(_RELEASED))
_FORGET_DRAFTS = delete(Draft).where(Draft.unit_id.in_(_RELEASED))
# A chat in progress ends, its transcript kept and marked.
_END_CHATS = (update(Conversation)
              .where(Conversation.unit_id.in_(_RELEASED), Conversation.status == "active")
              .values(status=bindparam("chat_status"),
                      ended_at=bindparam("now", type_=DateTime()))
              .execution_options(synchronize_session=False))


def expire_overdue(connection: Connection | Session, run_id: int) -> int:
    """Return units whose worker ran out of time to the pool; returns how many. Group rows,
    drafts and live chats are cleaned for exactly the units that changed."""
    return len(release_units(connection, _OVERDUE, {"run_id": run_id, "now": utcnow()},
                             "timed_out"))


def return_unit(connection: Connection | Session, unit_id: int, chat_status: str) -> bool:
    """Give one assigned unit back to the pool now (its chat failed for good); False when it
    is no longer assigned. Its open chat ends with `chat_status`."""
    return bool(release_units(connection, _ONE_UNIT, {"unit_id": unit_id}, chat_status))


def release_units(connection: Connection | Session, statement: Update, values: dict[str, Any],
                  chat_status: str) -> list[int]:
    """Return the units `statement` (`release_statement`) releases with `values` to the pool;
    returns their ids."""
    ids = list(connection.scalars(statement, values))
    if ids:
        connection.execute(_FORGET_GROUPS, {"ids": ids})
        connection.execute(_FORGET_DRAFTS, {"ids": ids})
        connection.execute(_END_CHATS, {"ids": ids, "chat_status": chat_status,
                                        "now": utcnow()})
    return ids


def _check_limits(connection: Connection, run_id: int, held: list[tuple[str, str | None]],
                  limits: Limits) -> None:
    """`held`: (status, provider session) of the worker's units in the task."""
    if limits.allowed_concurrent > 0:
        open_count = sum(1 for status, _ in held if status == "assigned")
        if open_count >= limits.allowed_concurrent:
            raise ClaimRefused(f"you already have {open_count} unit(s) open in this task; "
                               "submit one before taking another")
    if limits.maximum_units_per_worker > 0 and len(held) >= limits.maximum_units_per_worker:
        raise ClaimRefused(f"you have reached the maximum of "
                           f"{limits.maximum_units_per_worker} units for this task")
    if limits.max_num_concurrent_units > 0:
        connection.execute(select(TaskRun.id).where(TaskRun.id == run_id).with_for_update())
        running = connection.scalar(
            select(func.count()).select_from(Unit)
            .where(Unit.task_run_id == run_id, Unit.status == "assigned")
        )
        if running >= limits.max_num_concurrent_units:
            raise ClaimRefused("the task has as many workers as it allows at once; "
                               "try again in a few minutes")


def _claimant(task_id: int, run_id: int, worker_id: int, provider_worker_id: str,
              provider_session: str, duration: int) -> dict[str, Any]:
    """The binds of `TAKE_UNIT`, but the pool: who takes a unit, in which run, until when."""
    now = utcnow()
    return {"run_id": run_id, "task_id": task_id, "worker_id": worker_id,
            "provider_worker_id": provider_worker_id, "session_id": provider_session,
            "now": now, "deadline": now + timedelta(seconds=duration) if duration > 0 else None}


def _take_free_unit(connection: Connection, pools: list[str], claimant: dict[str, Any]
                    ) -> Row | None:
    """Assign the first unit this worker may take from the first pool that has one, note its
    groups as theirs and clear drafts an earlier worker left on it."""
    take = TAKE_UNIT.on(connection)
    for pool in pools:
        taken = connection.execute(take, {**claimant, "pool": pool}).first()
        if taken is None:
            continue
        for statement in AFTER_TAKE.on(connection):
            connection.execute(statement, {**claimant, "unit_id": taken.id,
                                           "assignment_id": taken.assignment_id})
        return taken
    return None


def _resumed(worker_id: int, held: list[tuple[str, str, str | None, str]],
             provider_session: str) -> Claim | None:
    """The unit of this visit (provider session) when the worker already has one. A finished
    screening unit does not end the visit: real work follows it."""
    for public_id, status, session_id, pool in held:
        if session_id == provider_session and not (
            pool == SCREENING_POOL and status != "assigned"
        ):
            return Claim(worker_id, public_id, status)
    return None


def _pools(connection: Connection, task_id: int, run_id: int, worker_id: int,
           provider_worker_id: str, held: list[tuple[str, str, str | None, str]],
           qualifications: frozenset[str], limits: Limits,
           pools_for: Callable[[Connection, WorkerContext], list[str]]) -> list[str] | Claim:
    """The pools to take a new unit from, in order, as the task kind routes this worker,
    once they hold the required qualifications and the limits allow one; or the unit they
    hold that the task kind sends them back to. Raises ClaimRefused."""
    missing = sorted(limits.required_qualifications - qualifications)
    if missing:
        raise ClaimRefused(NOT_QUALIFIED.format(names=", ".join(f"'{m}'" for m in missing)),
                           403)
    open_units = {pool: public_id for public_id, status, _, pool in reversed(held)
                  if status == "assigned"}  # newest last: it wins
    try:
        pools = pools_for(connection, WorkerContext(
            task_id, run_id, worker_id, provider_worker_id, qualifications,
            Counter(pool for *_, pool in held), open_units))
    except NoWork as exc:
        raise ClaimRefused(str(exc), exc.status) from None
    except ResumeUnit as exc:
        return Claim(worker_id, exc.public_id, "assigned")
    _check_limits(connection, run_id, [(status, sid) for _, status, sid, pool in held
                                       if pool != SCREENING_POOL or status == "assigned"],
                  limits)
    return pools


def _main_pool(_connection: Connection, _worker: WorkerContext) -> list[str]:
    return [MAIN_POOL]


class _Rehearsed(Exception):
    """Undoes the transaction of a claim that was only rehearsed (`may_claim`)."""


def may_claim(
    db: Database, task_id: int, run_id: int, provider: str, provider_worker_id: str,
    limits: Limits, blocked: frozenset[str] = frozenset(),
    pools_for: Callable[[Connection, WorkerContext], list[str]] = _main_pool,
) -> str | None:
    """None when this worker would get a unit on a new visit now, else why not. The claim
    itself runs and is rolled back, so the answer follows every rule a claim follows
    (limits, routing, groups already done)."""
    try:
        claim_unit(db, task_id, run_id, provider, provider_worker_id,
                   f"rehearsal-{secrets.token_hex(8)}", limits, blocked, pools_for,
                   rehearse=True)
    except ClaimRefused as exc:
        return str(exc)
    except _Rehearsed:
        return None
    raise AssertionError("a rehearsed claim always ends in _Rehearsed or ClaimRefused")


def claim_unit(
    db: Database, task_id: int, run_id: int, provider: str, provider_worker_id: str,
    provider_session: str, limits: Limits, blocked: frozenset[str] = frozenset(),
    pools_for: Callable[[Connection, WorkerContext], list[str]] = _main_pool,
    rehearse: bool = False,
) -> Claim:
    """Resume the unit of this (worker, provider session), or assign a new one from the first
    pool (as the task kind's `pools_for` routes this worker) that has one for them.
    `rehearse`: find the unit, then roll everything back (raises _Rehearsed)."""
    if provider_worker_id in blocked:
        raise ClaimRefused("this worker is not eligible for this task", status=403)
    with worker_step(db) as connection:
        # The worker's row, locked (one worker's claims happen one by one), and their units
        # here: for both resuming and the per-worker limits.
        worker_id, held, holds = _worker_and_units(connection, provider, provider_worker_id,
                                                   task_id)
        resumed = _resumed(worker_id, held, provider_session)
        if resumed is not None:
            return resumed
        pools = _pools(connection, task_id, run_id, worker_id, provider_worker_id, held, holds,
                       limits, pools_for)
        if isinstance(pools, Claim):
            if rehearse:
                raise _Rehearsed
            return pools
        claimant = _claimant(task_id, run_id, worker_id, provider_worker_id, provider_session,
                             limits.assignment_duration_in_seconds)
        taken = _take_free_unit(connection, pools, claimant)
        if taken is None and expire_overdue(connection, run_id):
            taken = _take_free_unit(connection, pools, claimant)
        if taken is None:
            raise ClaimRefused("there is no more work in this task for you; thank you!")
        if rehearse:
            raise _Rehearsed
        return Claim(worker_id, taken.public_id, "assigned")

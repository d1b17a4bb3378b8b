"""Start a run of a task: the task and its assignments persist, so a rerun continues them.

A run is served by one launcher at a time: the launcher renews the run's heartbeat, and a second
launcher for the same task refuses to start while the heartbeat is fresh, unless the first ran on
this host and its process is gone (engine/launcher.py): then it takes over at once. Between runs
the data
may change: assignments are keyed by their content, so an edited or removed line retires
the units of its old version (not served, not counted) and start-up reports what changed.
"""

from __future__ import annotations

import hashlib
import json
import random
import secrets
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    Table,
    delete,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.orm import Session

from collection_and_annotations.blueprints.base import (
    JUDGE_POOL,
    QUALITY_POOLS,
    AssignmentPlan,
    TaskBlueprint,
)
from collection_and_annotations.engine.launcher import is_gone as launcher_is_gone
from collection_and_annotations.errors import UserError
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import (
    CLAIM_ORDER_BITS,
    Assignment,
    AssignmentExclusion,
    AssignmentGroup,
    Draft,
    Task,
    TaskRun,
    Unit,
    WorkerGroup,
    iso_utc,
    utcnow,
)

OPEN_STATUSES = ("launched", "assigned")
DONE_STATUSES = ("completed", "accepted", "rejected", "soft_rejected")
# A launcher renews its run's heartbeat every second; one silent for this long is gone.
HEARTBEAT_TIMEOUT = timedelta(seconds=15)
INSERT_CHUNK = 5000
# Below this many new units the planner's old statistics are still good enough.
ANALYZE_AFTER_UNITS = 1000
T = TypeVar("T")


@dataclass(frozen=True)
class Progress:
    """Units of a task by what they mean to the requester (expired and retired ones are not
    needed)."""

    done: int
    in_progress: int
    waiting: int

    @classmethod
    def of(cls, counts: dict[str, int]) -> Progress:
        return cls(sum(counts.get(s, 0) for s in DONE_STATUSES),
                   counts.get("assigned", 0), counts.get("launched", 0))

    @property
    def total(self) -> int:
        return self.done + self.in_progress + self.waiting

    @property
    def complete(self) -> bool:
        """No unit waits for a worker or is being worked on."""
        return not self.waiting and not self.in_progress


@dataclass
class DataChanges:
    """How the task's data differs from what earlier runs served."""

    first_run: bool = True
    added: list[str] = field(default_factory=list)  # labels of new assignments
    removed: list[str] = field(default_factory=list)  # labels of assignments no longer planned
    changed: list[str] = field(default_factory=list)  # labels in both: same ids, new content
    retired_units: int = 0
    withdrawn_units: int = 0  # of those, units a worker held

    def summary(self) -> list[str]:
        """Lines for start-up; nothing when the data is as before."""
        if self.first_run or not (self.added or self.removed):
            return []
        changed = set(self.changed)
        added = [label for label in self.added if label not in changed]
        removed = [label for label in self.removed if label not in changed]
        lines = ["the task data changed since the last run:"]
        for what, labels in (("added", added), ("removed", removed),
                             ("changed text (same ids)", self.changed)):
            if labels:
                shown = "; ".join(labels[:5]) + (f"; ... ({len(labels) - 5} more)"
                                                 if len(labels) > 5 else "")
                lines.append(f"  {what}: {len(labels)} ({shown})")
        if self.retired_units:
            lines.append(f"  {self.retired_units} unfinished unit(s) of removed or changed items "
                         f"retired ({self.withdrawn_units} were held by a worker); completed "
                         "annotations are kept with the text they were made on")
        return lines


@dataclass(frozen=True)
class RunStart:
    task_id: int
    run_id: int
    changes: DataChanges
    taken_over: list[str] = field(default_factory=list)  # the dead launchers' `server`s


class TaskAlreadyServed(UserError):
    """Another launcher serves this task on the same database right now."""


def _chunks(rows: Iterable[T], size: int = INSERT_CHUNK) -> Iterator[list[T]]:
    chunk: list[T] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _insert_rows(connection: Connection, table: Table, columns: tuple[str, ...],
                 rows: Iterable[tuple[Any, ...]]) -> int:
    """Plain executemany of ready values (JSON already encoded, no datetimes), streamed in
    chunks: for hundreds of thousands of rows, SQLAlchemy's per-row parameter processing would
    cost more than the database. Returns the number of rows."""
    style = connection.dialect.paramstyle
    marks = ", ".join("?" if style == "qmark" else "%s" if style in ("format", "pyformat")
                      else f":{i + 1}" for i in range(len(columns)))
    sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({marks})"
    count = 0
    for chunk in _chunks(rows):
        connection.exec_driver_sql(sql, chunk)
        count += len(chunk)
    return count


def _claim_task(session: Session, task_name: str, blueprint_name: str,
                taken_over: list[str]) -> Task:
    """The task row, locked until the run is created, after checking nobody else serves it;
    `taken_over` gets the `server` of each run whose launcher is gone though its heartbeat is
    fresh."""
    task = session.scalars(
        select(Task).where(Task.name == task_name).with_for_update()
    ).first()
    if task is None:
        task = Task(name=task_name, blueprint=blueprint_name)
        session.add(task)
        session.flush()
        return task
    now = utcnow()
    for run in session.scalars(
        select(TaskRun).where(TaskRun.task_id == task.id, TaskRun.status == "running")
    ):
        if run.heartbeat_at is None or now - run.heartbeat_at >= HEARTBEAT_TIMEOUT:
            continue
        if launcher_is_gone(run.server, run.created_at):
            taken_over.append(run.server or "")
            continue
        seconds = int((now - run.heartbeat_at).total_seconds())
        raise TaskAlreadyServed(
            f"a server for task '{task_name}' is already running ({run.server or 'unknown'}"
            f", run {run.id} since {iso_utc(run.created_at)}, last heard from {seconds} s "
            "ago); stop it first (Ctrl-C in its terminal). If it was killed on another "
            f"machine, wait {int(HEARTBEAT_TIMEOUT.total_seconds())} s and start again"
        )
    session.execute(
        update(TaskRun).where(TaskRun.task_id == task.id, TaskRun.status == "running")
        .values(status="stopped", ended_at=now)
    )
    return task


def _create_assignments(session: Session, task_id: int, plans: list[AssignmentPlan]) -> None:
    """Bulk inserts (a task can hold hundreds of thousands of rows): no ORM objects."""
    connection = session.connection()  # Core executemany: the ORM's bulk path is much slower
    ids: dict[str, int] = {}
    now = utcnow()
    for chunk in _chunks(plans):
        returned = connection.execute(
            insert(Assignment.__table__).returning(Assignment.key, Assignment.id),
            [{"task_id": task_id, "key": p.key, "data": p.data, "created_at": now}
             for p in chunk],
        )
        ids.update((key, assignment_id) for key, assignment_id in returned)
    _insert_rows(connection, AssignmentGroup.__table__, ("assignment_id", "group_id"),
                 ((ids[p.key], g) for p in plans for g in p.groups))
    _insert_rows(connection, AssignmentExclusion.__table__,
                 ("assignment_id", "provider_worker_id"),
                 ((ids[p.key], w) for p in plans for w in p.excluded_workers))


def _retire(session: Session, unit_ids: list[int]) -> None:
    """Units whose data left the task: never served again, not counted as waiting."""
    for chunk in _chunks(unit_ids):
        session.execute(delete(WorkerGroup).where(WorkerGroup.unit_id.in_(chunk)))
        session.execute(delete(Draft).where(Draft.unit_id.in_(chunk)))
        session.execute(update(Unit).where(Unit.id.in_(chunk)).values(status="retired"))


def _set_retired(session: Session, assignment_ids: list[int], when: datetime | None) -> None:
    for chunk in _chunks(assignment_ids):
        session.execute(update(Assignment).where(Assignment.id.in_(chunk))
                        .values(retired_at=when).execution_options(synchronize_session=False))


def _sync_units(
    session: Session, task_id: int, run_id: int, plans: list[AssignmentPlan],
    blueprint: TaskBlueprint, seed: int | None, changes: DataChanges,
) -> int:
    """Each planned assignment gets the units its plan asks for: done ones are kept, unfinished
    ones move to this run (assigned workers keep theirs), missing ones are created with their
    own layout; units of assignments no longer planned are retired. Returns units created."""
    ids = dict(session.execute(
        select(Assignment.key, Assignment.id).where(Assignment.task_id == task_id)).all())
    planned = {ids[p.key] for p in plans}
    in_task = Unit.assignment_id.in_(select(Assignment.id).where(Assignment.task_id == task_id))
    # Units that count towards an assignment's annotators, per assignment: done or open ones,
    # and for a per-run supply (screening, gold) only its open ones; a judge's never.
    per_run = {ids[p.key] for p in plans if p.per_run}
    kept: dict[int, int] = defaultdict(int)
    for assignment_id, status, count in session.execute(
        select(Unit.assignment_id, Unit.status, func.count()).where(
            in_task, Unit.status.in_((*OPEN_STATUSES, *DONE_STATUSES)), Unit.pool != JUDGE_POOL)
        .group_by(Unit.assignment_id, Unit.status)
    ):
        if assignment_id not in per_run or status in OPEN_STATUSES:
            kept[assignment_id] += count
    unplanned = [a for a in ids.values() if a not in planned]
    retired: list[tuple[int, str]] = []
    for chunk in _chunks(unplanned):
        retired += session.execute(select(Unit.id, Unit.status).where(
            Unit.assignment_id.in_(chunk), Unit.status.in_(OPEN_STATUSES))).all()
    _retire(session, [u for u, _ in retired])
    retired_before = set(session.scalars(select(Assignment.id).where(
        Assignment.task_id == task_id, Assignment.retired_at.is_not(None))))
    _set_retired(session, [a for a in unplanned if a not in retired_before], utcnow())
    _set_retired(session, list(retired_before & planned), None)
    changes.retired_units = len(retired)
    changes.withdrawn_units = sum(1 for _, s in retired if s == "assigned")
    session.execute(
        update(Unit).where(in_task, Unit.status.in_(OPEN_STATUSES)).values(task_run_id=run_id)
        .execution_options(synchronize_session=False)
    )
    # Fewer annotators than before: drop free units beyond the new number (never held ones).
    surplus: list[int] = []
    for plan in plans:
        extra = kept.get(ids[plan.key], 0) - plan.annotators
        if extra > 0:
            surplus += session.scalars(
                select(Unit.id).where(Unit.assignment_id == ids[plan.key],
                                      Unit.status == "launched")
                .order_by(Unit.id.desc()).limit(extra)).all()
    for chunk in _chunks(surplus):
        session.execute(update(Unit).where(Unit.id.in_(chunk)).values(status="expired"))
    return _insert_rows(
        session.connection(), Unit.__table__,
        ("public_id", "assignment_id", "task_run_id", "pool", "status", "times_expired",
         "layout", "claim_order"),
        _new_units(plans, ids, kept, run_id, blueprint, seed),
    )


def _seeded_claim_order(seed: int, assignment_key: str, ordinal: int) -> int:
    """A unit's claim order drawn from the study's seed and the unit's identity (its
    assignment's key and its ordinal there): the same units get the same order in every
    database and run, and the keys are independent and uniform (a keyed hash)."""
    digest = hashlib.blake2b(f"{seed}:{assignment_key}:{ordinal}".encode(), digest_size=8)
    return int.from_bytes(digest.digest()) >> (64 - CLAIM_ORDER_BITS)


def _new_units(
    plans: list[AssignmentPlan], ids: dict[str, int], kept: dict[int, int],
    run_id: int, blueprint: TaskBlueprint, seed: int | None,
) -> Iterator[tuple[Any, ...]]:
    """Rows of the units each plan still lacks, each with its own layout and its place in
    the claim order: seeded per unit (seed, assignment key, ordinal) when the study sets a
    seed, so they reproduce; from one generator seeded by the system otherwise."""
    probe, fresh = random.Random(0), random.Random(secrets.randbits(128))
    for plan in plans:
        assignment_id = ids[plan.key]
        missing = range(kept.get(assignment_id, 0), plan.annotators)
        # Most tasks have nothing to shuffle: one call per assignment says so.
        shuffled = blueprint.unit_layout(plan.data, probe) is not None
        public_ids = secrets.token_hex(10 * len(missing))
        for n, ordinal in enumerate(missing):
            layout = None
            if shuffled:
                rng = random.Random(f"{seed}:{plan.key}:{ordinal}") if seed is not None else fresh
                layout = json.dumps(blueprint.unit_layout(plan.data, rng))
            order = (fresh.getrandbits(CLAIM_ORDER_BITS) if seed is None
                     else _seeded_claim_order(seed, plan.key, ordinal))
            yield (f"u_{public_ids[20 * n:20 * (n + 1)]}", assignment_id, run_id, plan.pool,
                   "launched", 0, layout, order)


def _report_changes(
    session: Session, task_id: int, plans: list[AssignmentPlan], known: set[str],
    changes: DataChanges,
) -> None:
    """`known`: keys of the assignments the last run planned."""
    planned = {p.key for p in plans}
    changes.first_run = not known
    changes.added = [p.label or p.key for p in plans if p.key not in known]
    gone = known - planned
    if not gone:
        return
    removed_ids: set[str] = set()
    for data in session.scalars(
        select(Assignment.data).where(Assignment.task_id == task_id, Assignment.key.in_(gone))
    ):
        label = ", ".join(str(d.get("source", {}).get("dialogue_id", "?"))
                          for d in data.get("dialogues", []))
        changes.removed.append(label)
        removed_ids.add(label)
    changes.changed = [label for label in changes.added if label in removed_ids]


def start_run(
    db: Database, task_name: str, blueprint: TaskBlueprint, config: dict[str, Any],
    plans: list[AssignmentPlan], server: str, seed: int | None = None,
) -> RunStart:
    """Create the run and its units in a few statements whatever the size of the task."""
    changes = DataChanges()
    taken_over: list[str] = []
    with db.session() as session:
        if db.engine.dialect.name == "sqlite":  # room for a bulk load without spilling pages
            session.execute(text("PRAGMA cache_size = -32768"))
        task = _claim_task(session, task_name, blueprint.name, taken_over)
        now = utcnow()
        run = TaskRun(task_id=task.id, config=config, server=server, heartbeat_at=now,
                      created_at=now)
        session.add(run)
        session.flush()
        stored = dict(session.execute(
            select(Assignment.key, Assignment.retired_at).where(Assignment.task_id == task.id)
        ).all())
        _report_changes(session, task.id, plans,
                        {key for key, retired in stored.items() if retired is None}, changes)
        _create_assignments(session, task.id, [p for p in plans if p.key not in stored])
        created = _sync_units(session, task.id, run.id, plans, blueprint, seed, changes)
        task_id, run_id = task.id, run.id
    if db.engine.dialect.name == "sqlite":
        with db.engine.connect() as connection:  # back to the default for pooled connections
            connection.execute(text("PRAGMA cache_size = -2000"))
    if created >= ANALYZE_AFTER_UNITS and db.engine.dialect.name == "postgresql":
        # Fresh bulk-loaded rows have no statistics: without them the claim plans badly.
        with db.engine.connect() as connection:
            connection.execute(text("ANALYZE units, assignments, assignment_groups, "
                                    "assignment_exclusions, worker_groups"))
            connection.commit()
    return RunStart(task_id, run_id, changes, taken_over)


def heartbeat(session: Session, run_id: int) -> None:
    """Tell other launchers this run is still served."""
    session.execute(update(TaskRun).where(TaskRun.id == run_id).values(heartbeat_at=utcnow()))


def end_run(db: Database, run_id: int, status: str) -> None:
    with db.session() as session:
        session.execute(
            update(TaskRun).where(TaskRun.id == run_id).values(status=status, ended_at=utcnow())
        )


def task_units(task_id: int) -> Select:
    """The ids of the task's units (every run), for `... .in_(task_units(id))`."""
    return select(Unit.id).join(Assignment).where(Assignment.task_id == task_id)


def real_work() -> ColumnElement[bool]:
    """Units of the work the task is run for by people (not screening, gold or a judge's)."""
    return Unit.pool.not_in((*QUALITY_POOLS, JUDGE_POOL))


def unit_counts(db: Database, task_id: int) -> dict[str, int]:
    """Units of real work of the task (every run) by status: screening and gold units are a
    supply, not work the requester waits for."""
    with db.read() as session:
        rows = session.execute(
            select(Unit.status, func.count()).join(Assignment)
            .where(Assignment.task_id == task_id, real_work())
            .group_by(Unit.status)
        ).all()
    return {status: count for status, count in rows}

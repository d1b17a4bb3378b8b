"""Start a run of a task: the task and its assignments persist, so a rerun continues them."""

from __future__ import annotations

import secrets
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from collection_and_annotations.blueprints.base import AssignmentPlan
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import (
    Assignment,
    AssignmentExclusion,
    AssignmentGroup,
    Task,
    TaskRun,
    Unit,
    utcnow,
)

OPEN_STATUSES = ("launched", "assigned")
DONE_STATUSES = ("completed", "accepted", "rejected", "soft_rejected")


@dataclass(frozen=True)
class Progress:
    """Units of a task by what they mean to the requester (expired ones are not needed)."""

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


def new_unit_id() -> str:
    return f"u_{secrets.token_hex(10)}"


def _create_assignments(session: Session, task: Task, plans: list[AssignmentPlan]) -> None:
    assignments = [Assignment(task_id=task.id, key=p.key, data=p.data) for p in plans]
    session.add_all(assignments)
    session.flush()  # ids for the rows below
    for assignment, plan in zip(assignments, plans, strict=True):
        session.add_all(AssignmentGroup(assignment_id=assignment.id, group_id=g)
                        for g in plan.groups)
        session.add_all(AssignmentExclusion(assignment_id=assignment.id, provider_worker_id=w)
                        for w in plan.excluded_workers)


def _sync_units(session: Session, task: Task, run: TaskRun, plans: list[AssignmentPlan]) -> None:
    """Each assignment gets the units its plan asks for: done ones are kept, unfinished ones
    move to this run (assigned workers keep theirs), missing ones are created."""
    ids = dict(session.execute(
        select(Assignment.key, Assignment.id).where(Assignment.task_id == task.id)).all())
    units: dict[int, list[Unit]] = defaultdict(list)
    for unit in session.scalars(
        select(Unit).join(Assignment)
        .where(Assignment.task_id == task.id, Unit.status.in_((*OPEN_STATUSES, *DONE_STATUSES)))
    ):
        units[unit.assignment_id].append(unit)
    for plan in plans:
        assignment_id = ids[plan.key]
        open_units = [u for u in units[assignment_id] if u.status in OPEN_STATUSES]
        kept = len(units[assignment_id])
        for unit in open_units:
            unit.task_run_id = run.id
        surplus = [u for u in open_units if u.status == "launched"]
        for unit in surplus[: max(0, kept - plan.annotators)]:
            unit.status = "expired"
        session.add_all(
            Unit(public_id=new_unit_id(), assignment_id=assignment_id, task_run_id=run.id)
            for _ in range(plan.annotators - kept)
        )


def start_run(
    db: Database, task_name: str, blueprint_name: str, config: dict[str, Any],
    plans: list[AssignmentPlan],
) -> tuple[int, int]:
    """Create the run and its units in a few queries whatever the size of the task; returns
    (task id, run id)."""
    with db.session() as session:
        task = session.scalars(select(Task).where(Task.name == task_name)).first()
        if task is None:
            task = Task(name=task_name, blueprint=blueprint_name)
            session.add(task)
            session.flush()
        session.execute(
            update(TaskRun)
            .where(TaskRun.task_id == task.id, TaskRun.status == "running")
            .values(status="stopped", ended_at=utcnow())
        )
        run = TaskRun(task_id=task.id, config=config)
        session.add(run)
        session.flush()
        known = set(session.scalars(select(Assignment.key).where(Assignment.task_id == task.id)))
        _create_assignments(session, task, [p for p in plans if p.key not in known])
        _sync_units(session, task, run, plans)
        return task.id, run.id


def end_run(db: Database, run_id: int, status: str) -> None:
    with db.session() as session:
        session.execute(
            update(TaskRun).where(TaskRun.id == run_id).values(status=status, ended_at=utcnow())
        )


def unit_counts(db: Database, task_id: int) -> dict[str, int]:
    """Units of the task (every run) by status."""
    with db.session() as session:
        rows = session.execute(
            select(Unit.status, func.count()).join(Assignment)
            .where(Assignment.task_id == task_id).group_by(Unit.status)
        ).all()
    return {status: count for status, count in rows}

"""Start a run of a task: the task and its assignments persist, so a rerun continues them."""

from __future__ import annotations

import secrets
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


def new_unit_id() -> str:
    return f"u_{secrets.token_hex(10)}"


def _sync_assignment(
    session: Session, task: Task, run: TaskRun, plan: AssignmentPlan, position: int
) -> None:
    assignment = session.scalars(
        select(Assignment).where(Assignment.task_id == task.id, Assignment.key == plan.key)
    ).first()
    if assignment is None:
        assignment = Assignment(task_id=task.id, key=plan.key, position=position, data=plan.data)
        session.add(assignment)
        session.flush()
        session.add_all(AssignmentGroup(assignment_id=assignment.id, group_id=g)
                        for g in plan.groups)
        session.add_all(AssignmentExclusion(assignment_id=assignment.id, provider_worker_id=w)
                        for w in plan.excluded_workers)
    else:
        assignment.position = position
    units = session.scalars(select(Unit).where(Unit.assignment_id == assignment.id)).all()
    open_units = [u for u in units if u.status in OPEN_STATUSES]
    kept = sum(1 for u in units if u.status in DONE_STATUSES) + len(open_units)
    for unit in open_units:  # unfinished work moves to this run; assigned workers keep theirs
        unit.task_run_id = run.id
    surplus = [u for u in open_units if u.status == "launched"][: max(0, kept - plan.annotators)]
    for unit in surplus:
        unit.status = "expired"
    session.add_all(
        Unit(public_id=new_unit_id(), assignment_id=assignment.id, task_run_id=run.id)
        for _ in range(plan.annotators - kept)
    )


def start_run(
    db: Database, task_name: str, blueprint_name: str, config: dict[str, Any],
    plans: list[AssignmentPlan],
) -> tuple[int, int]:
    """Create the run and its units; returns (task id, run id)."""
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
        for position, plan in enumerate(plans):
            _sync_assignment(session, task, run, plan, position)
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

"""The pseudonym -> provider worker id mapping of a task, kept apart from the data exports
(which carry pseudonyms only, so they can be shared) for paying, bonusing and blocking."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from collection_and_annotations.blueprints.base import JUDGE_POOL
from collection_and_annotations.export.submissions import find_task
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Assignment, Unit, Worker


def identities(db: Database, task_name: str) -> list[dict[str, Any]]:
    """Every worker who held a unit of the task, with how many units they submitted (LLM
    judges are not paid: not listed)."""
    task = find_task(db, task_name)
    done = func.count(Unit.completed_at)
    with db.read() as session:
        rows = session.execute(
            select(Worker.pseudonym, Worker.provider, Worker.provider_worker_id, done)
            .join(Unit, Unit.worker_id == Worker.id).join(Assignment)
            .where(Assignment.task_id == task.id, Unit.pool != JUDGE_POOL)
            .group_by(Worker.id, Worker.pseudonym, Worker.provider, Worker.provider_worker_id)
            .order_by(Worker.pseudonym)).all()
    return [{"pseudonym": p, "provider": provider, "worker_id": w, "units_submitted": n}
            for p, provider, w, n in rows]

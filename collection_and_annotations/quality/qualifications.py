"""Qualifications as rows: granted to a worker by name, shared across runs and tasks.

A name means the same thing wherever it is used: a worker blocked by `consistency_block` is
blocked in every task whose conf names that block qualification. Every function takes the
caller's connection, so a grant commits with the submission (or claim) that caused it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import Connection, delete, select

from collection_and_annotations.engine.allocation import lock_worker
from collection_and_annotations.errors import UserError
from collection_and_annotations.quality import score_sql
from collection_and_annotations.storage.models import (
    GrantedQualification,
    Qualification,
    Task,
    TaskRun,
    Worker,
    utcnow,
)

if TYPE_CHECKING:
    from omegaconf import DictConfig


@dataclass(frozen=True)
class Grant:
    qualification: str
    provider: str
    provider_worker_id: str
    value: int
    granted_at: datetime


def block_name(task_name: str, configured: str | None) -> str:
    """The task's block qualification: `block_qualification`, else `<task>_block`."""
    return configured or f"{task_name}_block"


def required_names(blueprint_cfg: DictConfig, task_name: str) -> frozenset[str]:
    """`required_qualifications`, checked at launch: a blank name, the task's own block or
    the qualification its own screening grants would shut every worker out."""
    key = "mephisto.blueprint.required_qualifications"
    names = [str(name).strip() for name in blueprint_cfg.get("required_qualifications") or []]
    if "" in names:
        raise UserError(f"{key}: a name is empty; list qualification names, e.g. "
                        "[my_screening_passed]")
    block = block_name(task_name, blueprint_cfg.get("block_qualification"))
    own = blueprint_cfg.get("passed_qualification_name") \
        if blueprint_cfg.get("use_screening_task") else None
    for name in names:
        if name == block:
            raise UserError(f"{key}: '{name}' is this task's block qualification; a worker "
                            "who held it would be blocked, so no one could work")
        if name == own:
            raise UserError(f"{key}: '{name}' is what this task's own screening grants; no "
                            "worker could start it. Remove it: the screening gates the task")
    return frozenset(names)


def grant(connection: Connection, worker_id: int, name: str, value: int = 1) -> None:
    """Grant (or re-grant with a new value) a qualification; two statements written once, as
    a screening submit grants one (score_sql.py)."""
    now = utcnow()
    connection.execute(score_sql.ADD_QUALIFICATION, {"name": name, "now": now})
    connection.execute(score_sql.GRANT, {"worker_id": worker_id, "value": value, "now": now,
                                         "name": name})


def revoke(connection: Connection, worker_id: int, name: str) -> bool:
    """Returns whether the worker held it."""
    removed = connection.execute(delete(GrantedQualification).where(
        GrantedQualification.worker_id == worker_id,
        GrantedQualification.qualification_id.in_(
            select(Qualification.id).where(Qualification.name == name))))
    return bool(removed.rowcount)


def worker_id(connection: Connection, provider: str, provider_worker_id: str) -> int | None:
    return connection.execute(select(Worker.id).where(
        Worker.provider == provider, Worker.provider_worker_id == provider_worker_id)
    ).scalar_one_or_none()


def grants(connection: Connection, name: str | None = None,
           provider_worker_id: str | None = None) -> list[Grant]:
    """Granted qualifications, optionally of one name or one worker."""
    query = (select(Qualification.name, Worker.provider, Worker.provider_worker_id,
                    GrantedQualification.value, GrantedQualification.granted_at)
             .join(GrantedQualification, GrantedQualification.qualification_id
                   == Qualification.id)
             .join(Worker, Worker.id == GrantedQualification.worker_id)
             .order_by(Qualification.name, Worker.provider_worker_id))
    if name:
        query = query.where(Qualification.name == name)
    if provider_worker_id:
        query = query.where(Worker.provider_worker_id == provider_worker_id)
    return [Grant(*row) for row in connection.execute(query)]


class NotChanged(LookupError):
    """A revoke that had nothing to revoke (unknown worker, qualification not held)."""


def change(connection: Connection, provider: str, provider_worker_id: str, name: str,
           value: int | None) -> str:
    """Grant (`value` set) or revoke (None) one qualification of one worker, as the `quals`
    CLI and the requester API do it; returns what was done, raises `NotChanged`."""
    if value is not None:  # the worker's row is created if they never came: a block may
        # precede their arrival
        grant(connection, lock_worker(connection, provider, provider_worker_id), name, value)
        return f"granted '{name}' (value {value}) to {provider_worker_id}"
    found = worker_id(connection, provider, provider_worker_id)
    if found is None:
        raise NotChanged(f"no worker '{provider_worker_id}' (provider {provider})")
    if not revoke(connection, found, name):
        raise NotChanged(f"worker '{provider_worker_id}' does not hold '{name}'")
    return f"revoked '{name}' from {provider_worker_id}"


def task_block_name(connection: Connection, task_name: str) -> str | None:
    """The block qualification of a task as its latest run's conf names it (None: no task)."""
    config = connection.execute(select(TaskRun.config).join(Task).where(Task.name == task_name)
                                .order_by(TaskRun.id.desc()).limit(1)).scalar()
    if config is None:
        return None
    configured = config.get("conf", {}).get("mephisto", {}).get("blueprint", {}).get(
        "block_qualification")
    return block_name(task_name, configured)

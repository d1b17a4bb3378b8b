"""A stored task's last run as its conf was stored, for commands that work on a task after
(or beside) its launch without a conf file: `serve --task`, `judge --task`."""

from __future__ import annotations

from dataclasses import dataclass

from omegaconf import DictConfig, OmegaConf
from sqlalchemy import select

from collection_and_annotations.blueprints import TaskBlueprint, build_blueprint
from collection_and_annotations.config.schema import RunConfig
from collection_and_annotations.errors import UserError
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Task, TaskRun


@dataclass(frozen=True)
class StoredRun:
    task_id: int
    run_id: int
    conf_path: str | None
    cfg: DictConfig


def stored_run(db: Database, task_name: str) -> StoredRun:
    """The task's last run and its stored conf; a clear error for a task not in `db`."""
    with db.read() as session:
        run = session.scalars(select(TaskRun).join(Task).where(Task.name == task_name)
                              .order_by(TaskRun.id.desc()).limit(1)).first()
        names = session.scalars(select(Task.name).order_by(Task.name)).all()
    if run is None:
        known = ", ".join(names) or "none"
        raise UserError(f"no task named '{task_name}' in this database (tasks here: {known}); "
                        "give --task the task_name of a conf that was run")
    cfg = OmegaConf.merge(OmegaConf.structured(RunConfig), run.config["conf"])
    return StoredRun(run.task_id, run.id, run.config.get("conf_path"), cfg)


def stored_blueprint(run: StoredRun, task_name: str) -> TaskBlueprint:
    """The task kind built from the stored conf (its files read again)."""
    try:
        return build_blueprint(run.cfg)
    except UserError as exc:
        raise UserError(f"the files of task '{task_name}' (conf {run.conf_path}) cannot be "
                        f"read any more: {exc}") from None

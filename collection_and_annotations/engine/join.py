"""Several launchers serving one run (conf: mephisto.architect.join, PostgreSQL only).

A launcher with `join=true` serves the run another launcher of the same task serves already,
when that one was started with `join=true` too and has the same data and task settings;
otherwise it starts the run as any launcher does. Each launcher of a joined run holds a shared
advisory lock on it for its whole life, on a connection of its own (a launcher that dies lets
go of it with its connection); the last one to stop, the one that then gets the lock
exclusively, ends the run.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select, text

from collection_and_annotations.engine.runs import HEARTBEAT_TIMEOUT
from collection_and_annotations.errors import UserError
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Assignment, Task, TaskRun, utcnow

LOCK_SPACE = 0x434550  # "CEP": the advisory locks' first key; the second is the run id


def running_run(db: Database, task_name: str) -> TaskRun | None:
    """The task's run that a launcher serves now (its heartbeat is fresh), if any."""
    with db.read() as session:
        run = session.scalars(
            select(TaskRun).join(Task).where(
                Task.name == task_name, TaskRun.status == "running",
                TaskRun.heartbeat_at > utcnow() - HEARTBEAT_TIMEOUT)
            .order_by(TaskRun.id.desc()).limit(1)).first()
        if run is not None:
            session.expunge(run)
        return run


def check_joinable(db: Database, run: TaskRun, task_settings: dict[str, Any],
                   plan_keys: set[str]) -> None:
    """Refuse (UserError) to serve `run` unless its launcher allows it and this launcher has
    the same task settings (`mephisto.task`) and the same assignments (the data)."""
    conf = run.config.get("conf", {})
    where = f"the server already running ({run.server or 'unknown'}, run {run.id})"
    if not conf.get("mephisto", {}).get("architect", {}).get("join"):
        raise UserError(f"{where} was started without mephisto.architect.join=true, so no "
                        "other launcher may serve its run: stop it and start every launcher "
                        "with mephisto.architect.join=true")
    theirs = conf.get("mephisto", {}).get("task", {})
    differ = sorted(k for k in {*theirs, *task_settings} if theirs.get(k) != task_settings.get(k))
    if differ:
        raise UserError(f"{where} has other task settings: mephisto.task."
                        f"{', mephisto.task.'.join(differ)} differ; start this launcher with "
                        "the same conf")
    with db.read() as session:
        stored = set(session.scalars(select(Assignment.key).where(
            Assignment.task_id == run.task_id, Assignment.retired_at.is_(None))))
    if stored != plan_keys:
        raise UserError(f"{where} serves other data: {len(plan_keys - stored)} of this "
                        f"launcher's assignments are not in its run and {len(stored - plan_keys)} "
                        "of its are not here; give every launcher the same data files")


class Presence:
    """This launcher's hold on a joined run, until `leave`."""

    def __init__(self, db: Database, run_id: int):
        self.run_id = run_id
        self.connection: Connection = db.engine.connect()
        self._lock("pg_advisory_lock_shared")

    def _lock(self, function: str) -> bool:
        held = self.connection.scalar(text(f"SELECT {function}(:space, :run)"),
                                      {"space": LOCK_SPACE, "run": self.run_id})
        self.connection.commit()
        return held is not False

    def leave(self) -> bool:
        """Let go; True when no other launcher serves the run (this one should end it)."""
        try:
            self._lock("pg_advisory_unlock_shared")
            return self._lock("pg_try_advisory_lock")
        finally:
            self.connection.close()  # and its locks with it


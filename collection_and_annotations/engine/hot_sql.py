"""The statements of the worker API's hot path (claim, view, draft, submit), written once as SQL.

Building an SQLAlchemy expression and computing its cache key on every request cost more CPU
than the database work itself (about two thirds of a request); these textual statements are
built once per dialect and only bound to values per request. The SQL is the same on SQLite and
PostgreSQL except for row locks, which SQLite does not have (it serialises writers instead).
Column types are declared so datetimes and JSON are stored exactly as the ORM stores them.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache

from sqlalchemy import JSON, Connection, DateTime, TextClause, bindparam, column, text
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.sql.selectable import TextualSelect

from collection_and_annotations.engine.runs import DONE_STATUSES


def _now(*names: str) -> list[BindParameter[datetime]]:
    """Datetime parameters, stored in the ORM's format (a string on SQLite)."""
    return [bindparam(name, type_=DateTime()) for name in names]


class HotStatements:
    """One dialect's statements."""

    def __init__(self, dialect: str):
        postgres = dialect == "postgresql"
        lock = " FOR UPDATE" if postgres else ""
        lock_unit = " FOR UPDATE OF u" if postgres else ""
        skip_locked = " FOR UPDATE SKIP LOCKED" if postgres else ""
        done = ", ".join(f"'{status}'" for status in DONE_STATUSES)

        self.upsert_worker: TextClause = text(
            "INSERT INTO workers (provider, provider_worker_id, pseudonym, created_at) "
            "VALUES (:provider, :provider_worker_id, :pseudonym, :now) "
            "ON CONFLICT (provider, provider_worker_id) DO UPDATE SET provider = excluded.provider "
            "RETURNING id"
        ).bindparams(*_now("now"))
        self.held_units: TextClause = text(
            "SELECT u.public_id, u.status, u.provider_session, u.pool FROM units u "
            "JOIN assignments a ON a.id = u.assignment_id "
            f"WHERE a.task_id = :task_id AND u.worker_id = :worker_id "
            f"AND u.status IN ('assigned', {done}) ORDER BY u.id DESC"
        )
        self.take_unit: TextualSelect = text(
            "UPDATE units SET status = 'assigned', worker_id = :worker_id, "
            "provider_session = :session_id, assigned_at = :now, deadline = :deadline "
            "WHERE id = (SELECT u.id FROM units u WHERE u.task_run_id = :run_id "
            "AND u.pool = :pool AND u.status = 'launched' "
            "AND NOT EXISTS (SELECT 1 FROM assignment_groups ag JOIN worker_groups wg "
            "ON wg.group_id = ag.group_id WHERE ag.assignment_id = u.assignment_id "
            "AND wg.task_id = :task_id AND wg.worker_id = :worker_id) "
            "AND NOT EXISTS (SELECT 1 FROM assignment_exclusions ae "
            "WHERE ae.assignment_id = u.assignment_id "
            "AND ae.provider_worker_id = :provider_worker_id) "
            f"ORDER BY u.id LIMIT 1{skip_locked}) AND status = 'launched' "
            "RETURNING id, public_id, assignment_id, times_expired"
        ).bindparams(*_now("now", "deadline")).columns(
            column("id"), column("public_id"), column("assignment_id"), column("times_expired"))
        self.clear_other_drafts: TextClause = text(
            "DELETE FROM drafts WHERE unit_id = :unit_id AND worker_id <> :worker_id")
        self.add_groups: TextClause = text(
            "INSERT INTO worker_groups (task_id, worker_id, group_id, unit_id) "
            "SELECT :task_id, :worker_id, group_id, :unit_id FROM assignment_groups "
            "WHERE assignment_id = :assignment_id"
        )
        self.unit_view: TextualSelect = text(
            "SELECT u.id, u.public_id, u.status, u.worker_id, u.times_expired, u.deadline, "
            "u.pool, u.layout, a.data, d.answers, d.position, d.saved_at FROM units u "
            "JOIN assignments a ON a.id = u.assignment_id "
            "LEFT JOIN drafts d ON d.unit_id = u.id AND d.worker_id = :worker_id "
            "WHERE u.public_id = :public_id"
        ).columns(
            column("id"), column("public_id"), column("status"), column("worker_id"),
            column("times_expired"), column("deadline", DateTime()), column("pool"),
            column("layout", JSON()), column("data", JSON()), column("answers", JSON()),
            column("position", JSON()), column("saved_at", DateTime()),
        )
        self.lock_unit: TextualSelect = text(
            "SELECT id, status, worker_id, times_expired FROM units "
            f"WHERE public_id = :public_id{lock}"
        ).columns(column("id"), column("status"), column("worker_id"), column("times_expired"))
        self.upsert_draft: TextClause = text(
            "INSERT INTO drafts (unit_id, worker_id, answers, position, saved_at) "
            "VALUES (:unit_id, :worker_id, :answers, :position, :now) "
            "ON CONFLICT (unit_id, worker_id) DO UPDATE SET answers = excluded.answers, "
            "position = excluded.position, saved_at = excluded.saved_at"
        ).bindparams(bindparam("answers", type_=JSON()), bindparam("position", type_=JSON()),
                     *_now("now"))
        self.lock_unit_with_data: TextualSelect = text(
            "SELECT u.id, u.status, u.worker_id, u.times_expired, u.task_run_id, u.assigned_at, "
            "u.layout, u.pool, a.data FROM units u JOIN assignments a ON a.id = u.assignment_id "
            f"WHERE u.public_id = :public_id{lock_unit}"
        ).columns(
            column("id"), column("status"), column("worker_id"), column("times_expired"),
            column("task_run_id"), column("assigned_at", DateTime()), column("layout", JSON()),
            column("pool"), column("data", JSON()),
        )
        self.stored_answers: TextualSelect = text(
            "SELECT answers FROM submissions WHERE unit_id = :unit_id"
        ).columns(column("answers", JSON()))
        self.insert_submission: TextClause = text(
            "INSERT INTO submissions (unit_id, worker_id, task_run_id, answers, timings, "
            "client_id, created_at) VALUES (:unit_id, :worker_id, :task_run_id, :answers, "
            ":timings, :client_id, :now)"
        ).bindparams(bindparam("answers", type_=JSON()), bindparam("timings", type_=JSON()),
                     *_now("now"))
        self.delete_drafts: TextClause = text("DELETE FROM drafts WHERE unit_id = :unit_id")
        self.complete_unit: TextClause = text(
            "UPDATE units SET status = 'completed', completed_at = :now WHERE id = :unit_id"
        ).bindparams(*_now("now"))


@cache
def _for_dialect(dialect: str) -> HotStatements:
    return HotStatements(dialect)


def hot(connection: Connection) -> HotStatements:
    return _for_dialect(connection.dialect.name)


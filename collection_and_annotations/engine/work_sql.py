"""The worker steps' statements (claim, page, draft, submit), each written once as a text()
constant with typed binds and result columns; the row locks are PostgreSQL's alone
(storage/sql.py `locking`)."""

from __future__ import annotations

from sqlalchemy import bindparam, column, text

from collection_and_annotations.engine.runs import DONE_STATUSES
from collection_and_annotations.storage.sql import (
    DOCUMENT,
    NULLABLE_DOCUMENT,
    TIME,
    columns,
    locking,
)

_DONE = ", ".join(f"'{status}'" for status in DONE_STATUSES)

# -- claim -----------------------------------------------------------------------------------

# The worker's id; on PostgreSQL their row stays locked until the transaction ends, so one
# worker's claims happen one by one.
UPSERT_WORKER = text(
    "INSERT INTO workers (provider, provider_worker_id, pseudonym, created_at) "
    "VALUES (:provider, :provider_worker_id, :pseudonym, :now) "
    "ON CONFLICT (provider, provider_worker_id) DO UPDATE SET provider = excluded.provider "
    "RETURNING id").bindparams(bindparam("now", type_=TIME)).columns(column("id"))

# The worker's units in the task that count for resuming and limits, newest first.
HELD_UNITS = text(
    "SELECT u.public_id, u.status, u.provider_session, u.pool FROM units u "
    "JOIN assignments a ON a.id = u.assignment_id "
    f"WHERE a.task_id = :task_id AND u.worker_id = :worker_id "
    f"AND u.status IN ('assigned', {_DONE}) ORDER BY u.id DESC"
).columns(*columns("public_id", "status", "provider_session", "pool"))

HELD_QUALIFICATIONS = text(
    "SELECT q.name FROM granted_qualifications g JOIN qualifications q "
    "ON q.id = g.qualification_id WHERE g.worker_id = :worker_id").columns(column("name"))

# The pool's first free unit (in the run's random `claim_order`, the key of ix_units_free)
# of a group the worker has not had and an assignment they did not author (by provider id or
# by the pseudonym exports write as a chat's `origin_worker_id`). `status = 'launched'` is
# checked again on the row as it is written: a concurrent claim that took it first wins.
TAKE_UNIT = locking(
    "UPDATE units SET status = 'assigned', worker_id = :worker_id, "
    "provider_session = :session_id, assigned_at = :now, deadline = :deadline "
    "WHERE id = (SELECT u.id FROM units u WHERE u.task_run_id = :run_id "
    "AND u.pool = :pool AND u.status = 'launched' "
    "AND NOT EXISTS (SELECT 1 FROM assignment_groups ag JOIN worker_groups wg "
    "ON wg.group_id = ag.group_id WHERE ag.assignment_id = u.assignment_id "
    "AND wg.task_id = :task_id AND wg.worker_id = :worker_id) "
    "AND NOT EXISTS (SELECT 1 FROM assignment_exclusions ae "
    "WHERE ae.assignment_id = u.assignment_id AND ae.provider_worker_id IN "
    "(:provider_worker_id, (SELECT pseudonym FROM workers WHERE id = :worker_id))) "
    "ORDER BY u.claim_order LIMIT 1{lock}) AND status = 'launched' "
    "RETURNING id, public_id, assignment_id, times_expired",
    " FOR UPDATE SKIP LOCKED", ("id", "public_id", "assignment_id", "times_expired"),
    (bindparam("now", type_=TIME), bindparam("deadline", type_=TIME)))

# A unit that changed hands keeps nothing of its earlier worker.
CLEAR_OTHER_DRAFTS = text(
    "DELETE FROM drafts WHERE unit_id = :unit_id AND worker_id <> :worker_id")

# The unit's groups are the worker's now: the unique key forbids a second unit of them.
ADD_GROUPS = text(
    "INSERT INTO worker_groups (task_id, worker_id, group_id, unit_id) "
    "SELECT :task_id, :worker_id, group_id, :unit_id FROM assignment_groups "
    "WHERE assignment_id = :assignment_id")

# -- page and draft --------------------------------------------------------------------------

# A unit as its worker's page shows it, with that worker's draft (NULLs without one).
UNIT_VIEW = text(
    "SELECT u.id, u.public_id, u.status, u.worker_id, u.times_expired, u.deadline, u.pool, "
    "u.layout, a.data, d.answers, d.position, d.saved_at FROM units u "
    "JOIN assignments a ON a.id = u.assignment_id "
    "LEFT JOIN drafts d ON d.unit_id = u.id AND d.worker_id = :worker_id "
    "WHERE u.public_id = :public_id"
).columns(*columns("id", "public_id", "status", "worker_id", "times_expired",
                   column("deadline", TIME), "pool", column("layout", NULLABLE_DOCUMENT),
                   column("data", DOCUMENT), column("answers", DOCUMENT),
                   column("position", DOCUMENT), column("saved_at", TIME)))

LOCK_UNIT = locking(
    "SELECT id, status, worker_id, times_expired FROM units WHERE public_id = :public_id{lock}",
    " FOR UPDATE", ("id", "status", "worker_id", "times_expired"))

UPSERT_DRAFT = text(
    "INSERT INTO drafts (unit_id, worker_id, answers, position, saved_at) "
    "VALUES (:unit_id, :worker_id, :answers, :position, :now) "
    "ON CONFLICT (unit_id, worker_id) DO UPDATE SET answers = excluded.answers, "
    "position = excluded.position, saved_at = excluded.saved_at"
).bindparams(bindparam("answers", type_=DOCUMENT), bindparam("position", type_=DOCUMENT),
             bindparam("now", type_=TIME))

# -- submit (and the chat's steps that show its state) ---------------------------------------

# The unit, locked, with what a submission or a chat step needs of it.
LOCK_UNIT_WITH_DATA = locking(
    "SELECT u.id, u.status, u.worker_id, u.times_expired, u.task_run_id, u.assigned_at, "
    "u.layout, u.pool, a.data FROM units u JOIN assignments a ON a.id = u.assignment_id "
    "WHERE u.public_id = :public_id{lock}",
    " FOR UPDATE OF u",
    ("id", "status", "worker_id", "times_expired", "task_run_id",
     column("assigned_at", TIME), column("layout", NULLABLE_DOCUMENT), "pool",
     column("data", DOCUMENT)))

STORED_ANSWERS = text("SELECT answers FROM submissions WHERE unit_id = :unit_id").columns(
    column("answers", DOCUMENT))

INSERT_SUBMISSION = text(
    "INSERT INTO submissions (unit_id, worker_id, task_run_id, answers, timings, client_id, "
    "created_at) VALUES (:unit_id, :worker_id, :task_run_id, :answers, :timings, :client_id, "
    ":now)"
).bindparams(bindparam("answers", type_=DOCUMENT), bindparam("timings", type_=DOCUMENT),
             bindparam("now", type_=TIME))

DELETE_DRAFTS = text("DELETE FROM drafts WHERE unit_id = :unit_id")

COMPLETE_UNIT = text(
    "UPDATE units SET status = 'completed', completed_at = :now WHERE id = :unit_id"
).bindparams(bindparam("now", type_=TIME))

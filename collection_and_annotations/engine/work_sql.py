"""The worker steps' statements (claim, page, draft, submit), each written once as a text()
constant with typed binds and result columns. Two versions (storage/sql.py `PerDialect`) only
where SQLite truly differs: it has no row locks (`locking`), and no writing WITH, so what
PostgreSQL does in one statement it does in the few that follow (`AFTER_...`)."""

from __future__ import annotations

from sqlalchemy import TextClause, bindparam, column, text

from collection_and_annotations.engine.runs import DONE_STATUSES
from collection_and_annotations.storage.sql import (
    DOCUMENT,
    NULLABLE_DOCUMENT,
    TIME,
    PerDialect,
    columns,
    locking,
)

_DONE = ", ".join(f"'{status}'" for status in DONE_STATUSES)

# -- claim -----------------------------------------------------------------------------------

# The worker's id; on PostgreSQL their row stays locked until the transaction ends, so one
# worker's claims happen one by one. A new worker's pseudonym (their name in exports and on
# the dashboard) is made by the database: a random source in Python is a system call that
# lets go of the interpreter, and under load the step waits to get it back.
_UPSERT_WORKER = (
    "INSERT INTO workers (provider, provider_worker_id, pseudonym, created_at) "
    "VALUES (:provider, :provider_worker_id, 'w_' || {random_hex}, :now) "
    "ON CONFLICT (provider, provider_worker_id) DO UPDATE SET provider = excluded.provider "
    "RETURNING id")
UPSERT_WORKER = PerDialect(*(
    text(_UPSERT_WORKER.format(random_hex=random_hex)).bindparams(bindparam("now", type_=TIME))
    .columns(column("id"))
    for random_hex in ("substr(md5(random()::text), 1, 12)", "lower(hex(randomblob(6)))")))

# What a claim reads of the worker (after their row is locked), in one statement: their units
# in the task that count for resuming and limits, newest first, then the names of the
# qualifications they hold (the rows whose `status` is NULL).
WORKER_STATE = text(
    "SELECT u.id AS newest, u.public_id AS name, u.status, u.provider_session, u.pool "
    "FROM units u JOIN assignments a ON a.id = u.assignment_id "
    "WHERE a.task_id = :task_id AND u.worker_id = :worker_id "
    f"AND u.status IN ('assigned', {_DONE}) "
    "UNION ALL SELECT 0, q.name, NULL, NULL, NULL FROM granted_qualifications g "
    "JOIN qualifications q ON q.id = g.qualification_id WHERE g.worker_id = :worker_id "
    "ORDER BY 1 DESC"
).columns(*columns("newest", "name", "status", "provider_session", "pool"))

# The pool's first free unit (in the run's random `claim_order`, the key of ix_units_free)
# of a group the worker has not had and an assignment they did not author (by provider id or
# by the pseudonym exports write as a chat's `origin_worker_id`). `status = 'launched'` is
# checked again on the row as it is written: a concurrent claim that took it first wins.
_TAKE = (
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
    "RETURNING id, public_id, assignment_id, times_expired")
_TAKEN = ("id", "public_id", "assignment_id", "times_expired")
_TAKE_BINDS = (bindparam("now", type_=TIME), bindparam("deadline", type_=TIME))
# A unit that changed hands keeps nothing of its earlier worker.
_CLEAR_OTHER_DRAFTS = "DELETE FROM drafts WHERE unit_id {unit} AND worker_id <> :worker_id"
# The unit's groups are the worker's now: the unique key forbids a second unit of them.
_ADD_GROUPS = ("INSERT INTO worker_groups (task_id, worker_id, group_id, unit_id) "
               "SELECT :task_id, :worker_id, ag.group_id, {unit} FROM assignment_groups ag "
               "{join}")
_JOIN_TAKEN = "JOIN t ON ag.assignment_id = t.assignment_id"
_TAKEN_BEFORE = "IN (SELECT id FROM t WHERE times_expired > 0)"  # had another worker
TAKE_UNIT = PerDialect(
    # one statement: the unit taken, its groups noted, its earlier worker's drafts removed
    text(f"WITH t AS ({_TAKE.format(lock=' FOR UPDATE SKIP LOCKED')}), "
         f"g AS ({_ADD_GROUPS.format(unit='t.id', join=_JOIN_TAKEN)}), "
         f"d AS ({_CLEAR_OTHER_DRAFTS.format(unit=_TAKEN_BEFORE)}) "
         "SELECT id, public_id, assignment_id, times_expired FROM t"
         ).bindparams(*_TAKE_BINDS).columns(*columns(*_TAKEN)),
    # SQLite has no writing WITH: the other two follow (AFTER_TAKE)
    text(_TAKE.format(lock="")).bindparams(*_TAKE_BINDS).columns(*columns(*_TAKEN)))
AFTER_TAKE = PerDialect[tuple[TextClause, ...]](
    (), (text(_CLEAR_OTHER_DRAFTS.format(unit="= :unit_id")),
         text(_ADD_GROUPS.format(unit=":unit_id",
                                 join="WHERE ag.assignment_id = :assignment_id"))))

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

_LOCK_UNIT = "SELECT id, status, worker_id, times_expired FROM units WHERE public_id = :public_id"
_UNIT = ("id", "status", "worker_id", "times_expired")
_UPSERT_DRAFT = (
    "INSERT INTO drafts (unit_id, worker_id, answers, position, saved_at) {values} "
    "ON CONFLICT (unit_id, worker_id) DO UPDATE SET answers = excluded.answers, "
    "position = excluded.position, saved_at = excluded.saved_at")
_DRAFT_BINDS = (bindparam("answers", type_=DOCUMENT), bindparam("position", type_=DOCUMENT),
                bindparam("now", type_=TIME))
# The unit locked (returned as locked) and the worker's draft written only if the unit is
# theirs and still assigned: one statement on PostgreSQL; SQLite writes it afterwards, once
# the step checked the unit (AFTER_LOCKING_DRAFT).
SAVE_DRAFT = PerDialect(
    text(f"WITH u AS ({_LOCK_UNIT} FOR UPDATE), w AS ("
         + _UPSERT_DRAFT.format(values="SELECT id, :worker_id, :answers, :position, :now "
                                       "FROM u WHERE worker_id = :worker_id "
                                       "AND status = 'assigned'")
         + ") SELECT id, status, worker_id, times_expired FROM u"
         ).bindparams(*_DRAFT_BINDS).columns(*columns(*_UNIT)),
    text(_LOCK_UNIT).columns(*columns(*_UNIT)))
AFTER_LOCKING_DRAFT = PerDialect[tuple[TextClause, ...]](
    (), (text(_UPSERT_DRAFT.format(
        values="VALUES (:unit_id, :worker_id, :answers, :position, :now)")
        ).bindparams(*_DRAFT_BINDS),))

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

_INSERT_SUBMISSION = (
    "INSERT INTO submissions (unit_id, worker_id, task_run_id, answers, timings, client_id, "
    "created_at) VALUES (:unit_id, :worker_id, :task_run_id, :answers, :timings, :client_id, "
    ":now)")
_DELETE_DRAFTS = "DELETE FROM drafts WHERE unit_id = :unit_id"
_COMPLETE_UNIT = "UPDATE units SET status = 'completed', completed_at = :now WHERE id = :unit_id"
_SUBMISSION_BINDS = (bindparam("answers", type_=DOCUMENT), bindparam("timings", type_=DOCUMENT),
                     bindparam("now", type_=TIME))
# The submission stored, the unit's drafts removed and the unit completed (under its lock).
STORE_SUBMISSION = PerDialect[tuple[TextClause, ...]](
    (text(f"WITH s AS ({_INSERT_SUBMISSION}), d AS ({_DELETE_DRAFTS}) {_COMPLETE_UNIT}"
          ).bindparams(*_SUBMISSION_BINDS),),
    tuple(text(sql).bindparams(*(b for b in _SUBMISSION_BINDS if f":{b.key}" in sql))
          for sql in (_INSERT_SUBMISSION, _DELETE_DRAFTS, _COMPLETE_UNIT)))

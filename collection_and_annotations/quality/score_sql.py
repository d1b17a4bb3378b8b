"""The statements screening and gold run on every check, submit and claim, each written once
as a text() constant with typed binds (`INSERT ... ON CONFLICT` reads the same on SQLite and
PostgreSQL)."""

from __future__ import annotations

from sqlalchemy import Boolean, bindparam, column, text

from collection_and_annotations.storage.sql import DOCUMENT, TIME

# One worker's try at a unit: the unit and its `times_expired` then (`attempt`).
SCORE_CHECKS = text(
    "SELECT checks FROM unit_scores WHERE unit_id = :unit_id AND attempt = :attempt").columns(
    column("checks", DOCUMENT))

SAVE_SCORE = text(
    "INSERT INTO unit_scores (unit_id, attempt, worker_id, task_id, pool, checks, mistakes, "
    "passed, scored_at) VALUES (:unit_id, :attempt, :worker_id, :task_id, :pool, :checks, "
    ":mistakes, :passed, :scored_at) ON CONFLICT (unit_id, attempt) DO UPDATE SET "
    "checks = excluded.checks, mistakes = excluded.mistakes, passed = excluded.passed, "
    "scored_at = excluded.scored_at"
).bindparams(bindparam("checks", type_=DOCUMENT), bindparam("passed", type_=Boolean()),
             bindparam("scored_at", type_=TIME))

# The worker's failed golds in a task (at each gold submit).
FAILED_GOLDS = text(
    "SELECT count(*) FROM unit_scores WHERE worker_id = :worker_id AND task_id = :task_id "
    "AND pool = 'gold' AND passed = :failed").bindparams(bindparam("failed", type_=Boolean()))

# The worker's training attempts in a task: units they checked a dialogue of (so saw
# feedback on), finished or not.
SCREENING_ATTEMPTS = text(
    "SELECT count(*) FROM unit_scores WHERE worker_id = :worker_id AND task_id = :task_id "
    "AND pool = 'screening'")

TASK_OF_RUN = text("SELECT task_id FROM task_runs WHERE id = :run_id")

FREE_SCREENING_UNIT = text(
    "SELECT id FROM units WHERE task_run_id = :run_id AND pool = 'screening' "
    "AND status = 'launched' LIMIT 1")

ADD_QUALIFICATION = text(
    "INSERT INTO qualifications (name, created_at) VALUES (:name, :now) "
    "ON CONFLICT (name) DO NOTHING").bindparams(bindparam("now", type_=TIME))

GRANT = text(
    "INSERT INTO granted_qualifications (qualification_id, worker_id, value, granted_at) "
    "SELECT id, :worker_id, :value, :now FROM qualifications WHERE name = :name "
    "ON CONFLICT (qualification_id, worker_id) DO UPDATE SET value = excluded.value, "
    "granted_at = excluded.granted_at").bindparams(bindparam("now", type_=TIME))

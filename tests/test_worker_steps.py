"""The worker steps on both databases: their Core statements store exactly what the ORM
reads, refused steps write nothing, and a snapshot is one."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest
from helpers import dialogue, write_task
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError, OperationalError

from collection_and_annotations.engine.allocation import ClaimRefused, claim_unit
from collection_and_annotations.engine.work import WorkRefused, save_draft, submit, unit_view
from collection_and_annotations.engine.work_sql import TAKE_UNIT
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Draft, Submission, Unit, iso_utc, utcnow

TASKS = ["overall_quality"]


def _served(tmp_path, database_url, open_conf):
    conf = write_task(tmp_path, [{"data": [dialogue("d0", "g0", TASKS)]}], {"g0": 1})
    return open_conf(str(conf), database_url)


def _claim(served, worker: str = "w1"):
    return claim_unit(served.db, served.task_id, served.run_id, "local", worker, "s1",
                      served.limits, served.blocked_workers)


def _key(served, claim) -> str:
    """The key the page shows the unit's dialogue under."""
    view = unit_view(served.db, served.blueprint, claim.unit_public_id, claim.worker_id)
    return view["dialogues"][0]["key"]


def test_worker_steps_write_what_the_orm_reads(tmp_path, database_url, open_conf):
    """Times keep their microseconds, JSON round-trips (a None position is JSON null, as the
    ORM stores it), and the unit view reads back what was written."""
    served = _served(tmp_path, database_url, open_conf)
    claim = _claim(served)
    key = _key(served, claim)
    answers = {key: {"overall_quality": {"dialogue": {"Overall": 2}}}, "é": ["ü", 1.5, None]}
    saved_at = save_draft(served.db, claim.unit_public_id, claim.worker_id, answers, None)
    with served.db.read() as session:
        draft = session.scalars(select(Draft)).one()
        unit = session.scalars(select(Unit)).one()
        sql_null = session.execute(text("SELECT position IS NULL FROM drafts")).scalar()
    assert draft.answers == answers and draft.position is None
    assert not sql_null  # JSON null, as the ORM stores None in this column
    assert iso_utc(draft.saved_at) == saved_at  # microseconds kept
    assert unit.deadline - unit.assigned_at == timedelta(
        seconds=served.limits.assignment_duration_in_seconds)

    view = unit_view(served.db, served.blueprint, claim.unit_public_id, claim.worker_id)
    assert view["draft"] == {"answers": answers, "position": None, "saved_at": saved_at}
    assert 0 < view["seconds_remaining"] <= served.limits.assignment_duration_in_seconds

    final = {key: {"overall_quality": {"dialogue": {"Overall": 5}}}}
    before = utcnow()
    assert submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id, final,
                  {key: [1.25, 2.5]}, "client-1") == "completed"
    with served.db.read() as session:
        submission = session.scalars(select(Submission)).one()
        unit = session.scalars(select(Unit)).one()
        assert session.scalars(select(Draft)).all() == []
    assert submission.timings["client"] == {key: [1.25, 2.5]}
    assert submission.client_id == "client-1" and unit.status == "completed"
    assert before <= submission.created_at == unit.completed_at <= utcnow()


def test_refused_drafts_write_nothing(tmp_path, database_url, open_conf):
    """The draft is written in the statement that locks the unit (one round trip on
    PostgreSQL): only for the unit's own worker while it is assigned."""
    served = _served(tmp_path, database_url, open_conf)
    claim = _claim(served)
    with served.db.session() as session:
        stranger = session.scalar(text(
            "INSERT INTO workers (provider, provider_worker_id, pseudonym, created_at) "
            "VALUES ('local', 'w2', 'w_2', '2026-01-01 00:00:00') RETURNING id"))
    answers = {"any": 1}
    with pytest.raises(WorkRefused) as refused:
        save_draft(served.db, claim.unit_public_id, stranger, answers, None)
    assert refused.value.status == 404
    with pytest.raises(WorkRefused) as refused:
        save_draft(served.db, "u_no_such_unit", claim.worker_id, answers, None)
    assert refused.value.status == 404
    with served.db.read() as session:
        assert session.scalars(select(Draft)).all() == []
    submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id,
           {_key(served, claim): {"overall_quality": {"dialogue": {"Overall": 5}}}}, {}, None)
    with pytest.raises(WorkRefused) as refused:
        save_draft(served.db, claim.unit_public_id, claim.worker_id, answers, None)
    assert refused.value.status == 409
    with served.db.read() as session:
        assert session.scalars(select(Draft)).all() == []


def test_a_unit_that_changes_hands_keeps_nothing_of_its_earlier_worker(tmp_path, database_url,
                                                                       open_conf):
    """Assigning a unit notes its groups as the new worker's and removes a draft the earlier
    worker left on it (one statement on PostgreSQL)."""
    served = _served(tmp_path, database_url, open_conf)
    first = _claim(served, "w1")
    save_draft(served.db, first.unit_public_id, first.worker_id, {"mine": 1}, None)
    with served.db.session() as session:  # handed back while the draft row survived
        session.execute(text(
            "UPDATE units SET status = 'launched', worker_id = NULL, provider_session = NULL, "
            "assigned_at = NULL, deadline = NULL, times_expired = times_expired + 1"))
        session.execute(text("DELETE FROM worker_groups"))
    second = _claim(served, "w2")
    assert second.unit_public_id == first.unit_public_id
    with served.db.read() as session:
        drafts = session.execute(text("SELECT worker_id FROM drafts")).all()
        groups = session.execute(text("SELECT worker_id, group_id FROM worker_groups")).all()
    assert drafts == [] and groups == [(second.worker_id, "g0")]
    with pytest.raises(ClaimRefused):  # the group is theirs now: no second unit of it
        claim_unit(served.db, served.task_id, served.run_id, "local", "w2", "s2",
                   served.limits, served.blocked_workers)


def test_a_snapshot_sees_one_moment_of_the_database(tmp_path, database_url, open_conf):
    """What commits while a snapshot reads is not in it (PostgreSQL: REPEATABLE READ READ
    ONLY; SQLite: one read transaction), and the snapshot writes nothing."""
    served = _served(tmp_path, database_url, open_conf)
    count = text("SELECT count(*) FROM workers")
    with served.db.snapshot() as connection:
        before = connection.execute(count).scalar()
        _claim(served, "w_new")  # commits a new worker meanwhile
        assert connection.execute(count).scalar() == before
    with served.db.snapshot() as connection:
        assert connection.execute(count).scalar() == before + 1
    if served.db.engine.dialect.name == "postgresql":
        with pytest.raises(DBAPIError, match="read-only"), \
                served.db.snapshot() as connection:
            connection.execute(text("DELETE FROM drafts"))


def test_a_begin_that_fails_is_sqlalchemys_error(tmp_path):
    """SQLite's BEGIN goes straight to the driver, but its failure is still SQLAlchemy's
    OperationalError: the launcher's background loop retries those instead of stopping."""
    path = tmp_path / "locked.sqlite3"
    db = Database(f"sqlite:///{path}")
    db.migrate()
    with db.engine.connect() as connection:  # the pool's one connection waits for no lock
        connection.exec_driver_sql("PRAGMA busy_timeout=0")
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(OperationalError, match="locked"), db.transaction():
            pass
    finally:
        blocker.close()
    with db.transaction() as connection:  # and the next one works
        assert connection.execute(text("SELECT 1")).scalar() == 1
    db.dispose()


def _plan_nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", []):
        yield from _plan_nodes(child)


def test_a_claim_walks_only_free_units_on_stale_statistics(tmp_path, postgres_url, open_conf):
    """PostgreSQL: statistics taken while every unit was free (the launch's ANALYZE) must not
    lead a claim to walk the primary key past every taken unit (its cost grew with the task's
    progress): the claim finds its unit through the index of free units."""
    lines = [{"data": [dialogue(f"d{n}", f"g{n}", TASKS)]} for n in range(300)]
    conf = write_task(tmp_path, lines, {f"g{n}": 1 for n in range(300)})
    served = open_conf(str(conf), postgres_url)
    with served.db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        c.exec_driver_sql("ANALYZE units")  # all 300 free
    claims = [_claim(served, f"w{n}") for n in range(250)]
    with served.db.engine.connect() as connection, connection.begin() as transaction:
        plan = connection.execute(text(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + str(TAKE_UNIT.postgresql)), {
            "worker_id": claims[0].worker_id, "session_id": "s2", "now": utcnow(),
            "deadline": None, "run_id": served.run_id, "pool": "main",
            "task_id": served.task_id, "provider_worker_id": "w0"}).scalar()[0]["Plan"]
        transaction.rollback()  # EXPLAIN ANALYZE ran the claim
    on_units = [node for node in _plan_nodes(plan) if node.get("Relation Name") == "units"]
    # the free units' index was walked (the claim ran), and no taken unit was read on the way
    assert any(node.get("Index Name") == "ix_units_free" and node["Actual Loops"] > 0
               for node in on_units)
    assert sum(node.get("Rows Removed by Filter", 0) for node in on_units) == 0

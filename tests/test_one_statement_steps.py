"""PostgreSQL's claim and submit without transactions: two statements each, checked in the
database, and the locked path whenever something changed between the two; one worker's limit
under claims from several processes at once, on both paths and both databases."""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections import Counter
from pathlib import Path

import psycopg
import pytest
from helpers import dialogue, run_in_greenlets, write_task
from psycopg import pq
from sqlalchemy import event, func, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, ProgrammingError

from collection_and_annotations.engine import work
from collection_and_annotations.engine.allocation import ClaimRefused, claim_unit, expire_overdue
from collection_and_annotations.engine.driver_sql import run
from collection_and_annotations.engine.hot_sql import Claimant, hot
from collection_and_annotations.engine.viewed_units import ViewedUnits
from collection_and_annotations.engine.work import WorkRefused, save_draft, submit, unit_view
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Submission, Unit, Worker, iso_utc, utcnow
from collection_and_annotations.storage.socket_wait import cooperative_wait

TASKS = ["overall_quality"]


def _served(tmp_path, database_url, open_conf, lines: int = 3, **task):
    conf = write_task(tmp_path, [{"data": [dialogue(f"d{i}", f"g{i}", TASKS)]}
                                 for i in range(lines)], {f"g{i}": 1 for i in range(lines)},
                      task=task or None)
    return open_conf(str(conf), database_url)


def _claim(served, worker: str, visit: str = "s1", first_pools=None):  # noqa: ANN001
    """`first_pools=served.new_worker_pools` claims as the server does: a new worker takes
    their unit in the statement that makes them."""
    return claim_unit(served.db, served.task_id, served.run_id, "local", worker, visit,
                      served.limits, served.blocked_workers, first_pools=first_pools)


def _answers(served, claim) -> dict:
    view = unit_view(served.db, served.blueprint, claim.unit_public_id, claim.worker_id)
    return {d["key"]: {"overall_quality": {"dialogue": {"Overall": 4}}}
            for d in view["dialogues"]}


def _statements(served):
    with served.db.snapshot() as connection:
        return hot(connection)


def _once_after(monkeypatch, served, statement: str, action) -> list:  # noqa: ANN001
    """`action` runs once, right after the first call of the hot statement `statement`
    returns (between a step's read and its write); its result lands in the list returned."""
    statements = _statements(served)
    original = getattr(statements, statement)
    done: list = []

    def then_act(*args, **kwargs):  # noqa: ANN002, ANN003
        seen = original(*args, **kwargs)
        if not done:
            done.append(None)  # before acting: the action may run the same statement
            done[0] = action()
        return seen

    monkeypatch.setattr(statements, statement, then_act)
    return done


def _units_of(served, worker: str) -> list[tuple[str, str]]:
    with served.db.read() as session:
        return session.execute(
            select(Unit.public_id, Unit.status).join(Worker, Worker.id == Unit.worker_id)
            .where(Worker.provider_worker_id == worker)).all()


class _Trace:
    """libpq's protocol trace of every new connection of `db`: what each step sent."""

    def __init__(self, db: Database, path: Path):
        self.path = path
        self.file = path.open("w")
        db.dispose()  # connections made from now on are traced
        event.listen(db.engine, "connect", self._trace)
        self.seen = 0

    def _trace(self, dbapi_connection, _record) -> None:  # noqa: ANN001
        dbapi_connection.pgconn.trace(self.file.fileno())
        dbapi_connection.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)

    def sent(self) -> Counter:
        """The statements (Execute) and simple queries (BEGIN, COMMIT) sent since last asked,
        and the statements bound under this project's prepared names (`prepared`)."""
        self.file.flush()
        lines = self.path.read_text().splitlines()[self.seen:]
        self.seen += len(lines)
        sent = [line.split("\t") for line in lines if line.startswith("F\t")]
        return Counter([fields[2] for fields in sent if fields[2] in ("Execute", "Query")]
                       + ["prepared" for fields in sent
                          if fields[2] == "Bind" and '"cep_' in fields[3]])


@pytest.mark.postgres
@pytest.mark.parametrize("waits", ["blocking", "in the event loop"])
def test_a_workers_steps_are_one_or_two_statements_each_without_a_transaction(
        tmp_path, postgres_url, open_conf, monkeypatch, waits):
    """Every round trip costs a step time under load. A new worker's first claim is one
    statement (the worker made and the unit taken), a known worker's claim two; the page's
    read and a draft one each; a submit one after the page's read in this process, two
    without it. No BEGIN or COMMIT, and every step's statements are this project's prepared
    statements, run through libpq (blocking, or with the waits handed to the event loop)."""
    served = _served(tmp_path, postgres_url, open_conf)
    trace = _Trace(served.db, tmp_path / "trace.txt")
    first_pools = served.new_worker_pools
    assert first_pools == ["main"]

    def steps() -> None:
        claim = _claim(served, "w1", first_pools=first_pools)
        assert trace.sent() == {"Execute": 1, "prepared": 1}  # each prepared through libpq
        assert _units_of(served, "w1") == [(claim.unit_public_id, "assigned")]
        trace.sent()  # that check's own statements
        answers = _answers(served, claim)
        assert trace.sent() == {"Execute": 1, "prepared": 1}
        save_draft(served.db, claim.unit_public_id, claim.worker_id, answers, None)
        assert trace.sent() == {"Execute": 1, "prepared": 1}
        assert submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id,
                      answers, {}, None) == "completed"
        assert trace.sent() == {"Execute": 1, "prepared": 1}
        again = _claim(served, "w1", "s2", first_pools)  # a known worker's next unit: two
        assert trace.sent() == {"Execute": 2, "prepared": 2}
        assert again.unit_public_id != claim.unit_public_id
        answers = _answers(served, again)
        trace.sent()
        monkeypatch.setattr(work, "_VIEWED", ViewedUnits())  # read by another process
        assert submit(served.db, served.blueprint, again.unit_public_id, again.worker_id,
                      answers, {}, None) == "completed"
        assert trace.sent() == {"Execute": 2, "prepared": 2}

    if waits == "blocking":
        steps()
    else:
        _in_a_slot(steps)
    trace.file.close()


@pytest.mark.postgres
def test_a_new_worker_whose_first_pool_is_empty_takes_from_the_next(tmp_path, postgres_url,
                                                                     open_conf):
    """The first statement makes the worker and finds nothing in the first pool (here one
    this task does not have): the claim goes on as for a known worker, as the task kind
    routes them, and the worker is made once."""
    served = _served(tmp_path, postgres_url, open_conf)
    trace = _Trace(served.db, tmp_path / "trace.txt")
    claim = _claim(served, "w1", first_pools=["gold", "main"])
    assert trace.sent() == {"Execute": 2, "prepared": 2}
    assert _units_of(served, "w1") == [(claim.unit_public_id, "assigned")]
    with served.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Worker)) == 1
    trace.file.close()


@pytest.mark.postgres
def test_a_claim_whose_worker_changed_between_its_statements_takes_the_lock(
        tmp_path, postgres_url, open_conf, monkeypatch):
    """Another claim of the same worker lands between the read and the take: the take sees
    the worker's row changed and the claim runs again under the lock, where the worker's
    limit (one unit at a time) refuses it. Without that check the worker held two units."""
    served = _served(tmp_path, postgres_url, open_conf, allowed_concurrent=1)
    raced = _once_after(monkeypatch, served, "worker_view",
                        lambda: _claim(served, "w1", "other-tab"))
    with pytest.raises(ClaimRefused, match="already have 1 unit"):
        _claim(served, "w1", "this-tab")
    assert _units_of(served, "w1") == [(raced[0].unit_public_id, "assigned")]


@pytest.mark.postgres
def test_a_take_on_an_old_version_of_the_worker_takes_nothing(tmp_path, postgres_url,
                                                               open_conf):
    served = _served(tmp_path, postgres_url, open_conf)
    statements = _statements(served)
    with served.db.snapshot() as connection:
        before = statements.worker_view(connection, "local", "w1", utcnow(), served.task_id)
    _claim(served, "w1", "s1")
    with served.db.snapshot() as connection:
        unchanged, taken = statements.assign_unit_if_unchanged(
            connection, before.version, Claimant(served.run_id, served.task_id, before.id,
                                                 "w1", "s2", utcnow(), None), "main")
    assert (unchanged, taken) == (False, None)
    assert len(_units_of(served, "w1")) == 1


def _waits_for_a_lock(connection: psycopg.Connection, database: str) -> bool:
    """Whether another session of `database` is waiting for a lock."""
    with psycopg.connect(connection.info.dsn, autocommit=True) as watcher:
        return watcher.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> %s "
            "AND wait_event_type = 'Lock'", (database, connection.info.backend_pid)
        ).fetchone()[0] > 0


@pytest.mark.postgres
@pytest.mark.parametrize("first_pools", [None, ["main"]], ids=["read first", "take at once"])
def test_a_first_claim_racing_another_first_claim_of_the_worker(tmp_path, postgres_url,
                                                                 open_conf, first_pools):
    """The worker's row is being created by another visit: the read finds no row once that
    commits (it began before), and the claim runs under the lock on the row that exists.
    A claim that would make the worker and take their unit at once takes nothing."""
    served = _served(tmp_path, postgres_url, open_conf)
    url = make_url(postgres_url)
    with psycopg.connect(host=url.host, port=url.port, user=url.username,
                         dbname=url.database) as other_visit:
        worker_id = other_visit.execute(
            "INSERT INTO workers (provider, provider_worker_id, pseudonym, created_at) "
            "VALUES ('local', 'w1', 'w_other', now()) RETURNING id").fetchone()[0]
        outcome: list[object] = []
        claiming = threading.Thread(
            target=lambda: outcome.append(_claim(served, "w1", first_pools=first_pools)))
        claiming.start()
        deadline = time.monotonic() + 10
        while not _waits_for_a_lock(other_visit, url.database):  # for the other visit's row
            assert time.monotonic() < deadline and claiming.is_alive()
            time.sleep(0.02)
        other_visit.commit()
    claiming.join(10)
    assert outcome and outcome[0].worker_id == worker_id
    assert _units_of(served, "w1") == [(outcome[0].unit_public_id, "assigned")]
    with served.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Worker)) == 1


@pytest.mark.postgres
@pytest.mark.parametrize("read", ["by the submit", "by the page"])
def test_a_submit_whose_unit_changed_hands_meanwhile_is_a_409(tmp_path, postgres_url,
                                                               open_conf, monkeypatch, read):
    """The unit expires and goes to another worker between the read the submit judges on and
    its store: nothing is stored, the new worker keeps the unit, and the worker hears why.
    The read is the submit's own, or the page's earlier one kept in this process
    (`ViewedUnits`), which is then out of date."""
    served = _served(tmp_path, postgres_url, open_conf, lines=1)
    claim = _claim(served, "w1")
    answers = _answers(served, claim)

    def hand_over():
        with served.db.session() as session:
            session.execute(Unit.__table__.update().values(deadline=utcnow()))
            expire_overdue(session, served.run_id)
        return _claim(served, "w2")

    if read == "by the submit":
        monkeypatch.setattr(work, "_VIEWED", ViewedUnits())
        taken = _once_after(monkeypatch, served, "unit_with_data", hand_over)
    else:
        taken = [hand_over()]
    with pytest.raises(WorkRefused, match="time for this unit ran out") as refused:
        submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id, answers,
               {}, None)
    assert refused.value.status == 409
    assert taken[0].unit_public_id == claim.unit_public_id
    assert _units_of(served, "w2") == [(claim.unit_public_id, "assigned")]
    with served.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 0


@pytest.mark.postgres
def test_a_submit_after_its_unit_came_back_to_the_worker_is_judged_on_the_new_try(
        tmp_path, postgres_url, open_conf):
    """The page read the unit, the unit expired, and the same worker took it again: the
    submit stores once, on the new try (its assignment time, not the page's out-of-date
    one), and the worker's next submit of it is answered as a retry."""
    served = _served(tmp_path, postgres_url, open_conf, lines=1, allowed_concurrent=0)
    claim = _claim(served, "w1")
    answers = _answers(served, claim)  # kept in this process for the submit
    with served.db.session() as session:
        session.execute(Unit.__table__.update().values(deadline=utcnow()))
        expire_overdue(session, served.run_id)
    time.sleep(0.01)
    again = _claim(served, "w1", "s2")
    assert again.unit_public_id == claim.unit_public_id
    assert submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id, answers,
                  {}, None) == "completed"
    assert submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id, answers,
                  {}, None) == "completed"
    with served.db.read() as session:
        unit = session.scalars(select(Unit)).one()
        stored = session.scalars(select(Submission)).one()
    assert (unit.status, unit.times_expired) == ("completed", 1)
    assert stored.timings["server"]["assigned_at"] == iso_utc(unit.assigned_at)


@pytest.mark.postgres
@pytest.mark.parametrize("waits", ["blocking", "in the event loop"])
def test_statements_without_a_transaction_run_prepared_through_libpq(tmp_path, postgres_url,
                                                                       open_conf, waits):
    """Their values and rows come and go as psycopg's cursor gives them (JSON, times, NULL,
    arrays), a failure is SQLAlchemy's error of the right kind, and a statement whose prepared
    form the connection lost (psycopg deallocates all of them when it rolls back a
    transaction in which it prepared its own) is prepared again. The same whether the step
    blocks for PostgreSQL's answers (a thread) or hands its waits to the event loop (the
    greenlets that serve the worker's steps on PostgreSQL)."""
    served = _served(tmp_path, postgres_url, open_conf, lines=1)
    claim = _claim(served, "w1")
    answers = {"é": ["ü", 1.5, None], "deep": {"n": [1, {"k": True}]}}

    def steps() -> None:
        with served.db.snapshot() as connection:
            statements = hot(connection)
            when = utcnow()
            unit = statements.save_draft(connection, claim.unit_public_id, claim.worker_id,
                                         answers, None, when)
            view = statements.unit_view(connection, claim.unit_public_id, claim.worker_id)
            assert (view.answers, view.position, view.saved_at) == (answers, None, when)
            row = run(connection,
                      "SELECT %(a)s::text[], %(b)s::int, %(c)s::text IS NULL, '100%%'",
                      {"a": ["x", "y"], "b": 7, "c": None}).fetchone()
            assert row == (["x", "y"], 7, True, "100%")
            connection.connection.dbapi_connection.execute("DEALLOCATE ALL")
            again = statements.unit_with_data(connection, claim.unit_public_id)  # new here
            assert (again.id, again.worker_id, again.status) == (unit.id, claim.worker_id,
                                                                 "assigned")
            assert statements.unit_view(connection, claim.unit_public_id,  # prepared before
                                        claim.worker_id).answers == answers
            with pytest.raises(ProgrammingError, match="no_such_table"):
                run(connection, "SELECT * FROM no_such_table WHERE id = %(id)s", {"id": 1})
        done = submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id,
                      _answers(served, claim), {}, None)
        assert done == "completed"
        with served.db.snapshot() as connection, pytest.raises(IntegrityError):
            # a second submission row for the unit: the unique key, as SQLAlchemy's error
            run(connection, "INSERT INTO submissions (unit_id, worker_id, task_run_id, "
                "answers, timings, created_at) VALUES (%(u)s, %(w)s, %(r)s, '{}', '{}', now())",
                {"u": unit.id, "w": claim.worker_id, "r": served.run_id})

    if waits == "blocking":
        steps()
    else:
        _in_a_slot(steps)


def _in_a_slot(call):  # noqa: ANN001, ANN202
    """`call()` in a slot of the greenlet pool, with its waits handed to the loop (checked)."""
    def checked():  # noqa: ANN202
        assert cooperative_wait() is not None
        return call()

    (result,), _ = run_in_greenlets(1, checked)
    if isinstance(result, BaseException):
        raise result
    return result


def _claims_at_once(served, url: str, workers: list[str], visit: str, barrier,
                    results, first_pools) -> None:
    served.db = Database(url)
    for worker in workers:
        barrier.wait(timeout=30)  # every process claims for this worker at the same moment
        try:
            results.append((worker,
                            _claim(served, worker, visit, first_pools).unit_public_id))
        except ClaimRefused:
            results.append((worker, None))
    served.db.dispose()


# The locked path runs on its own where a limit on the whole task needs the task's lock.
# A new worker's first claim takes their unit at once where the task kind says where it goes.
@pytest.mark.parametrize("path, first_pools",
                         [({}, None), ({}, ["main"]), ({"max_num_concurrent_units": 1000}, None)],
                         ids=["optimistic", "optimistic, taken at once", "locked"])
def test_one_workers_claims_from_four_processes_at_once_keep_its_limit(
        tmp_path, database_url, open_conf, path, first_pools):
    """Four processes claim for the same worker at the same moment, each for a visit of its
    own, 15 workers in a row: with one unit at a time allowed, each worker gets exactly one
    unit, and the claim that got it is the one that said so. (The locked path once read the
    worker's units in the statement that waited for their row: it saw none of the units the
    claims it waited for took, and a worker got up to four.)"""
    served = _served(tmp_path, database_url, open_conf, lines=60, allowed_concurrent=1, **path)
    served.db.dispose()
    context = multiprocessing.get_context("fork")
    manager = context.Manager()
    barrier, results = manager.Barrier(4), manager.list()
    workers = [f"w{i}" for i in range(15)]
    processes = [context.Process(target=_claims_at_once,
                                 args=(served, database_url, workers, f"tab{p}", barrier,
                                       results, first_pools)) for p in range(4)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0
    given = Counter(worker for worker, unit in results if unit is not None)
    assert given == {worker: 1 for worker in workers}
    for worker, unit in results:
        if unit is not None:
            assert _units_of(served, worker) == [(unit, "assigned")]

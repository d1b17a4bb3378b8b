"""Acknowledged work is never undone: expiry against submits, drafts per worker, readers that
never block writers, data edited between runs, one server per task."""

from __future__ import annotations

import contextlib
import multiprocessing
import random
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from helpers import REPO, Running, dialogue, free_port, http_client, http_post, welcome, write_task
from sqlalchemy import insert, select, text, update

from collection_and_annotations.engine.allocation import ClaimRefused, claim_unit, expire_overdue
from collection_and_annotations.engine.runs import end_run, unit_counts
from collection_and_annotations.engine.work import WorkRefused, save_draft, submit, unit_view
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import (
    Assignment,
    AssignmentGroup,
    Draft,
    Submission,
    Unit,
    Worker,
    WorkerGroup,
    utcnow,
)

TASKS = ["overall_quality"]


def _lines(count: int, prefix: str = "d") -> list[dict]:
    return [{"data": [dialogue(f"{prefix}{i}", f"g{i}", TASKS)]} for i in range(count)]


def _claim(served, worker: str, session: str = "s1"):
    return claim_unit(served.db, served.task_id, served.run_id, "local", worker, session,
                      served.limits, served.blocked_workers)


def _answers(served, public_id: str) -> dict:
    with served.db.read() as session:
        data = session.scalar(select(Assignment.data).join(Unit)
                              .where(Unit.public_id == public_id))
    return {d["key"]: {"overall_quality": {"dialogue": {"Overall": 4}}}
            for d in data["dialogues"]}


def _make_overdue(served, public_id: str) -> None:
    with served.db.session() as session:
        session.execute(update(Unit).where(Unit.public_id == public_id)
                        .values(deadline=utcnow() - timedelta(seconds=5)))


def _dialogue_of(served, public_id: str) -> int:
    """The line (`_lines`) of a one-dialogue unit."""
    with served.db.read() as session:
        data = session.scalar(select(Assignment.data).join(Unit)
                              .where(Unit.public_id == public_id))
    return int(data["dialogues"][0]["source"]["dialogue_id"].removeprefix("d"))


def _unit(served, public_id: str) -> Unit:
    with served.db.read() as session:
        return session.scalars(select(Unit).where(Unit.public_id == public_id)).one()


@pytest.mark.postgres
def test_expiry_leaves_a_unit_alone_while_its_submit_is_in_flight(tmp_path, postgres_url,
                                                                   open_conf):
    """The sweep used to read the overdue ids, wait for the submit's row lock, then put the
    just-completed unit back in the pool and delete its worker's group rows."""
    served = open_conf(str(write_task(tmp_path, _lines(2), {"g0": 1, "g1": 1})), postgres_url)
    claim = _claim(served, "w1")
    _make_overdue(served, claim.unit_public_id)
    unit = _unit(served, claim.unit_public_id)
    with served.db.engine.connect() as submitting:  # a submit, stopped before its commit
        transaction = submitting.begin()
        submitting.execute(select(Unit.id).where(Unit.id == unit.id).with_for_update())
        submitting.execute(update(Unit).where(Unit.id == unit.id)
                           .values(status="completed", completed_at=utcnow()))
        submitting.execute(insert(Submission).values(
            unit_id=unit.id, worker_id=claim.worker_id, task_run_id=served.run_id,
            answers={}, timings={}, created_at=utcnow()))
        expired: list[int] = []

        def sweep() -> None:
            with served.db.session() as session:
                expired.append(expire_overdue(session, served.run_id))

        sweeper = threading.Thread(target=sweep)
        sweeper.start()
        sweeper.join(timeout=1.0)
        transaction.commit()
    sweeper.join(timeout=10)
    assert expired == [0]
    after = _unit(served, claim.unit_public_id)
    assert (after.status, after.worker_id, after.times_expired) == (
        "completed", claim.worker_id, 0)
    with served.db.read() as session:  # the worker keeps the group of the unit they did
        assert session.scalar(select(WorkerGroup.group_id)
                              .where(WorkerGroup.unit_id == unit.id)) == session.scalar(
            select(AssignmentGroup.group_id)
            .where(AssignmentGroup.assignment_id == unit.assignment_id))


def test_submit_after_expiry_is_a_clear_409_and_stores_nothing(tmp_path, database_url,
                                                               open_conf):
    served = open_conf(str(write_task(tmp_path, _lines(1), {"g0": 1})), database_url)
    claim = _claim(served, "w1")
    _make_overdue(served, claim.unit_public_id)
    with served.db.session() as session:
        assert expire_overdue(session, served.run_id) == 1
    with pytest.raises(WorkRefused, match="time for this unit ran out") as refused:
        submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id,
               _answers(served, claim.unit_public_id), {}, None)
    assert refused.value.status == 409
    with served.db.read() as session:
        assert session.scalar(select(Submission.id)) is None


def _race_worker(served, url: str, workers: list[str], results) -> None:
    """A process of annotators who submit around their one-second deadline."""
    served.db = Database(url)

    def one(worker: str) -> tuple[str, str, str]:
        try:
            claim = _claim(served, worker)
        except ClaimRefused:
            return worker, "", "no-work"
        time.sleep(random.uniform(0.8, 1.3))
        try:
            submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id,
                   _answers(served, claim.unit_public_id), {}, None)
            return worker, claim.unit_public_id, "stored"
        except WorkRefused as exc:
            return worker, claim.unit_public_id, str(exc.status)
        except Exception as exc:  # noqa: BLE001 - the test reports any other failure
            return worker, claim.unit_public_id, f"error: {exc!r}"

    with ThreadPoolExecutor(max_workers=len(workers)) as pool:
        results.extend(list(pool.map(one, workers)))
    served.db.dispose()


def _run_all(processes: list, timeout: float) -> None:
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=timeout)
        assert process.exitcode == 0, f"{process.name} ended with {process.exitcode}"


def _sweeper(served, url: str, seconds: float, failures) -> None:
    served.db = Database(url)
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        try:
            with served.db.session() as session:
                expire_overdue(session, served.run_id)
        except Exception as exc:  # noqa: BLE001
            failures.append(repr(exc))
        time.sleep(0.003)
    served.db.dispose()


def test_submits_racing_the_sweep_from_several_processes(tmp_path, database_url, open_conf):
    """Three processes of annotators submit around their deadline while two processes sweep:
    every acknowledged submission stays completed with its groups; refusals are 409s."""
    served = open_conf(str(write_task(
        tmp_path, _lines(45), {f"g{i}": 1 for i in range(45)},
        task={"assignment_duration_in_seconds": 1, "allowed_concurrent": 0})), database_url)
    served.db.dispose()
    context = multiprocessing.get_context("fork")
    manager = context.Manager()
    results, failures = manager.list(), manager.list()
    processes = [
        context.Process(target=_race_worker,
                        args=(served, database_url, [f"w{p}_{i}" for i in range(15)], results))
        for p in range(3)
    ] + [context.Process(target=_sweeper, args=(served, database_url, 3.0, failures))
         for _ in range(2)]
    _run_all(processes, timeout=60)
    outcomes = list(results)
    assert list(failures) == []
    assert len(outcomes) == 45
    assert {status for *_, status in outcomes} <= {"stored", "409"}, outcomes
    db = Database(database_url)
    with db.read() as session:
        for worker, public_id, status in outcomes:
            unit = session.scalars(select(Unit).where(Unit.public_id == public_id)).one()
            stored = session.scalar(select(Submission.id).where(Submission.unit_id == unit.id))
            if status == "stored":
                assert unit.status == "completed" and stored is not None, worker
                assert session.scalar(select(WorkerGroup.group_id)
                                      .where(WorkerGroup.unit_id == unit.id)) is not None
            else:  # refused: nothing of theirs stored (a late claim may have taken the unit)
                mine = session.scalar(
                    select(Submission.id).join(Worker, Submission.worker_id == Worker.id)
                    .where(Submission.unit_id == unit.id, Worker.provider_worker_id == worker))
                assert mine is None, worker
                assert unit.status != "completed" or stored is not None, worker
    db.dispose()


def test_a_draft_is_never_shown_to_the_next_worker_of_its_unit(tmp_path, database_url,
                                                               open_conf):
    served = open_conf(str(write_task(tmp_path, _lines(1), {"g0": 1})), database_url)
    first = _claim(served, "w1")
    answers = _answers(served, first.unit_public_id)
    save_draft(served.db, first.unit_public_id, first.worker_id, answers, {"step": 1})
    _make_overdue(served, first.unit_public_id)
    second = _claim(served, "w2")
    assert second.unit_public_id == first.unit_public_id
    # Even a draft row of the first worker that survived (written in the instant of the
    # hand-over) belongs to them, not to the unit.
    with served.db.session() as session:
        session.execute(insert(Draft).values(unit_id=_unit(served, first.unit_public_id).id,
                                             worker_id=first.worker_id, answers=answers,
                                             saved_at=utcnow()))
    view = unit_view(served.db, served.blueprint, second.unit_public_id, second.worker_id)
    assert view["draft"] is None
    with pytest.raises(WorkRefused) as refused:
        save_draft(served.db, first.unit_public_id, first.worker_id, answers, None)
    assert refused.value.status == 409
    save_draft(served.db, second.unit_public_id, second.worker_id, answers, {"step": 2})
    view = unit_view(served.db, served.blueprint, second.unit_public_id, second.worker_id)
    assert view["draft"]["position"] == {"step": 2}


def _claims_in_a_process(served, url: str, workers: list[str], results) -> None:
    served.db = Database(url)
    for worker in workers:
        for session in ("a", "b"):
            with contextlib.suppress(ClaimRefused):
                results.append(_claim(served, worker, session).unit_public_id)
    served.db.dispose()


def test_sqlite_claims_from_four_processes_never_double_assign(tmp_path, open_conf):
    url = f"sqlite:///{tmp_path / 'cep.sqlite3'}"
    served = open_conf(str(write_task(tmp_path, _lines(30), {f"g{i}": 2 for i in range(30)},
                                      task={"allowed_concurrent": 0})), url)
    served.db.dispose()
    context = multiprocessing.get_context("fork")
    results = context.Manager().list()
    processes = [context.Process(target=_claims_in_a_process,
                                 args=(served, url, [f"w{p}_{i}" for i in range(10)], results))
                 for p in range(4)]
    _run_all(processes, timeout=120)
    claimed = list(results)
    assert len(claimed) == len(set(claimed)) == 60  # 80 asks, 60 units, none given twice


def test_export_from_another_process_never_stalls_workers(tmp_path, open_conf):
    """10,000 submissions exported by the CLI while 50 workers claim and submit: the export
    reads snapshots in pages, so no worker waits for it or fails."""
    url = f"sqlite:///{tmp_path / 'data' / 'cep.sqlite3'}"
    served = open_conf(str(write_task(tmp_path, _lines(10_050), None,
                                      task={"allowed_concurrent": 0})), url)
    with served.db.session() as session:  # 10,000 completed units, as if annotated
        units = session.execute(select(Unit.id, Unit.assignment_id).order_by(Unit.id)
                                .limit(10_000)).all()
        session.execute(text("INSERT INTO workers (provider, provider_worker_id, pseudonym, "
                             "created_at) VALUES ('local', 'past', 'w_past', :now)"),
                        {"now": utcnow()})
        worker_id = session.scalar(text("SELECT id FROM workers WHERE pseudonym = 'w_past'"))
        session.execute(
            insert(Submission),
            [{"unit_id": unit_id, "worker_id": worker_id, "task_run_id": served.run_id,
              "answers": {}, "timings": {"server": {"duration_seconds": 1}},
              "created_at": utcnow()} for unit_id, _ in units],
        )
        session.execute(update(Unit).where(Unit.id.in_([u for u, _ in units]))
                        .values(status="completed", worker_id=worker_id))
    exporting = subprocess.Popen(
        [sys.executable, "-m", "collection_and_annotations", "export", "--task", "t",
         "--format", "submissions", "--data-dir", str(tmp_path / "data"),
         "-o", str(tmp_path / "export.jsonl")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    latencies: list[float] = []
    errors: list[str] = []

    def work(n: int) -> None:
        started = time.monotonic()
        try:
            claim = _claim(served, f"live{n}")
            submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id,
                   _answers(served, claim.unit_public_id), {}, None)
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))
        latencies.append(time.monotonic() - started)

    output = tmp_path / "export.jsonl"
    deadline = time.monotonic() + 30
    while not (output.exists() and output.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.01)  # until the export has written its first page
    with ThreadPoolExecutor(max_workers=10) as pool:
        list(pool.map(work, range(50)))
    still_exporting = exporting.poll() is None
    _, stderr = exporting.communicate(timeout=120)
    assert exporting.returncode == 0, stderr
    assert "exported 10000 submissions" in stderr
    assert errors == []
    assert still_exporting, "the workers did not overlap the export; export more rows"
    assert max(latencies) < 2.0, max(latencies)


def test_edited_data_retires_old_units_and_reports_changes(tmp_path, database_url, open_conf,
                                                           capsys):
    lines = _lines(3)
    conf = write_task(tmp_path, lines, {"g0": 1, "g1": 1, "g2": 1})
    served = open_conf(str(conf), database_url)
    done = _claim(served, "w1")
    submit(served.db, served.blueprint, done.unit_public_id, done.worker_id,
           _answers(served, done.unit_public_id), {}, None)
    held = _claim(served, "w2")  # its line will be removed while w2 holds it
    end_run(served.db, served.run_id, "stopped")
    capsys.readouterr()
    # units are served in a random order: which lines were done and held decides the edit
    kept, removed = (_dialogue_of(served, c.unit_public_id) for c in (done, held))
    changed = ({0, 1, 2} - {kept, removed}).pop()
    edited = [lines[kept],
              {"data": [dialogue(f"d{changed}", f"g{changed}", TASKS, turns=6)]},  # new text
              {"data": [dialogue("d3", "g3", TASKS)]}]  # d3: added
    conf = write_task(tmp_path, edited, {f"g{kept}": 1, f"g{changed}": 1, "g3": 1})
    rerun = open_conf(str(conf), database_url)
    printed = capsys.readouterr().out
    assert "the task data changed since the last run" in printed
    assert "added: 1 (d3)" in printed and f"removed: 1 (d{removed})" in printed
    assert f"changed text (same ids): 1 (d{changed})" in printed
    assert "2 unfinished unit(s) of removed or changed items retired (1 were held" in printed
    counts = unit_counts(rerun.db, rerun.task_id)
    assert counts == {"completed": 1, "retired": 2, "launched": 2}
    with pytest.raises(WorkRefused, match="withdrew"):
        submit(rerun.db, rerun.blueprint, held.unit_public_id, held.worker_id,
               _answers(rerun, held.unit_public_id), {}, None)
    served_ids = set()
    for worker in ("w3", "w4", "w5"):
        try:
            claim = _claim(rerun, worker)
        except ClaimRefused:
            continue
        served_ids.add(claim.unit_public_id)
        assert _unit(rerun, claim.unit_public_id).status == "assigned"
    assert len(served_ids) == 2 and held.unit_public_id not in served_ids
    end_run(rerun.db, rerun.run_id, "stopped")
    capsys.readouterr()
    open_conf(str(conf), database_url)  # same data again: nothing to report
    assert "changed" not in capsys.readouterr().out


def test_a_second_server_for_the_same_task_refuses_to_start(tmp_path):
    conf = write_task(tmp_path, _lines(2), {"g0": 1, "g1": 1})
    first = Running(tmp_path, free_port(), str(conf))
    try:
        first.wait_for(r"press Ctrl-C")
        second = welcome(f"conf={conf}", f"mephisto.architect.port={free_port()}",
                         f"data_dir={tmp_path / 'data'}", cwd=tmp_path)
        assert second.returncode == 2, second.stdout + second.stderr
        assert "a server for task 't' is already running" in second.stderr
        assert "pid" in second.stderr and "since" in second.stderr
        reply = http_post(f"{first.wait_for(r'(http://[^/]+)/').group(1)}/api/claim",
                          json={"worker_id": "w1", "assignment_id": "a"}, timeout=10)
        assert reply.status_code == 200  # the first one still serves
    finally:
        first.process.kill()
        first.process.wait()
    # Killed without a goodbye: once its heartbeat is stale, a new server may take over.
    db = Database(f"sqlite:///{tmp_path / 'data' / 'cep.sqlite3'}")
    with db.session() as session:
        session.execute(text("UPDATE task_runs SET heartbeat_at = :old"),
                        {"old": utcnow() - timedelta(seconds=60)})
    db.dispose()
    third = Running(tmp_path, free_port(), str(conf))
    try:
        third.wait_for(r"press Ctrl-C")
    finally:
        third.process.kill()
        third.process.wait()


@pytest.mark.postgres
def test_database_errors_in_the_background_never_stop_the_server(tmp_path, postgres_url):
    conf = write_task(tmp_path, _lines(2), {"g0": 1, "g1": 1})
    port = free_port()
    run = Running(tmp_path, port, str(conf), f"database_url={postgres_url}")
    try:
        run.wait_for(r"press Ctrl-C")
        database = postgres_url.rsplit("/", 1)[1]
        admin = Database(postgres_url.rsplit("/", 1)[0] + "/test")
        for _ in range(3):  # cut every connection the server holds, a few times
            with admin.engine.connect() as connection:
                connection.execute(text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = :name AND pid <> pg_backend_pid()"), {"name": database})
                connection.commit()
            time.sleep(1.2)
        admin.dispose()
        run.wait_for(r"background check failed", timeout=20)
        assert run.process.poll() is None
        reply = None
        for _ in range(5):  # the pool notices dropped connections on first use
            reply = http_post(f"http://127.0.0.1:{port}/api/claim",
                              json={"worker_id": "w1", "assignment_id": "a"}, timeout=10)
            if reply.status_code == 200:
                break
        assert reply is not None and reply.status_code == 200
    finally:
        run.process.kill()
        run.process.wait()


@pytest.mark.postgres
def test_workers_submitting_around_their_deadlines_with_two_server_processes(tmp_path,
                                                                             postgres_url):
    """The launcher's sweep and two server processes under 80 submits near their deadlines:
    the server stays up, answers only 200 or 409, and every 200 is a completed unit."""
    conf = write_task(tmp_path, _lines(80), {f"g{i}": 1 for i in range(80)},
                      task={"assignment_duration_in_seconds": 2, "allowed_concurrent": 0})
    port = free_port()
    run = Running(tmp_path, port, str(conf), f"database_url={postgres_url}",
                  "mephisto.architect.server_processes=2")
    base = f"http://127.0.0.1:{port}"
    try:
        run.wait_for(r"press Ctrl-C")

        def annotate(n: int) -> tuple[str, str, int]:
            with http_client(base_url=base, timeout=30) as client:
                claimed = client.post("/api/claim", json={"worker_id": f"w{n}",
                                                          "assignment_id": "a"}).json()
                headers = {"Authorization": f"Bearer {claimed['token']}"}
                unit = client.get(f"/api/units/{claimed['unit_id']}", headers=headers).json()
                answers = {d["key"]: {"overall_quality": {"dialogue": {"Overall": 3}}}
                           for d in unit["dialogues"]}
                time.sleep(random.uniform(1.6, 2.6))
                reply = client.post(f"/api/units/{claimed['unit_id']}/submit",
                                    json={"answers": answers}, headers=headers)
                return f"w{n}", claimed["unit_id"], reply.status_code

        with ThreadPoolExecutor(max_workers=40) as pool:
            outcomes = list(pool.map(annotate, range(80)))
        assert run.process.poll() is None, "".join(run.lines)
        assert {status for *_, status in outcomes} <= {200, 409}, outcomes
        assert any(status == 409 for *_, status in outcomes)  # the deadlines did bite
        db = Database(postgres_url)
        with db.read() as session:
            for worker, public_id, status in outcomes:
                unit = session.scalars(select(Unit).where(Unit.public_id == public_id)).one()
                mine = session.scalar(
                    select(Submission.id).join(Worker, Submission.worker_id == Worker.id)
                    .where(Submission.unit_id == unit.id, Worker.provider_worker_id == worker))
                assert (status == 200) == (mine is not None), (worker, status)
                if status == 200:
                    assert unit.status == "completed"
        db.dispose()
    finally:
        run.process.kill()
        run.process.wait()

"""The worker steps' pool on PostgreSQL: greenlets in the event loop's thread that hand their
waits for the database to the loop (server/greenlet_pool.py, storage/socket_wait.py)."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from helpers import dialogue, run_coroutine, run_in_greenlets, serving, write_task
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

from collection_and_annotations.engine.driver_sql import run
from collection_and_annotations.server.app import create_app
from collection_and_annotations.server.greenlet_pool import GreenletPool
from collection_and_annotations.server.http import uvicorn_server, worker_step_pool
from collection_and_annotations.server.thread_pool import ThreadPool
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.socket_wait import cooperative_wait

pytestmark = pytest.mark.postgres


@pytest.fixture
def db(postgres_url):
    database = Database(postgres_url)
    database.migrate()
    with database.engine.begin() as connection:
        connection.execute(text("CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL)"))
        connection.execute(text("INSERT INTO counters VALUES (1, 0)"))
    yield database
    database.dispose()


def _sleep(db: Database, seconds: float):  # noqa: ANN202
    def call() -> float:
        with db.snapshot() as connection:
            run(connection, "SELECT pg_sleep(%(s)s)", {"s": seconds})
        return time.monotonic()
    return call


def test_a_slot_waiting_for_postgresql_lets_the_loop_run_the_others(db):
    """Three statements of 0.4 s in three slots overlap, and the loop keeps running (its
    ticker ticks) while they wait: a blocking wait would have stopped it for 1.2 s."""
    started = time.monotonic()
    results, ticks = run_in_greenlets(3, *(_sleep(db, 0.4) for _ in range(3)))
    assert all(isinstance(result, float) for result in results)
    assert max(results) - started < 1.0
    assert ticks >= 20


def test_a_step_inside_a_transaction_blocks_instead_of_suspending(db):
    """A step that holds a row lock in a transaction and then waits for PostgreSQL (here a
    read on the autocommit connection) does not give the loop to another step: that step's
    blocking wait for the same lock would stop the loop, and with it the step holding the
    lock. Both finish, one after the other."""
    def hold_the_row_and_wait() -> str:
        with db.transaction() as connection:
            connection.execute(text("SELECT n FROM counters WHERE id = 1 FOR UPDATE"))
            with db.snapshot() as read:
                run(read, "SELECT pg_sleep(0.3)", {})
            connection.execute(text("UPDATE counters SET n = n + 1 WHERE id = 1"))
        return "held"

    def update_the_row() -> str:
        with db.transaction() as connection:
            connection.execute(text("SET LOCAL lock_timeout = '5s'"))
            connection.execute(text("UPDATE counters SET n = n + 10 WHERE id = 1"))
        return "updated"

    results, _ = run_in_greenlets(2, hold_the_row_and_wait, update_the_row)
    assert results == ["held", "updated"]
    with db.snapshot() as connection:
        assert connection.execute(text("SELECT n FROM counters")).scalar() == 11


def test_socket_waits_are_handed_to_the_loop_only_outside_transactions(db):
    def seen() -> tuple[bool, bool, bool]:
        outside = cooperative_wait() is not None
        with db.transaction():
            inside = cooperative_wait() is not None
        with db.session():
            in_session = cooperative_wait() is not None
        return outside, inside, in_session

    results, _ = run_in_greenlets(1, seen)
    assert results == [(True, False, False)]
    assert cooperative_wait() is None  # outside the pool, every wait blocks


def test_a_slot_keeps_its_autocommit_connection_and_closes_it_at_the_end(db):
    def connections() -> tuple[object, object]:
        with db.snapshot() as read:
            run(read, "SELECT 1", {})
        with db.transaction() as write:
            pass
        return read, write

    async def main():  # noqa: ANN202
        pool = GreenletPool(1, "test")
        first = await pool.run(connections)
        second = await pool.run(connections)
        held_before_close = not first[0].closed
        await pool.aclose()
        return first, second, held_before_close

    first, second, held_before_close = run_coroutine(main())
    assert first[0] is second[0] and held_before_close
    assert first[0].closed  # closed with the pool
    assert first[1].closed and second[1].closed  # a transaction's connection goes back


def test_errors_reach_the_caller_and_the_slot_goes_on(db):
    """A failed statement is SQLAlchemy's error of its kind, a broken connection is replaced,
    and the slot serves the next call."""
    def missing_table() -> None:
        with db.snapshot() as connection:
            run(connection, "SELECT * FROM no_such_table", {})

    def duplicate() -> None:
        with db.snapshot() as connection:
            run(connection, "INSERT INTO counters VALUES (%(id)s, 0)", {"id": 1})

    def killed() -> None:
        with db.snapshot() as connection:
            run(connection, "SELECT pg_terminate_backend(pg_backend_pid())", {})

    def works() -> int:
        with db.snapshot() as connection:
            return run(connection, "SELECT n FROM counters WHERE id = %(id)s",
                       {"id": 1}).fetchone()[0]

    def fails() -> None:
        raise ValueError("a step's own error")

    results, _ = run_in_greenlets(1, missing_table, works, duplicate, works, fails, killed, works)
    assert isinstance(results[0], ProgrammingError) and "no_such_table" in str(results[0])
    assert isinstance(results[2], IntegrityError)
    assert isinstance(results[4], ValueError)
    assert isinstance(results[5], OperationalError)
    assert results[1] == results[3] == results[6] == 0


def test_one_server_process_serves_the_steps_from_greenlets_several_from_threads(
        tmp_path, postgres_url, open_conf):
    served = _served_task(tmp_path, postgres_url, open_conf, 1)
    assert isinstance(worker_step_pool(served, 1), GreenletPool)
    assert isinstance(worker_step_pool(served, 2), ThreadPool)  # threads overlap syscalls


def _served_task(tmp_path, postgres_url, open_conf, units: int):  # noqa: ANN001, ANN202
    conf = write_task(tmp_path, [{"data": [dialogue(f"d{i}", f"g{i}", ["overall_quality"])]}
                                 for i in range(units)], {f"g{i}": 1 for i in range(units)})
    return open_conf(str(conf), postgres_url)


def test_a_burst_of_workers_over_http_is_served_and_stored(tmp_path, postgres_url, open_conf):
    """40 workers at once, each claiming, reading, saving a draft and submitting through the
    real server with its greenlet pool: every step answers, every submission is stored, and
    the slots' connections close when the server stops."""
    workers = 40
    served = _served_task(tmp_path, postgres_url, open_conf, workers)
    server = uvicorn_server(create_app(served), worker_steps=worker_step_pool(served, 1))

    async def annotate(client: httpx.AsyncClient, n: int) -> str:
        claimed = (await client.post("/api/claim", json={"worker_id": f"w{n}",
                                                         "assignment_id": f"a{n}"})).json()
        headers = {"Authorization": f"Bearer {claimed['token']}"}
        unit = f"/api/units/{claimed['unit_id']}"
        view = (await client.get(unit, headers=headers)).json()
        answers = {d["key"]: {"overall_quality": {"dialogue": {"Overall": 4}}}
                   for d in view["dialogues"]}
        draft = await client.put(f"{unit}/draft", headers=headers, json={"answers": answers})
        assert draft.status_code == 200, draft.text
        done = await client.post(f"{unit}/submit", headers=headers, json={"answers": answers})
        assert done.status_code == 200, done.text
        return done.json()["status"]

    async def burst(port: int) -> list[str]:
        limits = httpx.Limits(max_connections=workers)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits,
                                     timeout=20) as client:
            return await asyncio.gather(*(annotate(client, n) for n in range(workers)))

    with serving(server) as port:
        statuses = run_coroutine(burst(port), timeout=60)
        assert served.db.engine.pool.checkedout() > 0  # the slots hold theirs
    assert statuses == ["completed"] * workers
    assert served.db.engine.pool.checkedout() == 0  # closed when the server stopped
    with served.db.snapshot() as connection:
        stored = connection.execute(text("SELECT count(DISTINCT unit_id) FROM submissions"))
        assert stored.scalar() == workers


def test_closing_waits_for_the_calls_but_not_forever(db):
    """The server's stop waits for the steps in progress, up to a limit: one stuck on a row
    lock does not hold it."""
    async def main() -> tuple[float, bool]:
        pool = GreenletPool(2, "test")

        def stuck() -> None:
            with db.snapshot() as connection:
                run(connection, "SELECT pg_sleep(5)", {})

        def quick() -> str:
            with db.snapshot() as connection:
                run(connection, "SELECT pg_sleep(0.2)", {})
            return "done"

        stuck_call = asyncio.ensure_future(pool.run(stuck))
        quick_call = asyncio.ensure_future(pool.run(quick))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        await pool.aclose(timeout=1.0)
        waited = time.monotonic() - started
        finished = quick_call.done() and quick_call.result() == "done"
        stuck_call.cancel()
        return waited, finished

    waited, quick_finished = run_coroutine(main())
    assert quick_finished and 0.9 < waited < 3

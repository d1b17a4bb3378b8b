"""A worker's step that waits for a row lock another connection holds (PostgreSQL, a real
server process): the server keeps answering everyone else meanwhile, and a step that waits
past `mephisto.architect.lock_timeout_s` is answered 503 with Retry-After, storing nothing."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from helpers import (
    Running,
    dialogue,
    free_port,
    http_client,
    http_get,
    http_post,
    http_put,
    write_task,
)
from sqlalchemy.engine import make_url

TASKS = ["overall_quality"]


def _start(tmp_path, postgres_url: str, *overrides: str) -> tuple[Running, str]:
    conf = write_task(tmp_path, [{"data": [dialogue("d0", "g0", TASKS)]}], {"g0": 1})
    port = free_port()
    run = Running(tmp_path, port, str(conf), f"database_url={postgres_url}", *overrides)
    run.wait_for(r"progress: 0/1 units completed")
    return run, f"http://127.0.0.1:{port}"


def _open_unit(base: str) -> tuple[str, dict[str, str], dict]:
    """A worker's claim and their unit's page: its id, their headers and answers to submit."""
    claim = http_post(f"{base}/api/claim", json={"worker_id": "w1", "assignment_id": "a1"},
                      timeout=30).json()
    headers = {"Authorization": f"Bearer {claim['token']}"}
    unit = http_get(f"{base}/api/units/{claim['unit_id']}", headers=headers, timeout=30).json()
    key = unit["dialogues"][0]["key"]
    return claim["unit_id"], headers, {key: {"overall_quality": {"dialogue": {"Overall": 4}}}}


def _connect(postgres_url: str) -> psycopg.Connection:
    url = make_url(postgres_url)
    return psycopg.connect(host=url.host, port=url.port or 5432, user=url.username,
                           dbname=url.database)


@contextmanager
def _unit_locked(postgres_url: str, unit_id: str) -> Iterator[psycopg.Connection]:
    """The unit's row locked by another connection, as a long transaction would hold it."""
    with _connect(postgres_url) as holder:
        holder.execute("SELECT id FROM units WHERE public_id = %s FOR UPDATE", (unit_id,))
        yield holder
        holder.rollback()


def _waiting_on_a_lock(postgres_url: str, timeout: float = 10) -> None:
    """Returns once a server's statement waits for a lock."""
    deadline = time.monotonic() + timeout
    with _connect(postgres_url) as watcher:
        watcher.autocommit = True
        while time.monotonic() < deadline:
            if watcher.execute("SELECT count(*) FROM pg_stat_activity WHERE "
                               "wait_event_type = 'Lock' AND datname = current_database()"
                               ).fetchone()[0]:
                return
            time.sleep(0.02)
    raise AssertionError("no statement waited on the lock")


def _in_thread(call) -> tuple[threading.Thread, list]:
    result: list = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    return thread, result


@pytest.mark.postgres
def test_the_server_answers_others_while_a_step_waits_on_a_row_lock(tmp_path, postgres_url):
    run, base = _start(tmp_path, postgres_url)
    try:
        unit_id, headers, answers = _open_unit(base)
        with _unit_locked(postgres_url, unit_id):
            thread, result = _in_thread(lambda: http_put(
                f"{base}/api/units/{unit_id}/draft", headers=headers,
                json={"answers": answers}, timeout=30))
            _waiting_on_a_lock(postgres_url)
            took = []
            with http_client(timeout=5) as client:
                for _ in range(10):
                    started = time.perf_counter()
                    assert client.get(f"{base}/api/health").status_code == 200
                    took.append(time.perf_counter() - started)
                    time.sleep(0.05)
            assert thread.is_alive()  # the draft still waits for the lock
            assert max(took) < 0.1, took
        thread.join(10)
        assert result[0].status_code == 200, result[0].text  # done once the lock is gone
    finally:
        run.process.kill()


# A submit is a transaction; a draft is one statement on PostgreSQL, on its own connections:
# (the request, path, the table it writes, the unit's status once it is done)
STEPS = {"submit": (http_post, "submit", "submissions", "completed"),
         "draft": (http_put, "draft", "drafts", "assigned")}


@pytest.mark.postgres
@pytest.mark.parametrize("step", sorted(STEPS))
def test_a_step_that_waits_past_lock_timeout_is_a_503_with_retry_after(tmp_path, postgres_url,
                                                                       step):
    send, path, table, done = STEPS[step]
    run, base = _start(tmp_path, postgres_url, "mephisto.architect.lock_timeout_s=1")
    try:
        unit_id, headers, answers = _open_unit(base)
        url = f"{base}/api/units/{unit_id}/{path}"
        with _unit_locked(postgres_url, unit_id) as holder:
            started = time.monotonic()
            refused = send(url, headers=headers, json={"answers": answers}, timeout=30)
            waited = time.monotonic() - started
            assert refused.status_code == 503, refused.text
            assert refused.headers["Retry-After"] == "2"
            assert "try again" in refused.json()["error"]
            assert 1 <= waited < 4
            holder.execute("SELECT 1")  # the holder's transaction is untouched
        with _connect(postgres_url) as reader:
            assert reader.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
            assert reader.execute("SELECT status FROM units").fetchone()[0] == "assigned"
        again = send(url, headers=headers, json={"answers": answers}, timeout=30)
        assert again.status_code == 200, again.text
        with _connect(postgres_url) as reader:
            assert reader.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 1
            assert reader.execute("SELECT status FROM units").fetchone()[0] == done
    finally:
        run.process.kill()


@pytest.mark.postgres
def test_a_requester_request_that_waits_past_lock_timeout_is_a_503_too(tmp_path, postgres_url):
    run, base = _start(tmp_path, postgres_url, "mephisto.architect.lock_timeout_s=1")
    try:
        token = run.wait_for(r"  token: (\S+)").group(1)
        progress = f"{base}/api/requester/progress"
        headers = {"Authorization": f"Bearer {token}"}
        with _connect(postgres_url) as holder:  # a migration-like lock on the units
            holder.execute("LOCK TABLE units IN ACCESS EXCLUSIVE MODE")
            refused = http_get(progress, headers=headers, timeout=30)
            assert refused.status_code == 503, refused.text
            assert refused.headers["Retry-After"] == "2"
            assert "try again" in refused.json()["error"]
            holder.rollback()
        assert http_get(progress, headers=headers, timeout=30).status_code == 200
    finally:
        run.process.kill()


@pytest.mark.postgres
def test_requests_past_database_threads_wait_their_turn_and_are_all_answered(tmp_path,
                                                                            postgres_url):
    run, base = _start(tmp_path, postgres_url, "mephisto.architect.database_threads=1")
    try:
        unit_id, headers, answers = _open_unit(base)
        with _unit_locked(postgres_url, unit_id):
            draft, saved = _in_thread(lambda: http_put(
                f"{base}/api/units/{unit_id}/draft", headers=headers,
                json={"answers": answers}, timeout=30))
            _waiting_on_a_lock(postgres_url)
            # A read takes no lock, but the one database thread is the waiting draft's.
            page, shown = _in_thread(lambda: http_get(f"{base}/api/units/{unit_id}",
                                                      headers=headers, timeout=30))
            time.sleep(0.5)
            assert page.is_alive() and draft.is_alive()
            assert http_get(f"{base}/api/health", timeout=5).status_code == 200
        draft.join(10)
        page.join(10)
        assert saved[0].status_code == 200, saved[0].text
        assert shown[0].status_code == 200, shown[0].text
        assert shown[0].json()["draft"]["answers"] == answers  # read after the draft's turn
    finally:
        run.process.kill()

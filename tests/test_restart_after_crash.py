"""After `kill -9` of the launcher, the same command on the same host serves again at once
(the dead launcher's heartbeat is still fresh, but its process is gone or the pid is not
ours); a live second server is still refused, and so is one whose launcher is on another
machine. Real launchers, SQLite and PostgreSQL."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time

import pytest
from helpers import Running, free_port, http_post, welcome, write_task
from sqlalchemy import create_engine, text

from collection_and_annotations.engine.launcher import CLOCK_SLACK
from collection_and_annotations.engine.runs import HEARTBEAT_TIMEOUT
from collection_and_annotations.storage.models import utcnow

LINES = [{"data": [{"dialogue_id": f"d{i}", "group_id": f"g{i}",
                    "annotation_tasks": ["relevance"], "turns": [["user", "hi"],
                                                                 ["system", "hello"]]}]}
         for i in range(2)]


def _launch(tmp_path, conf, database_url: str, *overrides: str, port: int = 0) -> Running:
    return Running(tmp_path, port or free_port(), str(conf), f"database_url={database_url}",
                   *overrides)


def _serves(server: Running) -> None:
    """The launcher serves: it printed its links and answers a claim."""
    base = server.wait_for(r"(http://127\.0\.0\.1:\d+)/\?worker_id", timeout=30).group(1)
    server.wait_for("press Ctrl-C to stop")
    reply = http_post(f"{base}/api/claim", json={"worker_id": f"w{time.monotonic_ns()}",
                                                  "assignment_id": "a"}, timeout=10)
    assert reply.status_code in (200, 409), reply.text  # 409: no work left, but it answers


def _stop(server: Running) -> None:
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGINT)
        try:
            server.process.wait(30)
        except subprocess.TimeoutExpired:
            server.process.kill()
    server.process.wait()


def _running_runs(database_url: str) -> list[tuple[int, str]]:
    engine = create_engine(database_url)
    with engine.connect() as connection:
        rows = connection.execute(text(
            "SELECT id, server FROM task_runs WHERE status = 'running' ORDER BY id")).all()
    engine.dispose()
    return [tuple(row) for row in rows]


def _record(database_url: str, server: str) -> None:
    """The running run now names `server` as its launcher, heard from just now."""
    engine = create_engine(database_url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE task_runs SET server = :server, heartbeat_at = :now "
                                "WHERE status = 'running'"), {"server": server, "now": utcnow()})
    engine.dispose()


def test_a_restart_after_kill_9_takes_over_at_once(tmp_path, database_url):
    _kill_9_and_restart(tmp_path, database_url, 1)


def test_two_server_processes_restart_after_kill_9_of_their_launcher(tmp_path, postgres_url):
    """The server processes die with their launcher and free the port for the restart."""
    _kill_9_and_restart(tmp_path, postgres_url, 2)


def _kill_9_and_restart(tmp_path, database_url: str, processes: int) -> None:
    conf = write_task(tmp_path, LINES, {"g0": 2, "g1": 2})
    port = free_port()
    serving = f"mephisto.architect.server_processes={processes}"
    first = _launch(tmp_path, conf, database_url, serving, port=port)
    try:
        _serves(first)
        (run_id, server), = _running_runs(database_url)
        assert re.match(rf"{re.escape(socket.gethostname())} pid {first.process.pid}, ", server)
        first.process.kill()  # not reaped yet: a zombie, as under a shell that is slow to
        again = _launch(tmp_path, conf, database_url, serving, port=port)  # the same command
        try:
            _serves(again)
            # a run is "taken over" only while its heartbeat is fresh (a stale one is just
            # replaced): the restart did not wait for it to go stale, however slowly a busy
            # machine started the new launcher
            assert any(f"({server}) is no longer running; its run is taken over" in line
                       for line in again.lines), "".join(again.lines)
            runs = _running_runs(database_url)
            assert len(runs) == 1 and runs[0][0] > run_id
        finally:
            _stop(again)
    finally:
        first.process.wait()


def test_a_pid_now_used_by_another_process_is_taken_over(tmp_path, database_url):
    """The dead launcher's pid was given to a process that started after its run."""
    conf = write_task(tmp_path, LINES, {"g0": 2, "g1": 2})
    first = _launch(tmp_path, conf, database_url)
    _serves(first)
    first.process.kill()
    first.process.wait()
    time.sleep(CLOCK_SLACK.total_seconds() + 1.5)  # started later than a clock's error
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _record(database_url, f"{socket.gethostname()} pid {stranger.pid}, http://x")
        again = _launch(tmp_path, conf, database_url)
        try:
            _serves(again)
        finally:
            _stop(again)
    finally:
        stranger.kill()
        stranger.wait()


@pytest.mark.parametrize("launcher", ["live", "other-host"])
def test_a_live_or_unknowable_launcher_still_refuses_a_second_server(tmp_path, database_url,
                                                                       launcher, open_conf):
    conf = write_task(tmp_path, LINES, {"g0": 2, "g1": 2})
    first = _launch(tmp_path, conf, database_url) if launcher == "live" else None
    try:
        if first is not None:
            _serves(first)
        else:  # a run opened by a launcher whose process cannot be looked at from here
            open_conf(str(conf), database_url)
            _record(database_url, "another-machine pid 1, http://x")
        second = welcome(f"conf={conf}", f"mephisto.architect.port={free_port()}",
                         f"database_url={database_url}", f"data_dir={tmp_path / 'data'}",
                         cwd=tmp_path)
        assert second.returncode == 2, second.stdout + second.stderr
        assert "a server for task 't' is already running" in second.stderr
        assert f"wait {int(HEARTBEAT_TIMEOUT.total_seconds())} s" in second.stderr
        if first is not None:
            _serves(first)  # untouched
    finally:
        if first is not None:
            _stop(first)

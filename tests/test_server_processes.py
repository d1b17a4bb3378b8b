"""Several server processes sharing PostgreSQL: one port, no double assignment, clean stop; a
server process that dies is replaced, and none outlives the launcher."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers import Running, dialogue, free_port, http_post, write_task


def _children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


def _descendants(pid: int) -> list[int]:
    children = _children(pid)
    return children + [d for child in children for d in _descendants(child)]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie has ended; nobody may be left to reap it


def _servers(run: Running, without: int | None = None) -> tuple[int, list[int]]:
    """The process manager and the two server processes it forked (none of them `without`),
    once they are all up."""
    deadline = time.monotonic() + 20
    while True:
        managers = _children(run.process.pid)
        servers = [pid for pid in _children(managers[0]) if pid != without and _alive(pid)] \
            if len(managers) == 1 else []
        if len(servers) == 2 or time.monotonic() > deadline:
            assert len(managers) == 1 and len(servers) == 2, (managers, servers)
            return managers[0], servers
        time.sleep(0.1)


def _start(tmp_path, postgres_url: str, units: int = 20) -> tuple[Running, int]:
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", ["overall_quality"])]} for i in range(units)]
    conf = write_task(tmp_path, lines, {f"g{i}": 2 for i in range(units)},
                      task={"allowed_concurrent": 0})
    port = free_port()
    run = Running(tmp_path, port, str(conf), f"database_url={postgres_url}",
                  "mephisto.architect.server_processes=2")
    run.wait_for(rf"progress: 0/{2 * units} units completed")
    return run, port


@pytest.mark.postgres
def test_two_processes_share_the_work_and_stop_together(tmp_path, postgres_url):
    run, port = _start(tmp_path, postgres_url)
    try:
        def claim(n: int) -> str | None:
            reply = http_post(f"http://127.0.0.1:{port}/api/claim",
                              json={"worker_id": f"w{n % 25}", "assignment_id": f"a{n}"},
                              timeout=30)
            return reply.json()["unit_id"] if reply.status_code == 200 else None

        with ThreadPoolExecutor(max_workers=16) as pool:
            claimed = [u for u in pool.map(claim, range(60)) if u]
        assert len(claimed) == len(set(claimed)) == 40
        manager, servers = _servers(run)
        run.process.send_signal(signal.SIGTERM)
        assert run.process.wait(timeout=30) == 0
        assert not any(_alive(pid) for pid in [manager, *servers])
    finally:
        run.process.kill()


@pytest.mark.postgres
def test_a_server_process_that_dies_is_replaced(tmp_path, postgres_url):
    run, port = _start(tmp_path, postgres_url)
    try:
        _, servers = _servers(run)
        os.kill(servers[0], signal.SIGKILL)
        run.wait_for(r"server process (\d+) started in place of one that ended", timeout=10)
        assert servers[1] in _servers(run, without=servers[0])[1]
        for n in range(40):  # every request lands on a live process
            reply = http_post(f"http://127.0.0.1:{port}/api/claim",
                              json={"worker_id": f"w{n}", "assignment_id": "1"}, timeout=5)
            assert reply.status_code == 200, reply.text
        run.process.send_signal(signal.SIGTERM)
        assert run.process.wait(timeout=30) == 0
    finally:
        run.process.kill()


@pytest.mark.postgres
def test_no_server_process_outlives_a_killed_launcher(tmp_path, postgres_url):
    run, port = _start(tmp_path, postgres_url)
    held: list[socket.socket] = []
    try:
        _servers(run)
        descendants = _descendants(run.process.pid)
        for _ in range(20):  # requests in progress do not keep a server alive
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(b"POST /api/claim HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
            held.append(sock)
        time.sleep(0.5)
        run.process.kill()
        run.process.wait(timeout=10)
        deadline = time.monotonic() + 3
        while any(_alive(pid) for pid in descendants) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [pid for pid in descendants if _alive(pid)] == []
    finally:
        for sock in held:
            sock.close()
        run.process.kill()

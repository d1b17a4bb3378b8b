"""Slow and idle clients cannot freeze the server (issue 8): with hundreds of connections
sending a request piece by piece, trickling a body or idling between requests, everyone else's
requests are answered promptly, with one server process or several."""

from __future__ import annotations

import contextlib
import resource
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from helpers import Running, dialogue, free_port, http_client, write_task

PARTIAL_HEADS, TRICKLED_BODIES, IDLE_KEEP_ALIVE = 300, 50, 100
NORMAL_REQUESTS = 50
PROMPT = 5.0  # seconds a normal request may take while the slow clients hold their connections


class SlowClients:
    """The connections of misbehaving clients, held open until close()."""

    def __init__(self, port: int):
        self.port = port
        self.sockets: list[socket.socket] = []
        self.trickling: list[socket.socket] = []
        self.stop = threading.Event()

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        self.sockets.append(sock)
        return sock

    def open(self) -> None:
        host = f"Host: 127.0.0.1:{self.port}\r\n"
        for i in range(PARTIAL_HEADS):  # request line or headers cut short
            head = f"GET /api/health HTTP/1.1\r\n{host}X-Slow: yes" if i % 2 else "GET /api/he"
            self._connect().sendall(head.encode())
        for _ in range(TRICKLED_BODIES):  # headers complete, body one byte a second
            sock = self._connect()
            sock.sendall(f"POST /api/claim HTTP/1.1\r\n{host}Content-Type: application/json\r\n"
                         "Content-Length: 1000\r\n\r\n{".encode())
            self.trickling.append(sock)
        for _ in range(IDLE_KEEP_ALIVE):  # one request answered, then silence
            sock = self._connect()
            sock.sendall(f"GET /api/health HTTP/1.1\r\n{host}\r\n".encode())
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        threading.Thread(target=self._trickle, daemon=True).start()

    def _trickle(self) -> None:
        while not self.stop.wait(1.0):
            for sock in self.trickling:
                with contextlib.suppress(OSError):
                    sock.send(b" ")

    def close(self) -> None:
        self.stop.set()
        for sock in self.sockets:
            sock.close()


def _annotate(base: str, n: int) -> float:
    """One normal worker: claim, read the unit, submit; returns the slowest request's time."""
    slowest = 0.0
    with http_client(base_url=base, timeout=PROMPT) as client:
        def timed(method: str, path: str, **kwargs) -> httpx.Response:
            nonlocal slowest
            start = time.monotonic()
            reply = client.request(method, path, **kwargs)
            slowest = max(slowest, time.monotonic() - start)
            assert reply.status_code == 200, reply.text
            return reply

        timed("GET", "/api/health")
        if n % 2:
            return slowest
        claim = timed("POST", "/api/claim", json={"worker_id": f"w{n}", "assignment_id": "1"})
        headers = {"Authorization": f"Bearer {claim.json()['token']}"}
        unit_id = claim.json()["unit_id"]
        unit = timed("GET", f"/api/units/{unit_id}", headers=headers).json()
        answers = {unit["dialogues"][0]["key"]: {"overall_quality": {"dialogue": {"Overall": 3}}}}
        timed("POST", f"/api/units/{unit_id}/submit", headers=headers, json={"answers": answers})
    return slowest


def _check_everyone_else_is_served(tmp_path, *overrides: str) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", ["overall_quality"])]} for i in range(40)]
    conf = write_task(tmp_path, lines, {f"g{i}": 1 for i in range(40)})
    port = free_port()
    run = Running(tmp_path, port, str(conf), *overrides)
    slow = SlowClients(port)
    try:
        run.wait_for(r"progress: 0/40 units completed")
        slow.open()
        time.sleep(2)  # the trickled bodies are under way
        with ThreadPoolExecutor(max_workers=10) as pool:
            slowest = list(pool.map(lambda n: _annotate(f"http://127.0.0.1:{port}", n),
                                    range(NORMAL_REQUESTS)))
        assert max(slowest) < PROMPT
    finally:
        slow.close()
        run.process.kill()
        run.process.wait(timeout=10)


def test_slow_and_idle_clients_do_not_hold_up_others(tmp_path):
    _check_everyone_else_is_served(tmp_path)


@pytest.mark.postgres
def test_slow_clients_with_two_server_processes(tmp_path, postgres_url):
    _check_everyone_else_is_served(tmp_path, f"database_url={postgres_url}",
                                   "mephisto.architect.server_processes=2")

"""Chat event streams cannot exhaust the server, through the real server on SQLite and
PostgreSQL: one worker holds at most MAX_STREAMS_PER_WORKER of them per process (others keep
theirs), and a stream that sent nothing but pings for IDLE_SECONDS ends (its page reconnects:
tests/e2e/test_chat_reconnect.py)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from chat_helpers import ChatServer, ScriptedBot, auth, write_chat_conf

from collection_and_annotations.server.chat import stream
from collection_and_annotations.server.chat.app import MAX_STREAMS_PER_WORKER


@pytest.fixture
def server(tmp_path, database_url):
    conf = write_chat_conf(tmp_path, "alpha:6", ["alpha"])
    server = ChatServer(tmp_path, conf, {"alpha": ScriptedBot("alpha")}, database_url)
    yield server
    server.stop()


class Held:
    """An event stream held open on a socket of its own (read in a thread): its status, and
    when the server ended it."""

    def __init__(self, base: str, unit: str, token: str):
        host, port = base.removeprefix("http://").split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.sendall(f"GET /api/chat/{unit}/events HTTP/1.1\r\nHost: {host}:{port}\r\n"
                          f"Authorization: Bearer {token}\r\nConnection: close\r\n\r\n"
                          .encode())
        self.status: int | None = None
        self.ended_at: float | None = None
        self.opened = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        assert self.opened.wait(10), "the stream never answered"

    def _read(self) -> None:
        received = b""
        with contextlib.suppress(OSError):
            while chunk := self.sock.recv(65536):
                received += chunk
                if self.status is None and b"\r\n" in received:
                    self.status = int(received.split(b" ", 2)[1])
                    self.opened.set()
        self.ended_at = time.monotonic()  # the server closed the connection (or we did)
        self.opened.set()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # a tab closed (wakes the reading thread)
        self.sock.close()


@contextlib.contextmanager
def holding(server: ChatServer, worker: str, count: int) -> Iterator[tuple[str, str, list[Held]]]:
    """`count` streams of a worker's claimed unit: (unit, token, the streams), closed after."""
    unit, token = server.claim(worker)
    streams = [Held(server.base, unit, token) for _ in range(count)]
    try:
        yield unit, token, streams
    finally:
        for held in streams:
            held.close()


def test_one_worker_holds_a_few_streams_and_others_keep_theirs(server):
    with holding(server, "w1", MAX_STREAMS_PER_WORKER) as (unit, token, held):
        assert [h.status for h in held] == [200] * MAX_STREAMS_PER_WORKER
        refused = server.client.get(f"/api/chat/{unit}/events", headers=auth(token))
        assert refused.status_code == 429 and "other tabs" in refused.json()["error"]
        with holding(server, "w2", 1) as (_, _, other):
            assert other[0].status == 200
        held.pop().close()  # a tab closed: its place is free again
        deadline = time.monotonic() + 5
        while (again := Held(server.base, unit, token)).status != 200:
            again.close()
            assert time.monotonic() < deadline, "the closed stream's place was not freed"
            time.sleep(0.05)
        held.append(again)


def test_an_idle_stream_ends_and_frees_its_place(server, monkeypatch):
    monkeypatch.setattr(stream, "IDLE_SECONDS", 1.0)
    opened = time.monotonic()
    with holding(server, "w1", MAX_STREAMS_PER_WORKER) as (unit, token, held):
        deadline = time.monotonic() + 10
        while any(h.ended_at is None for h in held):
            assert time.monotonic() < deadline, "an idle stream was never ended"
            time.sleep(0.05)
        assert all(0.9 <= h.ended_at - opened <= 5 for h in held)
        held.append(Held(server.base, unit, token))
        assert held[-1].status == 200


def test_a_stream_with_events_is_not_idle(server, monkeypatch):
    monkeypatch.setattr(stream, "IDLE_SECONDS", 1.5)
    with holding(server, "w1", 1) as (unit, token, held):
        for _ in range(4):  # an event every 0.6 s for 2.4 s: never 1.5 s without one
            server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
            time.sleep(0.6)
        assert held[0].ended_at is None

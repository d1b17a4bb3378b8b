"""The serving stack over a real socket: a body's deadline (408) and size (413, the chat's
smaller), a NUL in the address (400), compressed JSON, a chat stream that keeps streaming
while many slow requests are in flight, and an event loop that answers while a worker's step
waits on a row lock."""

from __future__ import annotations

import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from chat_helpers import ChatServer, ScriptedBot, auth, event_stream, write_chat_conf
from helpers import app_client, dialogue, http_client, http_get, http_post, live_server, write_task
from sqlalchemy import create_engine, text
from starlette.requests import Request
from starlette.routing import Route

from collection_and_annotations.engine.work import WorkRefused
from collection_and_annotations.server import guard
from collection_and_annotations.server.app import create_app
from collection_and_annotations.server.auth import requester_token


@pytest.fixture
def served(tmp_path, sqlite_url, open_conf):
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", ["overall_quality"], turns=40)]}
             for i in range(30)]
    conf = write_task(tmp_path, lines, {f"g{i}": 1 for i in range(30)})
    return open_conf(str(conf), sqlite_url)


def _raw(port: int, data: bytes, wait: float = 3.0) -> bytes:
    """Send `data`, then read until the server closes the connection (or `wait` passes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(data)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except TimeoutError:
            pass
        return received


def test_a_body_that_does_not_arrive_in_time_gets_408(served, monkeypatch):
    monkeypatch.setattr(guard, "BODY_SECONDS", 1.0)
    with live_server(served) as base:
        port = int(base.rsplit(":", 1)[1])
        start = time.monotonic()
        reply = _raw(port, b"POST /api/claim HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           b"Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{")
        assert reply.startswith(b"HTTP/1.1 408") and time.monotonic() - start < 2.5
        assert b'"error": "the request did not arrive in time"' in reply


def test_bodies_are_bounded_and_addresses_hold_no_nul(served):
    with live_server(served) as base:
        port = int(base.rsplit(":", 1)[1])
        head = b"POST /api/claim HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        assert _raw(port, head + b"Content-Length: 2000001\r\n\r\n").startswith(
            b"HTTP/1.1 413")
        # chunks one byte past the limit (all that was sent is read when the server answers)
        chunks = [b" " * 500_000] * 4 + [b" "]
        chunked = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks)
        assert _raw(port, head + b"Transfer-Encoding: chunked\r\n\r\n" + chunked).startswith(
            b"HTTP/1.1 413")
        chat = http_post(f"{base}/api/chat/u1/messages", content=b" " * 64_001)
        assert chat.status_code == 413 and "64000 bytes" in chat.json()["error"]
        # just under the limit, the body reaches the route (which reads it as JSON)
        claim = http_post(f"{base}/api/claim", content=b" " * 1_999_990 + b"{}",
                          headers={"Content-Type": "application/json"}, timeout=20)
        assert claim.status_code == 400 and "worker_id" in claim.json()["error"]
        nul = http_get(f"{base}/api/units/a%00b")
        assert nul.status_code == 400 and "NUL" in nul.json()["error"]


def test_large_json_is_gzipped_when_accepted(served):
    with live_server(served) as base:
        url = f"{base}/api/requester/submissions"
        token = {"Authorization": f"Bearer {requester_token(served.secret)}"}
        for n in range(20):  # a page of answers well over a kilobyte
            claim = http_post(f"{base}/api/claim",
                              json={"worker_id": f"w{n}", "assignment_id": "a"}).json()
            headers = {"Authorization": f"Bearer {claim['token']}"}
            unit = http_get(f"{base}/api/units/{claim['unit_id']}", headers=headers).json()
            answers = {unit["dialogues"][0]["key"]: {
                "overall_quality": {"dialogue": {"Overall": 3}}}}
            assert http_post(f"{base}/api/units/{claim['unit_id']}/submit", headers=headers,
                             json={"answers": answers}).status_code == 200
        zipped = http_get(url, headers={**token, "Accept-Encoding": "gzip"})
        assert zipped.headers["content-encoding"] == "gzip"
        assert "Accept-Encoding" in zipped.headers["vary"]
        assert int(zipped.headers["content-length"]) < len(zipped.content)
        assert len(zipped.json()["submissions"]) == 20  # httpx decompressed it
        plain = http_get(url, headers={**token, "Accept-Encoding": "identity"})
        assert "content-encoding" not in plain.headers and plain.json() == zipped.json()
        small = http_get(f"{base}/api/health", headers={"Accept-Encoding": "gzip"})
        assert "content-encoding" not in small.headers


def test_a_chat_streams_while_many_slow_requests_are_in_flight(tmp_path):
    """Hundreds of half-sent bodies, and requests that keep the thread pool busy, leave a
    chat's stream and its turns on time: a bot's reply streams as it is written."""
    bots = {"alpha": ScriptedBot("alpha")}
    server = ChatServer(tmp_path, write_chat_conf(tmp_path, "alpha:1", ["alpha"]), bots)
    held: list[socket.socket] = []
    try:
        unit, token = server.claim("w1")
        for _ in range(200):  # headers whole, the body never comes
            sock = socket.create_connection(("127.0.0.1", server.port))
            sock.sendall(b"POST /api/claim HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
            held.append(sock)
        stop = threading.Event()

        def busy() -> None:  # requester reads, one after another, on the thread pool
            with http_client(base_url=server.base, timeout=20) as client:
                while not stop.is_set():
                    client.get("/api/requester/progress", headers=auth(requester_token(
                        server.served.secret)))

        with ThreadPoolExecutor(8) as pool, event_stream(server.base, unit, token) as stream:
            for _ in range(8):
                pool.submit(busy)
            try:
                stream.next("state")
                server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
                assert _bot_says(stream) == "alpha heard: Hi! "
                started = time.monotonic()
                server.client.post(f"/api/chat/{unit}/messages", headers=auth(token),
                                   json={"text": "hello", "client_message_id": "m1"})
                assert _bot_says(stream) == "alpha heard: hello "
                assert time.monotonic() - started < 2
            finally:
                stop.set()
    finally:
        for sock in held:
            sock.close()
        server.stop()


def _bot_says(stream) -> str:  # noqa: ANN001
    """The text of the bot's next message on the chat's stream."""
    while True:
        _, message = stream.next("message", timeout=10)
        if message["role"] == "bot":
            return message["text"]


@pytest.mark.postgres
def test_the_event_loop_answers_while_a_step_waits_on_a_row_lock(tmp_path, open_conf,
                                                                  postgres_url):
    """One server process on PostgreSQL: while a worker's submit waits for a unit row that
    another connection holds locked for 3 s, /api/health answers at once."""
    served = open_conf(str(write_task(tmp_path, [{"data": [dialogue("d0", "g0",
                                                                    ["overall_quality"])]}],
                                      {"g0": 1})), postgres_url)
    with live_server(served) as base, http_client(base_url=base, timeout=20) as client:
        claim = client.post("/api/claim", json={"worker_id": "w1", "assignment_id": "a"}).json()
        headers = {"Authorization": f"Bearer {claim['token']}"}
        unit = client.get(f"/api/units/{claim['unit_id']}", headers=headers).json()
        answers = {unit["dialogues"][0]["key"]: {"overall_quality": {"dialogue": {"Overall": 3}}}}
        engine = create_engine(served.db.url)
        with engine.connect() as holder, ThreadPoolExecutor(1) as pool:
            holder.execute(text("SELECT 1 FROM units WHERE public_id = :u FOR UPDATE"),
                           {"u": claim["unit_id"]})
            submitted = pool.submit(http_post, f"{base}/api/units/{claim['unit_id']}/submit",
                                    headers=headers, json={"answers": answers}, timeout=20)
            time.sleep(0.5)  # the submit waits on the lock now
            slowest = 0.0
            for _ in range(10):
                started = time.monotonic()
                assert client.get("/api/health").status_code == 200
                slowest = max(slowest, time.monotonic() - started)
                time.sleep(0.2)
            assert not submitted.done()  # it still waited meanwhile
            holder.rollback()
            assert submitted.result().status_code in (200, 503)
        engine.dispose()
        assert slowest < 0.1


def test_a_step_that_waited_too_long_for_a_lock_says_when_to_come_back(served):
    """The engine refuses a step that waited past its lock timeout with 503 and how long to
    wait: the answer carries it as Retry-After."""
    app = create_app(served)

    async def busy(_request: Request) -> None:
        refused = WorkRefused("the unit is busy; try again in a moment", 503)
        refused.retry_after = 2  # type: ignore[attr-defined]
        raise refused

    app.router.routes.insert(0, Route("/api/busy", busy))
    reply = app_client(app).get("/api/busy")
    assert reply.status_code == 503 and reply.headers["Retry-After"] == "2"
    assert reply.json() == {"error": "the unit is busy; try again in a moment"}

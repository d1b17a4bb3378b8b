"""The serving stack in process, over a real socket: request deadline (408), body and head
limits (413, 400), compressed JSON, and idle connections that cost no thread."""

from __future__ import annotations

import gzip
import socket
import threading
import time

import httpx
import pytest
from flask import Flask, jsonify, request
from helpers import serving

from collection_and_annotations.server import deadline_protocol
from collection_and_annotations.server.http import (
    THREADS_PER_PROCESS,
    uvicorn_server,
)


@pytest.fixture
def served_port(monkeypatch):
    monkeypatch.setattr(deadline_protocol, "REQUEST_DEADLINE", 1.0)
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = 1000

    @app.post("/echo")
    def echo():  # type: ignore[no-untyped-def]
        return jsonify({"length": len(request.get_data()), "thread": threading.get_ident()})

    @app.get("/big")
    def big():  # type: ignore[no-untyped-def]
        return jsonify({"items": [f"item {i}" for i in range(500)]})

    with serving(uvicorn_server(app)) as port:
        yield port


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


def test_a_request_that_does_not_arrive_in_time_gets_408(served_port):
    start = time.monotonic()
    reply = _raw(served_port, b"GET /big HTTP/1.1\r\nHost: x\r\n")
    assert reply.startswith(b"HTTP/1.1 408") and time.monotonic() - start < 2.5
    reply = _raw(served_port, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12")
    assert reply.startswith(b"HTTP/1.1 408")


def test_an_idle_new_connection_is_closed_silently(served_port):
    start = time.monotonic()
    assert _raw(served_port, b"") == b"" and time.monotonic() - start < 2.5


def test_bodies_and_heads_are_bounded(served_port):
    reply = _raw(served_port, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 413")
    chunked = b"".join(b"%x\r\n%s\r\n" % (300, b"a" * 300) for _ in range(4)) + b"0\r\n\r\n"
    reply = _raw(served_port, b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked"
                              b"\r\n\r\n" + chunked)
    assert reply.startswith(b"HTTP/1.1 413")
    huge = b"X-Big: " + b"a" * 70_000 + b"\r\n"
    assert _raw(served_port, b"GET /big HTTP/1.1\r\nHost: x\r\n" + huge).startswith(
        b"HTTP/1.1 400")
    reply = httpx.post(f"http://127.0.0.1:{served_port}/echo", content=b"a" * 1000)
    assert reply.status_code == 200 and reply.json()["length"] == 1000


def test_large_json_is_gzipped_when_accepted(served_port):
    url = f"http://127.0.0.1:{served_port}/big"
    zipped = httpx.get(url, headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert "Accept-Encoding" in zipped.headers["vary"]
    assert int(zipped.headers["content-length"]) < len(zipped.content)
    assert len(zipped.json()["items"]) == 500  # httpx decompressed it
    plain = httpx.get(url, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.json() == zipped.json()
    refused = httpx.get(url, headers={"Accept-Encoding": "gzip;q=0"})
    assert "content-encoding" not in refused.headers
    small = httpx.post(f"http://127.0.0.1:{served_port}/echo", content=b"{}",
                       headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in small.headers
    assert gzip.decompress(_raw(served_port, b"GET /big HTTP/1.1\r\nHost: x\r\n"
                                b"Accept-Encoding: gzip\r\nConnection: close\r\n\r\n")
                           .split(b"\r\n\r\n", 1)[1]) == plain.content


def test_native_routes_stream_while_every_wsgi_thread_is_busy():
    """The seam for streaming chat: a native ASGI route runs in the event loop, so it answers
    (and streams) even when all WSGI threads are taken."""
    release = threading.Event()
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = 1000

    @app.get("/block")
    def block():  # type: ignore[no-untyped-def]
        release.wait(10)
        return "done"

    async def events(scope, receive, send):  # type: ignore[no-untyped-def]
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        for token in ("Hel", "lo"):
            await send({"type": "http.response.body", "body": f"data: {token}\n\n".encode(),
                        "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    with serving(uvicorn_server(app, native={"/api/chat/": events})) as port:
        try:
            blockers = [threading.Thread(target=httpx.get,
                                         args=(f"http://127.0.0.1:{port}/block",),
                                         kwargs={"timeout": 15})
                        for _ in range(THREADS_PER_PROCESS)]
            for blocker in blockers:
                blocker.start()
            time.sleep(0.3)
            with httpx.stream("GET", f"http://127.0.0.1:{port}/api/chat/1", timeout=2) as reply:
                assert list(reply.iter_lines()) == ["data: Hel", "", "data: lo", ""]
        finally:
            release.set()

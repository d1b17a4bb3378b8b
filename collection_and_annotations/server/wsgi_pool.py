"""Run the Flask (WSGI) app on a bounded pool of threads, from the event loop.

The event loop hands over a request whose body it already holds and gets back the whole
response: one hop into a thread and one back, and no thread ever waits on a client's socket.
Large compressible responses are gzipped here, in the thread, when the client accepts gzip.
Responses are buffered whole; streaming belongs to native ASGI routes (see asgi_front.py).
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterable
from typing import Any

from collection_and_annotations.server.compression import (
    MIN_SIZE,
    accepts_gzip,
    add_vary,
    compressible,
    gzip_bytes,
)
from collection_and_annotations.server.greenlet_pool import GreenletPool
from collection_and_annotations.server.thread_pool import ThreadPool

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
Response = tuple[int, list[tuple[bytes, bytes]], bytes]
CallPool = ThreadPool | GreenletPool


def wsgi_environ(scope: dict[str, Any], body: bytes) -> dict[str, Any]:
    """PEP 3333 environ of an ASGI HTTP scope whose body has been read."""
    server = scope.get("server") or ("localhost", 80)
    client = scope.get("client") or ("", 0)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": scope.get("root_path", "").encode().decode("latin-1"),
        "PATH_INFO": scope["path"].encode().decode("latin-1"),
        "QUERY_STRING": scope["query_string"].decode("latin-1"),
        "SERVER_NAME": str(server[0]), "SERVER_PORT": str(server[1] or 80),
        "SERVER_PROTOCOL": f"HTTP/{scope['http_version']}",
        "REMOTE_ADDR": client[0], "REMOTE_PORT": str(client[1]),
        "wsgi.version": (1, 0), "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": io.BytesIO(body), "wsgi.input_terminated": True,
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True, "wsgi.multiprocess": True, "wsgi.run_once": False,
    }
    for raw_name, raw_value in scope["headers"]:
        name, value = raw_name.decode("latin-1").upper().replace("-", "_"), \
            raw_value.decode("latin-1")
        key = name if name in ("CONTENT_TYPE", "CONTENT_LENGTH") else f"HTTP_{name}"
        environ[key] = f"{environ[key]},{value}" if key in environ else value
    return environ


class WsgiPool:
    """A WSGI app behind `threads` threads (thread_pool.py); awaiting it never blocks the event
    loop. A lane (path prefixes, a pool) gives the requests under its prefixes a pool of their
    own (threads, or greenlets of the loop: greenlet_pool.py), which no other request can hold
    up."""

    def __init__(self, app: WSGIApp, threads: int,
                 lane: tuple[tuple[str, ...], CallPool] | None = None):
        self.app = app
        self.pool = ThreadPool(threads, "wsgi")
        self.lane_prefixes, self.lane = lane or ((), self.pool)

    async def __call__(self, scope: dict[str, Any], body: bytes, send: Callable[..., Any]) -> None:
        pool = self.lane if scope["path"].startswith(self.lane_prefixes) else self.pool
        status, headers, content = await pool.run(self.respond, scope, body)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": content})

    def respond(self, scope: dict[str, Any], body: bytes) -> Response:
        """Call the app in this (pool) thread and return its complete response."""
        environ = wsgi_environ(scope, body)
        started: list[Any] = []
        chunks: list[bytes] = []

        def start_response(status: str, headers: list[tuple[str, str]],
                           exc_info: Any = None) -> Callable[[bytes], None]:
            if exc_info is not None and started:
                raise exc_info[1].with_traceback(exc_info[2])
            started[:] = [status, list(headers)]
            return chunks.append

        result = self.app(environ, start_response)
        try:
            chunks.extend(result)
        finally:
            getattr(result, "close", lambda: None)()
        status, headers = int(started[0].split(" ", 1)[0]), started[1]
        content = b"".join(chunks)
        if scope["method"] != "HEAD":
            content = _maybe_gzip(environ.get("HTTP_ACCEPT_ENCODING"), headers, content)
        return status, [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers], \
            content

    async def aclose(self) -> None:
        await self.pool.aclose()
        if self.lane is not self.pool:
            await self.lane.aclose()


def _maybe_gzip(accept_encoding: str | None, headers: list[tuple[str, str]],
                content: bytes) -> bytes:
    """gzip `content` in place of itself when worth it, fixing `headers` to match."""
    names = {name.lower(): value for name, value in headers}
    if len(content) < MIN_SIZE or "content-encoding" in names \
            or not compressible(names.get("content-type")):
        return content
    add_vary(headers)
    if not accepts_gzip(accept_encoding):
        return content
    content = gzip_bytes(content)
    headers[:] = [(k, v) for k, v in headers if k.lower() != "content-length"]
    headers += [("Content-Encoding", "gzip"), ("Content-Length", str(len(content)))]
    return content

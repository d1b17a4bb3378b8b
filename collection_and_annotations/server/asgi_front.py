"""The ASGI application the server runs: native ASGI routes, else the Flask app in threads.

A request reaches a WSGI thread only once its whole body is in memory (at most the Flask app's
MAX_CONTENT_LENGTH; larger gets 413 without being read), so a slow or idle client costs a
coroutine and a socket, never a thread. The time a request may take to arrive is bounded by
deadline_protocol.py.

Native routes are the seam for work that must not hold a thread for long, e.g. streaming a
bot's reply token by token (Server-Sent Events under /api/chat/): an ASGI app mounted on a path
prefix gets the request untouched (its body unread, websockets included) and runs in the event
loop; it must not block, and runs blocking calls (the database) in a thread itself.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from collection_and_annotations.server.security import SECURITY_HEADER_LIST
from collection_and_annotations.server.wsgi_pool import WsgiPool

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[dict[str, Any], Receive, Send], Awaitable[None]]


class BodyTooLarge(Exception):
    pass


async def read_body(scope: dict[str, Any], receive: Receive, limit: int) -> bytes | None:
    """The request body, or None when the client went away first; BodyTooLarge past `limit`."""
    for name, value in scope["headers"]:
        if name == b"content-length" and int(value) > limit:
            raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def has_nul(scope: dict[str, Any]) -> bool:
    """Whether the path or the query string holds a NUL (PostgreSQL refuses it in text, the
    file system in names): refused for every route at once."""
    return "\x00" in scope["path"] or b"%00" in scope["query_string"]


async def send_error(send: Send, status: int, message: str) -> None:
    """A JSON error like the Flask app's, with its security headers, closing the connection
    (the rest of the request is not read)."""
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"), *SECURITY_HEADER_LIST]})
    await send({"type": "http.response.body", "body": body})


class Front:
    """Dispatch by path: a native ASGI app for its prefix, else the WSGI pool."""

    def __init__(self, wsgi: WsgiPool, max_body: int,
                 native: Mapping[str, ASGIApp] | None = None):
        self.wsgi = wsgi
        self.max_body = max_body
        self.native = tuple((native or {}).items())

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        if scope["type"] == "http" and has_nul(scope):
            return await send_error(send, 400, "the address holds a NUL character (%00), "
                                               "which no id, name or file has")
        for prefix, app in self.native:
            if scope["path"].startswith(prefix):
                return await app(scope, receive, send)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        try:
            body = await read_body(scope, receive, self.max_body)
        except BodyTooLarge:
            await send_error(send, 413, f"the request body is larger than {self.max_body} bytes")
            return
        if body is not None:
            await self.wsgi(scope, body, send)

    def stop_native(self) -> None:
        """From any thread, as the server begins to stop: native apps end their long-lived
        responses (event streams), which would otherwise hold the shutdown."""
        for _, app in self.native:
            stop = getattr(app, "stop_streams", None)
            if stop is not None:
                stop()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Native apps with an `aclose` (bots, processes, connections) close when the
        server stops, and the WSGI threads end (closing their database connections)."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                for _, app in self.native:
                    aclose = getattr(app, "aclose", None)
                    if aclose is not None:
                        await aclose()
                await self.wsgi.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

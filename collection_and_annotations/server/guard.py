"""The checks every request passes before a route sees it, as plain ASGI middleware: the Host
allow-list (421), no NUL in the address (400), and a body that arrives whole, within its size
(413, without reading the rest) and in time (408).

The body is read here, so a route never waits on a slow client: a half-sent body costs a
coroutine and a socket until its deadline, never a thread.
"""

from __future__ import annotations

import asyncio
import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from collection_and_annotations.server.security import HostCheck

MAX_BODY = 2_000_000
CHAT_PREFIX, CHAT_MAX_BODY = "/api/chat/", 64_000
BODY_SECONDS = 30.0  # from the end of the headers to the end of the body


class BodyTooLarge(Exception):
    pass


class Guard:
    def __init__(self, app: ASGIApp, hosts: HostCheck):
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        host = next((v for k, v in scope["headers"] if k == b"host"), b"").decode("latin-1")
        refused = self.hosts.refusal(host)
        if refused is not None:
            return await answer(send, 421, refused)
        if "\x00" in scope["path"] or b"%00" in scope["query_string"]:
            return await answer(send, 400, "the address holds a NUL character (%00), which no "
                                            "id, name or file has")
        limit = CHAT_MAX_BODY if scope["path"].startswith(CHAT_PREFIX) else MAX_BODY
        try:
            # asyncio's own deadline: a third of the CPU of anyio's cancel scope, on every
            # request (the servers run on asyncio)
            async with asyncio.timeout(BODY_SECONDS):
                body = await read_body(scope, receive, limit)
        except TimeoutError:
            return await answer(send, 408, "the request did not arrive in time", close=True)
        except BodyTooLarge:
            return await answer(send, 413, f"the request body is larger than {limit} bytes",
                                close=True)
        if body is None:
            return  # the client went away
        whole: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

        async def replay() -> Message:
            return whole.pop() if whole else await receive()

        await self.app(scope, replay, send)


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes | None:
    """The request body, or None when the client went away first; BodyTooLarge past `limit`,
    however it is sent (a Content-Length, or chunks)."""
    for name, value in scope["headers"]:
        if name == b"content-length" and value.isdigit() and int(value) > limit:
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


async def answer(send: Send, status: int, message: str, close: bool = False) -> None:
    """A JSON error as the routes give; `close` ends the connection (the rest of the request
    is not read)."""
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

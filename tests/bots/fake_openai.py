"""A fake OpenAI-compatible server on 127.0.0.1 (uvicorn in a thread): it streams server-sent
events, records each request, and can be told to fail, break, stall, or misbehave the ways a
broken endpoint does (stream forever, never end a line, send content that is not text)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from helpers import free_port


@dataclass
class FakeOpenAI:
    pieces: list[str] = field(default_factory=lambda: ["Hel", "lo", " there"])
    failures: list[int] = field(default_factory=list)  # statuses answered before succeeding
    mode: str = "stream"  # stream | json | break | stall | forever | idle | no_newline | events
    modes: list[str] = field(default_factory=list)  # the next chat requests' modes, then `mode`
    events: list[Any] = field(default_factory=list)  # mode `events`: sent as they are
    requests: list[dict[str, Any]] = field(default_factory=list)
    models_status: int = 200  # the answer to GET /v1/models (the launch check)
    port: int = field(default_factory=free_port)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        self.requests.append({"method": scope["method"], "path": scope["path"],
                              "headers": headers, "body": json.loads(body) if body else None})
        if scope["path"] == "/v1/models" and self.models_status != 200:
            await _answer(send, self.models_status, f'{{"error": {{"message": "Invalid proxy '
                          f'server token passed. Received API Key = '
                          f'{headers.get("authorization", "")}"}}}}'.encode(), "application/json")
        elif scope["path"] == "/v1/models":
            await _answer(send, 200, b'{"data": []}', "application/json")
        elif self.failures:
            status = self.failures.pop(0)
            await _answer(send, status, f'{{"error": "status {status}; key was '
                          f'{headers.get("authorization", "")}"}}'.encode(), "application/json")
        else:
            mode = self.modes.pop(0) if self.modes else self.mode
            if mode == "json":
                answer = {"choices": [{"message": {"role": "assistant",
                                                   "content": "".join(self.pieces)}}]}
                await _answer(send, 200, json.dumps(answer).encode(), "application/json")
            elif mode in ENDLESS:
                await _endless(send, receive, mode)
            elif mode == "events":
                await _events(send, self.events)
            else:
                await self._stream(send, mode)

    async def _stream(self, send, mode: str) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        await send({"type": "http.response.body", "body": b": keep-alive\n\n",
                    "more_body": True})
        for i, piece in enumerate(self.pieces):
            if i == 1 and mode == "break":
                raise RuntimeError("connection dropped mid-stream")
            if i == 1 and mode == "stall":
                await asyncio.sleep(1)
            event = {"choices": [{"index": 0, "delta": {"content": piece}}]}
            await send({"type": "http.response.body", "more_body": True,
                        "body": f"data: {json.dumps(event)}\n\n".encode()})
            await asyncio.sleep(0.01)
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n"})


def _delta(content: Any) -> bytes:
    return f"data: {json.dumps({'choices': [{'index': 0, 'delta': {'content': content}}]})}\n\n" \
        .encode()


# What an endless mode sends again and again until the client goes away.
ENDLESS = {"forever": _delta("more "), "idle": b": keep-alive\n\n", "no_newline": b"x" * 65536}


async def _endless(send, receive, mode: str) -> None:
    """A stream that never ends by itself (`no_newline` first opens a `data:` line)."""
    gone = asyncio.ensure_future(_disconnect(receive))
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream")]})
    if mode == "no_newline":
        await send({"type": "http.response.body", "body": b'data: {"x": "', "more_body": True})
    try:
        while not gone.done():
            await send({"type": "http.response.body", "body": ENDLESS[mode], "more_body": True})
            await asyncio.sleep(0.05 if mode == "idle" else 0.001)
    finally:
        gone.cancel()


async def _disconnect(receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _events(send, events: list[Any]) -> None:
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream")]})
    for event in events:
        await send({"type": "http.response.body", "more_body": True,
                    "body": f"data: {json.dumps(event)}\n\n".encode()})
    await send({"type": "http.response.body", "body": b"data: [DONE]\n\n"})


async def _answer(send, status: int, body: bytes, content_type: str) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type.encode())]})
    await send({"type": "http.response.body", "body": body})


class Served:
    """Run `app` on its port until `stop()`."""

    def __init__(self, app: FakeOpenAI):
        config = uvicorn.Config(app, host="127.0.0.1", port=app.port, log_level="critical",
                                lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 5
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the fake OpenAI server did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(5)

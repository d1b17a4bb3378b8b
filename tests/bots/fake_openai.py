"""A fake OpenAI-compatible server on 127.0.0.1 (uvicorn in a thread): it streams server-sent
events, records each request, and can be told to fail, break or stall."""

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
    mode: str = "stream"  # stream | json | break | stall
    requests: list[dict[str, Any]] = field(default_factory=list)
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
        if scope["path"] == "/v1/models":
            await _answer(send, 200, b'{"data": []}', "application/json")
        elif self.failures:
            status = self.failures.pop(0)
            await _answer(send, status, f'{{"error": "status {status}; key was '
                          f'{headers.get("authorization", "")}"}}'.encode(), "application/json")
        elif self.mode == "json":
            answer = {"choices": [{"message": {"role": "assistant",
                                               "content": "".join(self.pieces)}}]}
            await _answer(send, 200, json.dumps(answer).encode(), "application/json")
        else:
            await self._stream(send)

    async def _stream(self, send) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        await send({"type": "http.response.body", "body": b": keep-alive\n\n",
                    "more_body": True})
        for i, piece in enumerate(self.pieces):
            if i == 1 and self.mode == "break":
                raise RuntimeError("connection dropped mid-stream")
            if i == 1 and self.mode == "stall":
                await asyncio.sleep(1)
            event = {"choices": [{"index": 0, "delta": {"content": piece}}]}
            await send({"type": "http.response.body", "more_body": True,
                        "body": f"data: {json.dumps(event)}\n\n".encode()})
            await asyncio.sleep(0.01)
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

"""The chat routes (docs/chat-api.md), native ASGI under /api/chat/: they run in the event loop,
so an open event stream costs a coroutine and a socket, and a bot turn no thread at all.
Database steps run on a small thread pool of their own."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from collection_and_annotations.bots.base import Bot
from collection_and_annotations.engine import chat
from collection_and_annotations.engine.chat import ChatRules, ReplyJob
from collection_and_annotations.engine.chat_batch import MessageStep, Step, write_one
from collection_and_annotations.engine.work import WorkRefused
from collection_and_annotations.server.asgi_front import BodyTooLarge, Receive, Send, read_body
from collection_and_annotations.server.auth import bearer, worker_from_token
from collection_and_annotations.server.chat.bus import (
    ChatBus,
    Mailbox,
    PostgresRelay,
    sse_json,
    to_json,
)
from collection_and_annotations.server.chat.runner import ChatRunner
from collection_and_annotations.server.chat.stream import END, EventStream
from collection_and_annotations.server.chat.writer import StepWriter
from collection_and_annotations.server.json_input import InvalidJson, parse_json_object
from collection_and_annotations.server.security import SECURITY_HEADER_LIST, HostCheck
from collection_and_annotations.server.thread_pool import ThreadPool
from collection_and_annotations.storage.database import Database

PREFIX = "/api/chat/"
MAX_BODY = 64_000
# Event streams one worker may hold open in a server process (tabs, reloads): past it, 429.
MAX_STREAMS_PER_WORKER = 4
DB_THREADS = 4
T = TypeVar("T")
_HEADERS = SECURITY_HEADER_LIST


class ChatApp:
    def __init__(self, db: Database, secret: str, rules: ChatRules, hosts: HostCheck,
                 make_bots: Callable[[], Mapping[str, Bot]], relay: bool = False):
        self.db, self.secret, self.rules, self.hosts = db, secret, rules, hosts
        self.make_bots = make_bots
        self.relay = relay
        self.bus = ChatBus()
        self.streams: Counter[int] = Counter()  # open event streams per worker id
        self.threads = ThreadPool(DB_THREADS, "chat-db")
        # SQLite's one writer: the frequent steps go to one thread, many to a transaction.
        self.writer = StepWriter(db, rules) if db.engine.dialect.name == "sqlite" else None
        self.runner: ChatRunner | None = None
        self._starting: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def in_thread(self, function: Callable[..., T], *args: Any) -> T:
        return await self.threads.run(function, *args)

    async def write(self, step: Step) -> Any:
        """A message or a reply stored (engine/chat_batch.py)."""
        if self.writer is not None:
            return await self.writer.write(step)
        return await self.in_thread(write_one, self.db, step, self.rules)

    async def _runner(self) -> ChatRunner:
        """Bots and the relay are made in the process and loop that serve (after any fork)."""
        if self.runner is None:
            self._loop = asyncio.get_running_loop()
            self._starting = self._starting or asyncio.Lock()
            async with self._starting:
                if self.runner is None:
                    if self.relay:
                        self.bus.relay = PostgresRelay(self.db.url, self.bus)
                        await self.bus.relay.start()
                    bots = await self.in_thread(self.make_bots)
                    self.runner = ChatRunner(self.db, bots, self.rules, self.bus,
                                             self.in_thread, self.write,
                                             self._publish_job_state)
        return self.runner

    async def _publish_job_state(self, job: ReplyJob) -> None:
        runner = await self._runner()
        state = await self.in_thread(chat.job_state, self.db, job, self.rules,
                                     runner.live_text)
        self.bus.publish(job.public_id, "state", state)

    async def aclose(self) -> None:
        if self.runner is not None:
            await self.runner.aclose()
        if self.bus.relay is not None:
            await self.bus.relay.aclose()
        self.threads.shutdown()
        if self.writer is not None:
            self.writer.shutdown()

    # -- HTTP ------------------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = dict(scope["headers"])
        host = headers.get(b"host", b"").decode("latin-1")
        refused = self.hosts.refusal(host)
        if refused is not None:
            return await _json(send, 421, {"error": refused})
        unit_id, _, action = scope["path"][len(PREFIX):].partition("/")
        route = ROUTES.get((scope["method"], action))
        if route is None or not unit_id:
            return await _json(send, 404, {"error": "no such chat request"})
        token = bearer(headers.get(b"authorization", b"").decode("latin-1"))
        worker_id = worker_from_token(self.secret, token) if token else None
        if worker_id is None:
            return await _json(send, 401, {"error": "missing or invalid worker token; open "
                                                    "your task link again"})
        try:
            body: dict[str, Any] = {}
            if scope["method"] == "POST":
                raw = await read_body(scope, receive, MAX_BODY)
                if raw is None:
                    return
                body = parse_json_object(raw or b"{}")
            await route(self, unit_id, worker_id, body, receive, send)
        except BodyTooLarge:
            await _json(send, 413, {"error": f"the request is larger than {MAX_BODY} bytes"})
        except InvalidJson as exc:
            await _json(send, exc.status, {"error": str(exc)})
        except WorkRefused as exc:
            error: dict[str, Any] = {"error": str(exc)}
            if exc.problems is not None:
                error["problems"] = exc.problems
            await _json(send, exc.status, error)

    async def _start(self, unit: str, worker_id: int, _body: dict[str, Any],
                     _receive: Receive, send: Send) -> None:
        runner = await self._runner()
        job, state = await self.in_thread(chat.start, self.db, unit, worker_id, self.rules,
                                          runner.live_text)
        if job is not None:
            runner.run(job)
        await self._changed(unit, state, send)

    async def _changed(self, unit: str, state: dict[str, Any], send: Send) -> None:
        """The chat's new state to its streams and as the answer, encoded once."""
        encoded = to_json(state)
        self.bus.publish_encoded(unit, sse_json("state", encoded))
        await _answer(send, 200, encoded.encode())

    async def _message(self, unit: str, worker_id: int, body: dict[str, Any],
                       _receive: Receive, send: Send) -> None:
        runner = await self._runner()
        step = MessageStep.checked(unit, worker_id, body.get("text"),
                                   body.get("client_message_id"), self.rules, body.get("label"))
        # The bot starts on the message while it is being stored (shown once it is).
        early = runner.early(unit, step.text)
        try:
            answer, job = await self.write(step)
        except BaseException:
            if early is not None:
                early.settle(None)
            raise
        if job is not None:
            self.bus.publish(unit, "message", {
                "position": job.position, "index": answer["index"], "role": "worker",
                "text": job.history[-1].text, "sent_at": answer["sent_at"]})
        if (early is None or not early.settle(job)) and job is not None:
            runner.run(job)  # no early turn, or not this one (settle cancelled it)
        await _json(send, 202, answer)

    async def _end(self, unit: str, worker_id: int, body: dict[str, Any],
                   _receive: Receive, send: Send) -> None:
        runner = await self._runner()
        conversation_id, state = await self.in_thread(chat.end, self.db, unit, worker_id,
                                                      self.rules, runner.live_text,
                                                      body.get("label"))
        await runner.close_session(conversation_id)
        await self._changed(unit, state, send)

    async def _retry(self, unit: str, worker_id: int, _body: dict[str, Any],
                     _receive: Receive, send: Send) -> None:
        runner = await self._runner()
        job = await self.in_thread(chat.retry, self.db, unit, worker_id)
        runner.run(job)
        await _json(send, 202, {})

    async def _events(self, unit: str, worker_id: int, _body: dict[str, Any],
                      receive: Receive, send: Send) -> None:
        if self.streams[worker_id] >= MAX_STREAMS_PER_WORKER:
            return await _json(send, 429, {"error": (
                f"{MAX_STREAMS_PER_WORKER} chat connections of yours are open already; close "
                "other tabs of this task (this page tries again by itself)")})
        self.streams[worker_id] += 1
        try:
            await self._stream(unit, worker_id, receive, send)
        finally:
            self.streams[worker_id] -= 1
            if not self.streams[worker_id]:
                del self.streams[worker_id]

    async def _stream(self, unit: str, worker_id: int, receive: Receive, send: Send) -> None:
        runner = await self._runner()
        read = (chat.read_chat, self.db, unit, worker_id, self.rules, runner.live_text)
        with self.bus.watch(unit) as mailbox:
            # Watching before reading: nothing that happens in between is missed.
            state = await self.in_thread(*read)
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"),
                (b"cache-control", b"no-store"), (b"x-accel-buffering", b"no"), *_HEADERS]})
            # The client leaving and the server stopping end the stream through its mailbox.
            gone = asyncio.ensure_future(_disconnected(receive, mailbox))
            try:
                await EventStream(mailbox, send, lambda: self.in_thread(*read),
                                  self.rules.max_resp_time).run(state)
            finally:
                gone.cancel()
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    def stop_streams(self) -> None:
        """From any thread: end the open event streams (the server is stopping; pages
        reconnect to whichever server comes next)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self.bus.end_all, END)


async def _disconnected(receive: Receive, mailbox: Mailbox) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    mailbox.put(END, always=True)


async def _json(send: Send, status: int, body: dict[str, Any]) -> None:
    await _answer(send, status, to_json(body).encode())


async def _answer(send: Send, status: int, encoded: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(encoded)).encode()),
        (b"cache-control", b"no-store"), *_HEADERS]})
    await send({"type": "http.response.body", "body": encoded})


ROUTES = {
    ("POST", "start"): ChatApp._start,
    ("POST", "messages"): ChatApp._message,
    ("POST", "end"): ChatApp._end,
    ("POST", "retry"): ChatApp._retry,
    ("GET", "events"): ChatApp._events,
}

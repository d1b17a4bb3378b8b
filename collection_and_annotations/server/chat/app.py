"""The chat routes (docs/chat-api.md) under /api/chat/: coroutines of the event loop, so an open
event stream costs a coroutine and a socket, and a bot turn no thread at all. Database steps
run on the process's `database_threads` threads, shared with the worker API's (server/web.py);
on SQLite the frequent ones go to the step writer instead.

An arena battle (docs/arena.md) takes the same routes but `end`, and `vote` instead: the
worker's message goes to both sides and both bots' turns run at once, each streaming to its
pane (the events' `position`: 0 is Model A, 1 Model B); one side failed is asked again alone;
the vote is stored before the state that may name the bots is sent."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from collection_and_annotations.bots.base import Bot
from collection_and_annotations.engine import chat
from collection_and_annotations.engine.arena import BattleVoteStep
from collection_and_annotations.engine.chat import ChatRules, MessageStep, ReplyJob
from collection_and_annotations.engine.chat_batch import Step, write_one
from collection_and_annotations.server.auth import worker_of
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
from collection_and_annotations.server.guard import CHAT_PREFIX
from collection_and_annotations.server.json_input import parse_json_object
from collection_and_annotations.server.web import JSON, DatabaseThreads, error
from collection_and_annotations.storage.database import Database

# Event streams one worker may hold open in a server process (tabs, reloads): past it, 429.
MAX_STREAMS_PER_WORKER = 4
_NO_STORE = {"Cache-Control": "no-store"}


class Chat:
    def __init__(self, db: Database, secret: str, rules: ChatRules,
                 make_bots: Callable[[], Mapping[str, Bot]], relay: bool,
                 threads: DatabaseThreads):
        self.db, self.secret, self.rules = db, secret, rules
        self.threads = threads  # shared with the worker API's routes
        self.make_bots = make_bots
        self.relay = relay
        self.bus = ChatBus()
        self.streams: Counter[int] = Counter()  # open event streams per worker id
        # SQLite's one writer: the frequent steps go to one thread, many to a transaction.
        self.writer = StepWriter(db, rules) if db.engine.dialect.name == "sqlite" else None
        self.runner: ChatRunner | None = None
        self._starting: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def routes(self) -> list[Route]:
        """The routes under a unit: a battle's worker votes where a chat's ends the chat."""
        closing = ("vote", self.vote) if self.rules.side_by_side else ("end", self.end)
        return [Route(f"{CHAT_PREFIX}{{unit}}/{action}", endpoint, methods=[method])
                for method, action, endpoint in (
                    ("POST", "start", self.start), ("POST", "messages", self.message),
                    ("POST", *closing), ("POST", "retry", self.retry),
                    ("GET", "events", self.events))]

    async def write(self, step: Step) -> Any:
        """A message or a reply stored (engine/chat_batch.py)."""
        if self.writer is not None:
            return await self.writer.write(step)
        return await self.threads.run(write_one, self.db, step, self.rules)

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
                    bots = await self.threads.run(self.make_bots)
                    self.runner = ChatRunner(self.db, bots, self.rules, self.bus,
                                             self.threads.run, self.write,
                                             self._publish_job_state)
        return self.runner

    async def _publish_job_state(self, job: ReplyJob) -> None:
        runner = await self._runner()
        state = await self.threads.run(chat.unit_state, self.db, job.unit_id, job.attempt,
                                       job.layout, self.rules, runner.live_text)
        self.bus.publish(job.public_id, "state", state)

    async def aclose(self) -> None:
        if self.runner is not None:
            await self.runner.aclose()
        if self.bus.relay is not None:
            await self.bus.relay.aclose()
        if self.writer is not None:
            self.writer.shutdown()

    def stop_streams(self) -> None:
        """From any thread: end the open event streams (the server is stopping; pages
        reconnect to whichever server comes next)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self.bus.end_all, END)

    # -- routes ------------------------------------------------------------------------

    async def _step(self, request: Request) -> tuple[int, str, dict[str, Any], ChatRunner]:
        """Who asks, for which unit, with what body (checked on every step, though `start`
        uses nothing of it), and the runner."""
        worker_id, unit = worker_of(request, self.secret), request.path_params["unit"]
        body = parse_json_object(await request.body() or b"{}")
        return worker_id, unit, body, await self._runner()

    async def start(self, request: Request) -> Response:
        worker_id, unit, _, runner = await self._step(request)
        jobs, state = await self.threads.run(chat.start, self.db, unit, worker_id, self.rules,
                                             runner.live_text)
        for job in jobs:
            runner.run(job)
        return self._changed(unit, state)

    def _changed(self, unit: str, state: dict[str, Any]) -> Response:
        """The chat's new state to its streams and as the answer, encoded once."""
        encoded = to_json(state)
        self.bus.publish_encoded(unit, sse_json("state", encoded))
        return Response(encoded, media_type="application/json", headers=_NO_STORE)

    async def message(self, request: Request) -> Response:
        worker_id, unit, body, runner = await self._step(request)
        step = MessageStep.checked(unit, worker_id, body.get("text"),
                                   body.get("client_message_id"), self.rules,
                                   body.get(self.rules.label_field))
        # The bot starts on the message while it is being stored (shown once it is).
        early = runner.early(unit, step.text)
        try:
            answer, jobs = await self.write(step)
        except BaseException:
            if early is not None:
                early.settle(None)
            raise
        for job in jobs:  # the worker's message (the last turn of each bot's job)
            self.bus.publish(unit, "message", {
                "position": job.position, "index": answer["index"], "role": "worker",
                "text": job.history[-1].text, "sent_at": answer["sent_at"]})
        if early is None or not early.settle(jobs[0] if jobs else None):
            for job in jobs:  # no early turn, or not this one (settle cancelled it)
                runner.run(job)
        return JSON(answer, 202, _NO_STORE)

    async def end(self, request: Request) -> Response:
        worker_id, unit, body, runner = await self._step(request)
        conversation_id, state = await self.threads.run(chat.end, self.db, unit, worker_id,
                                                        self.rules, runner.live_text,
                                                        body.get("label"))
        await runner.close_session(conversation_id)
        return self._changed(unit, state)

    async def vote(self, request: Request) -> Response:
        worker_id, unit, body, runner = await self._step(request)
        await self.write(BattleVoteStep.checked(unit, worker_id, body.get("choice"),
                                                body.get("labels")))
        state = await self.threads.run(chat.read_chat, self.db, unit, worker_id, self.rules,
                                       runner.live_text)
        return self._changed(unit, state)

    async def retry(self, request: Request) -> Response:
        worker_id, unit, body, runner = await self._step(request)
        runner.run(await self.threads.run(chat.retry, self.db, unit, worker_id, self.rules,
                                          body.get("position")))
        return JSON({}, 202, _NO_STORE)

    async def events(self, request: Request) -> Response:
        """The chat's events as server-sent events, from its whole state on: a reload or a
        reconnect resumes anywhere."""
        worker_id, unit = worker_of(request, self.secret), request.path_params["unit"]
        if self.streams[worker_id] >= MAX_STREAMS_PER_WORKER:
            return error(f"{MAX_STREAMS_PER_WORKER} chat connections of yours are open "
                         "already; close other tabs of this task (this page tries again by "
                         "itself)", 429)
        runner = await self._runner()
        # the state the stream starts with, and reads again when told to
        read = (chat.read_chat, self.db, unit, worker_id, self.rules, runner.live_text)
        # Watching before reading: nothing that happens in between is missed.
        mailbox = self.bus.subscribe(unit)
        self.streams[worker_id] += 1
        release = BackgroundTask(self._release, unit, mailbox, worker_id)
        try:
            state = await self.threads.run(*read)
        except BaseException:
            await release()
            raise
        stream = EventStream(mailbox, lambda: self.threads.run(*read), self.rules.max_resp_time)
        return StreamingResponse(stream.events(state), media_type="text/event-stream",
                                 headers={**_NO_STORE, "X-Accel-Buffering": "no"},
                                 background=release)

    async def _release(self, unit: str, mailbox: Mailbox, worker_id: int) -> None:
        """A stream ended (or never began): its mailbox and its place in the worker's count."""
        if self.bus.unsubscribe(unit, mailbox):
            self.streams[worker_id] -= 1
            if not self.streams[worker_id]:
                del self.streams[worker_id]

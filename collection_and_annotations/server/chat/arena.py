"""The arena's routes (docs/arena.md), under /api/chat/ like the chat's: the worker's message
goes to both sides and both bots' turns run at once on the chat runner, each streaming to its
pane (the events' `position`: 0 is Model A, 1 Model B); one side failed is asked again alone;
the vote is stored before the state that may name the bots is sent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from collection_and_annotations.engine import arena, chat
from collection_and_annotations.engine.arena import ArenaRules
from collection_and_annotations.engine.chat import ReplyJob
from collection_and_annotations.engine.chat_batch import BattleMessageStep, BattleVoteStep
from collection_and_annotations.server.chat.app import Chat, json_response
from collection_and_annotations.server.guard import CHAT_PREFIX


class ArenaChat(Chat):
    rules: ArenaRules

    def routes(self) -> list[Route]:
        return [Route(f"{CHAT_PREFIX}{{unit}}/{action}", endpoint, methods=[method])
                for method, action, endpoint in (
                    ("POST", "start", self.start), ("POST", "messages", self.message),
                    ("POST", "vote", self.vote), ("POST", "retry", self.retry),
                    ("GET", "events", self.events))]

    def read_state(self, unit: str, worker_id: int,
                   live_text: Callable[[int], str | None]) -> dict[str, Any]:
        return chat.read_chat(self.db, unit, worker_id, self.rules, live_text,
                              arena.arena_state, "battle")

    def read_job_state(self, job: ReplyJob,
                       live_text: Callable[[int], str | None]) -> dict[str, Any]:
        return chat.job_state(self.db, job, self.rules, live_text, arena.arena_state)

    async def start(self, request: Request) -> Response:
        worker_id, unit = self._worker(request), request.path_params["unit"]
        await self._body(request)
        runner = await self._runner()
        await self.in_thread(arena.start, self.db, unit, worker_id, self.rules)
        state = await self.in_thread(self.read_state, unit, worker_id, runner.live_text)
        return self._changed(unit, state)

    async def message(self, request: Request) -> Response:
        worker_id, unit = self._worker(request), request.path_params["unit"]
        body = await self._body(request)
        runner = await self._runner()
        answer, jobs = await self.write(BattleMessageStep.checked(
            unit, worker_id, body.get("text"), body.get("client_message_id"), self.rules,
            body.get("labels")))
        for job in jobs:
            self.bus.publish(unit, "message", {
                "position": job.position, "index": answer["index"], "role": "worker",
                "text": job.history[-1].text, "sent_at": answer["sent_at"]})
        for job in jobs:
            runner.run(job)
        return json_response(answer, 202)

    async def retry(self, request: Request) -> Response:
        worker_id, unit = self._worker(request), request.path_params["unit"]
        body = await self._body(request)
        runner = await self._runner()
        runner.run(await self.in_thread(arena.retry, self.db, unit, worker_id,
                                        body.get("position")))
        return json_response({}, 202)

    async def vote(self, request: Request) -> Response:
        worker_id, unit = self._worker(request), request.path_params["unit"]
        body = await self._body(request)
        runner = await self._runner()
        await self.write(BattleVoteStep.checked(unit, worker_id, body.get("choice"),
                                                body.get("labels")))
        state = await self.in_thread(self.read_state, unit, worker_id, runner.live_text)
        return self._changed(unit, state)

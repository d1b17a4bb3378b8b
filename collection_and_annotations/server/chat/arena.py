"""The arena's routes (docs/arena.md), under /api/chat/ like the chat's: the worker's message
goes to both sides and both bots' turns run at once on the chat runner, each streaming to its
pane (the events' `position`: 0 is Model A, 1 Model B); one side failed is asked again alone;
the vote is stored before the state that may name the bots is sent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from collection_and_annotations.engine import arena, chat
from collection_and_annotations.engine.arena import ArenaRules
from collection_and_annotations.engine.chat import ReplyJob
from collection_and_annotations.engine.chat_batch import BattleMessageStep, BattleVoteStep
from collection_and_annotations.server.chat.app import Action, Chat, json_response


class ArenaChat(Chat):
    rules: ArenaRules

    def actions(self) -> list[Action]:
        return [("POST", "start", self.start), ("POST", "messages", self.message),
                ("POST", "vote", self.vote), ("POST", "retry", self.retry),
                ("GET", "events", self.events)]

    def read_state(self, unit: str, worker_id: int,
                   live_text: Callable[[int], str | None]) -> dict[str, Any]:
        return chat.read_chat(self.db, unit, worker_id, self.rules, live_text,
                              arena.arena_state, "battle")

    def read_job_state(self, job: ReplyJob,
                       live_text: Callable[[int], str | None]) -> dict[str, Any]:
        return chat.job_state(self.db, job, self.rules, live_text, arena.arena_state)

    async def start(self, request: Request) -> Response:
        worker_id, unit, _, runner = await self._step(request)
        await self.threads.run(arena.start, self.db, unit, worker_id, self.rules)
        state = await self.threads.run(self.read_state, unit, worker_id, runner.live_text)
        return self._changed(unit, state)

    async def message(self, request: Request) -> Response:
        worker_id, unit, body, runner = await self._step(request)
        answer, jobs = await self.write(BattleMessageStep.checked(
            unit, worker_id, body.get("text"), body.get("client_message_id"), self.rules,
            body.get("labels")))
        for job in jobs:
            self._stored_message(unit, job, answer)
        for job in jobs:
            runner.run(job)
        return json_response(answer, 202)

    async def retry(self, request: Request) -> Response:
        worker_id, unit, body, runner = await self._step(request)
        runner.run(await self.threads.run(arena.retry, self.db, unit, worker_id,
                                          body.get("position")))
        return json_response({}, 202)

    async def vote(self, request: Request) -> Response:
        worker_id, unit, body, runner = await self._step(request)
        await self.write(BattleVoteStep.checked(unit, worker_id, body.get("choice"),
                                                body.get("labels")))
        state = await self.threads.run(self.read_state, unit, worker_id, runner.live_text)
        return self._changed(unit, state)

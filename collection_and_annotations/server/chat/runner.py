"""Bot turns, decoupled from requests: a turn is a task in the server's event loop that streams
the bot's reply to the bus piece by piece and ends by writing the bot's message row.

A request only stores the worker's message and hands the turn over (`ChatRunner.run`), so a
bot that thinks for seconds holds no thread and no request. Each conversation has its own bot
session (its own state), kept while the conversation lasts in the process that runs its turns;
a session lost to a restart is made anew and gets the whole transcript in `reply(history)`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from collection_and_annotations.bots.base import Bot, BotSession, BotUnavailable
from collection_and_annotations.engine.chat import ReplyJob, reply_failed
from collection_and_annotations.engine.chat_batch import ReplyStep, Step
from collection_and_annotations.server.chat.bus import ChatBus, piece_events
from collection_and_annotations.storage.database import Database

log = logging.getLogger(__name__)
T = TypeVar("T")
BROKEN = ("Your partner had a technical problem and this chat cannot continue. Your messages "
          "are saved; please open your task link again for new work.")
EMPTY = "Your partner did not answer. Press Try again to ask again."


class ChatRunner:
    def __init__(self, db: Database, bots: Mapping[str, Bot], bus: ChatBus,
                 in_thread: Callable[..., Awaitable[Any]],
                 write: Callable[[Step], Awaitable[Any]],
                 on_change: Callable[[ReplyJob], Awaitable[None]]):
        self.db, self.bots, self.bus = db, bots, bus
        self.in_thread = in_thread  # runs a blocking database call off the event loop
        self.write = write  # stores a reply (server/chat/writer.py)
        self.on_change = on_change  # publishes the new state of a job's chat
        self.sessions: dict[int, BotSession] = {}
        self.live: dict[int, list[str]] = {}  # conversation id -> pieces of the reply so far
        self.tasks: set[asyncio.Task[None]] = set()

    def live_text(self, conversation_id: int) -> str | None:
        pieces = self.live.get(conversation_id)
        return None if pieces is None else "".join(pieces)

    def run(self, job: ReplyJob) -> None:
        task = asyncio.get_running_loop().create_task(self._turn(job))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _turn(self, job: ReplyJob) -> None:
        started = time.monotonic()
        pieces = self.live[job.conversation_id] = []
        self.bus.publish(job.public_id, "typing", {"position": job.position, "index": job.index})
        bot = self.bots[job.bot]
        piece_event = piece_events(job.position, job.index)
        first_piece_ms = None
        try:
            session = self.sessions.get(job.conversation_id)
            if session is None:
                session = self.sessions[job.conversation_id] = bot.session(
                    str(job.conversation_id))
            async for piece in session.reply(list(job.history)):
                if not piece:
                    continue
                if first_piece_ms is None:
                    first_piece_ms = round((time.monotonic() - started) * 1000)
                pieces.append(piece)
                self.bus.publish_encoded(job.public_id, piece_event(piece))
            if not "".join(pieces).strip():
                raise BotUnavailable(EMPTY)
        except BotUnavailable as exc:
            await self._failed(job, str(exc) or EMPTY, retryable=True)
            return
        except Exception:  # noqa: BLE001 - a broken bot must not take the server down
            log.exception("chat: bot '%s' failed in conversation %s; the chat is ended and "
                          "its unit returned to the pool", job.bot, job.conversation_id)
            await self._failed(job, BROKEN, retryable=False)
            return
        finally:
            self.live.pop(job.conversation_id, None)
        message = await self.write(ReplyStep(
            job, "".join(pieces), bot.settings(), first_piece_ms,
            round((time.monotonic() - started) * 1000)))
        if message is not None:
            self.bus.publish(job.public_id, "message", message)
        else:
            await self.close_session(job.conversation_id)

    async def _failed(self, job: ReplyJob, message: str, retryable: bool) -> None:
        if await self.in_thread(reply_failed, self.db, job, message, retryable):
            self.bus.publish(job.public_id, "error", {
                "position": job.position, "message": message, "retry": retryable})
            if not retryable:
                await self.close_session(job.conversation_id)
            await self.on_change(job)

    async def close_session(self, conversation_id: int) -> None:
        session = self.sessions.pop(conversation_id, None)
        if session is not None:
            try:
                await session.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                log.exception("chat: closing a bot session failed")

    async def aclose(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        for conversation_id in list(self.sessions):
            await self.close_session(conversation_id)
        for bot in self.bots.values():
            await bot.aclose()

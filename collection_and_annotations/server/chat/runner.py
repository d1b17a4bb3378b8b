"""Bot turns, decoupled from requests: a turn is a task in the server's event loop that streams
the bot's reply to the bus piece by piece and ends by writing the bot's message row.

A request only stores the worker's message and hands the turn over (`ChatRunner.run`), so a
bot that thinks for seconds holds no thread and no request. Each conversation has its own bot
session (its own state), kept while the conversation lasts in the process that runs its turns;
a session lost to a restart is made anew and gets the whole transcript in `reply(history)`.

When this process stored the reply a worker's new message answers, the turn starts early, on
the message while it is being stored (`ChatRunner.early`), and is shown once it is: the bot's
time hides the write's (docs/architecture.md, "Early turns").
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any

from collection_and_annotations.bots.base import Bot, BotSession, BotUnavailable, Turn
from collection_and_annotations.bots.limits import ReplyCut
from collection_and_annotations.engine.chat import (
    ChatRules,
    ReplyJob,
    ReplyStep,
    ended_conversations,
    reply_failed,
)
from collection_and_annotations.engine.chat_batch import Step
from collection_and_annotations.server.chat.bus import ChatBus, piece_events
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import utcnow

log = logging.getLogger(__name__)
BROKEN = ("Your partner had a technical problem and this chat cannot continue. Your messages "
          "are saved; please open your task link again for new work.")
EMPTY = "Your partner did not answer. Press Try again to ask again."
ANSWERED_KEPT = 20_000  # chats whose next turn may start early (the oldest forgotten first)
SWEEP_SECONDS = 60.0  # at most this long between looks for sessions whose chat ended elsewhere


class ChatRunner:
    def __init__(self, db: Database, bots: Mapping[str, Bot], rules: ChatRules, bus: ChatBus,
                 in_thread: Callable[..., Awaitable[Any]],
                 write: Callable[[Step], Awaitable[Any]],
                 on_change: Callable[[ReplyJob], Awaitable[None]]):
        self.db, self.bots, self.rules, self.bus = db, bots, rules, bus
        self.in_thread = in_thread  # runs a blocking database call off the event loop
        self.write = write  # stores a reply (server/chat/writer.py)
        self.on_change = on_change  # publishes the new state of a job's chat
        self.sessions: dict[int, BotSession] = {}
        self.live: dict[int, list[str]] = {}  # conversation id -> pieces of the reply so far
        # unit -> the last turn whose reply this process stored, and the reply's text
        self.answered: dict[str, tuple[ReplyJob, str]] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None

    def live_text(self, conversation_id: int) -> str | None:
        pieces = self.live.get(conversation_id)
        return None if pieces is None else "".join(pieces)

    def run(self, job: ReplyJob) -> None:
        self._spawn(self._turn(job, None))

    def early(self, public_id: str, text: str) -> EarlyTurn | None:
        """Start the bot on a worker's message before the message is stored, when this
        process stored the reply it answers (so it knows the conversation) and the message
        looks acceptable: the bot's time and the write overlap. Nothing of the turn is shown
        until `EarlyTurn.settle` confirms it. Not with online labels, whose checks may
        refuse a message (the bot would have worked for nothing), nor for a message to
        several bots side by side (an arena battle)."""
        answered = self.answered.get(public_id)
        annotations = self.rules.annotations
        if answered is None or self.rules.side_by_side or (
                annotations is not None and annotations.online is not None):
            return None
        last, reply = answered
        worker_turns = sum(turn.role == "worker" for turn in last.history)
        if worker_turns - (self.rules.start_mode == "hi") >= self.rules.num_turns:
            return None  # the chat has its turns: this message will be refused
        job = replace(last, index=last.index + 2, asked_at=utcnow(),
                      history=(*last.history, Turn("bot", reply), Turn("worker", text)))
        confirmed: asyncio.Future[ReplyJob] = asyncio.get_running_loop().create_future()
        return EarlyTurn(job, confirmed, self._spawn(self._turn(job, confirmed)))

    def _spawn(self, turn: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(turn)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _turn(self, job: ReplyJob, confirmed: asyncio.Future[ReplyJob] | None) -> None:
        """The bot's reply to `job`; with `confirmed`, an early turn: its pieces wait for the
        worker's message to be stored, and the task is cancelled if it is not."""
        started = time.monotonic()
        self.answered.pop(job.public_id, None)
        pieces: list[str] = []
        piece_event = piece_events(job.position, job.index)

        def show() -> None:
            self.live[job.conversation_id] = pieces
            self.bus.publish(job.public_id, "typing", {"position": job.position,
                                                       "index": job.index})
            for piece in pieces:
                self.bus.publish_encoded(job.public_id, piece_event(piece))

        try:
            if confirmed is None:
                show()
            failure, first_piece_ms = None, None
            bot = self.bots[job.bot]
            try:
                session = self.sessions.get(job.conversation_id)
                if session is None:
                    session = self.sessions[job.conversation_id] = bot.session(
                        str(job.conversation_id))
                    if self._sweeper is None or self._sweeper.done():
                        self._sweeper = self._spawn(self._close_ended())
                length = 0  # a reply over the bot's limits is cut (bots/limits.py)
                async with bot.limits.deadline(), \
                        aclosing(session.reply(list(job.history))) as stream:
                    async for piece in stream:
                        length = bot.limits.check(piece, length)
                        if not piece:
                            continue
                        if first_piece_ms is None:
                            first_piece_ms = round((time.monotonic() - started) * 1000)
                        pieces.append(piece)
                        if confirmed is None:
                            self.bus.publish_encoded(job.public_id, piece_event(piece))
                        elif confirmed.done():
                            confirmed = None  # stored: shown from now on, as any turn
                            show()
                if not "".join(pieces).strip():
                    raise BotUnavailable(EMPTY)
            except BotUnavailable as exc:
                if isinstance(exc, ReplyCut):
                    log.warning("chat: bot '%s' in conversation %s: %s", job.bot,
                                job.conversation_id, exc.reason)
                failure = (str(exc) or EMPTY, True)
            except Exception:  # noqa: BLE001 - a broken bot must not take the server down
                log.exception("chat: bot '%s' failed in conversation %s; the chat is ended "
                              "and its unit returned to the pool", job.bot, job.conversation_id)
                failure = (BROKEN, False)
            if confirmed is not None:
                await confirmed  # the turn (and its failure) belongs to a stored message
                if failure is None:
                    show()
        except asyncio.CancelledError:
            # An early turn whose message was not stored (its session saw that message), or
            # the server stopping: the conversation's next turn starts a new session.
            self._drop_session(job.conversation_id)
            raise
        finally:
            if self.live.get(job.conversation_id) is pieces:
                del self.live[job.conversation_id]
        if failure is not None:
            await self._failed(job, *failure)
            return
        text = "".join(pieces)
        message = await self.write(ReplyStep(
            job, text, self.bots[job.bot].settings(), first_piece_ms,
            round((time.monotonic() - started) * 1000)))
        if message is not None:
            self.answered[job.public_id] = (job, message["text"])  # as stored
            if len(self.answered) > ANSWERED_KEPT:  # chats that timed out are never closed here
                del self.answered[next(iter(self.answered))]
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
        for unit in [u for u, (job, _) in self.answered.items()
                     if job.conversation_id == conversation_id]:
            del self.answered[unit]
        await _close(self.sessions.pop(conversation_id, None))

    async def _close_ended(self) -> None:
        """While this process keeps bot sessions, close those whose chat ended without it:
        timed out or returned to the pool by the launcher's sweep (it may run in another
        process), so their agents do not pile up for the life of the process."""
        every = max(1.0, min(SWEEP_SECONDS, self.rules.max_resp_time))
        while self.sessions:
            await asyncio.sleep(every)
            try:
                ended = await self.in_thread(ended_conversations, self.db, list(self.sessions))
            except Exception:  # noqa: BLE001 - a database error: look again next time
                log.exception("chat: looking for chats that ended elsewhere failed")
                continue
            for conversation_id in ended:
                await self.close_session(conversation_id)

    def _drop_session(self, conversation_id: int) -> None:
        """Out of `sessions` at once, closed in the background: the conversation's next turn
        makes a new one (which gets the whole transcript)."""
        session = self.sessions.pop(conversation_id, None)
        if session is not None:
            self._spawn(_close(session))

    async def aclose(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        for conversation_id in list(self.sessions):
            await self.close_session(conversation_id)
        for bot in self.bots.values():
            await bot.aclose()


async def _close(session: BotSession | None) -> None:
    if session is not None:
        try:
            await session.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            log.exception("chat: closing a bot session failed")


@dataclass(frozen=True)
class EarlyTurn:
    """A bot turn started before its worker's message is stored (`ChatRunner.early`)."""

    job: ReplyJob
    confirmed: asyncio.Future[ReplyJob]
    task: asyncio.Task[None]

    def settle(self, stored: ReplyJob | None) -> bool:
        """The message's write is done: `stored` is the turn it asks for (None when nothing
        was stored). True when that is this turn, which may now show; otherwise it is
        cancelled and its session dropped, and the caller runs the stored turn."""
        if stored is not None and (stored.conversation_id, stored.index, stored.history) == (
                self.job.conversation_id, self.job.index, self.job.history):
            self.confirmed.set_result(stored)
            return True
        self.task.cancel()
        return False

"""Blocking bot code (ParlAI agents, Python agents) run off the event loop, a bounded number at
once: one slow `act()` must never stall the thousands of chats sharing the loop.

The threads are daemon threads: an agent hung in `act()` can be given up (the chat runner cuts
the reply) and never keeps the server from stopping."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class BlockingCalls:
    """A bot's own threads: at most `limit` responses at once (`max_concurrent_responses`).

    `slot()` is held for a whole response (a streamed one yields the thread between pieces,
    but keeps its slot); `threads`, of the same size, bounds the calls running at once, those
    whose chat gave up on them included (a thread is counted until its call returns)."""

    def __init__(self, limit: int, name: str):
        self.limit, self.name = max(1, limit), f"bot-{name}"
        self._slots = asyncio.Semaphore(self.limit)
        self._threads = asyncio.Semaphore(self.limit)
        self._unawaited: set[asyncio.Task[None]] = set()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._slots:
            yield

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` in a daemon thread of its own, once fewer than `limit` run."""
        await self._threads.acquire()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[T] = loop.create_future()

        def settle(result: Any, failed: bool) -> None:
            self._threads.release()
            if not done.cancelled():
                (done.set_exception if failed else done.set_result)(result)

        def work() -> None:
            try:
                result, failed = function(*args), False
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting caller
                result, failed = exc, True
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits
                loop.call_soon_threadsafe(settle, result, failed)

        threading.Thread(target=work, name=self.name, daemon=True).start()
        return await done

    def call_later(self, function: Callable[[], Any]) -> None:
        """`function()` in the bot's threads once one is free, not waited for (it may queue
        behind a call that hangs); its result is dropped, a failure logged."""
        task = asyncio.ensure_future(self.call(_logged, function))
        self._unawaited.add(task)
        task.add_done_callback(self._unawaited.discard)

    def shutdown(self) -> None:
        for task in self._unawaited:
            task.cancel()


def _logged(function: Callable[[], Any]) -> None:
    try:
        function()
    except Exception:  # noqa: BLE001 - nobody waits for it
        log.exception("bot: %s failed", getattr(function, "__qualname__", function))

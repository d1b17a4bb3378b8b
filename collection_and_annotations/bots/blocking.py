"""Blocking bot code (ParlAI agents, Python agents) run off the event loop, a bounded number at
once: one slow `act()` must never stall the thousands of chats sharing the loop.

The threads are daemon threads: an agent hung in `act()` can be given up (the chat runner cuts
the reply) and never keeps the server from stopping."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from collection_and_annotations.server.thread_pool import ThreadPool

log = logging.getLogger(__name__)
T = TypeVar("T")


class BlockingCalls:
    """A bot's own threads: at most `limit` responses at once (`max_concurrent_responses`).

    `slot()` is held for a whole response (a streamed one yields the thread between pieces,
    but keeps its slot); the pool of the same size bounds threads still running after their
    chat gave up on them."""

    def __init__(self, limit: int, name: str):
        self.limit = max(1, limit)
        self._slots = asyncio.Semaphore(self.limit)
        self._pool = ThreadPool(self.limit, f"bot-{name}")
        self._unawaited: set[asyncio.Task[None]] = set()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._slots:
            yield

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        return await self._pool.run(function, *args)

    def call_later(self, function: Callable[[], Any]) -> None:
        """`function()` in the bot's threads once one is free, not waited for (it may queue
        behind a call that hangs); its result is dropped, a failure logged."""
        task = asyncio.ensure_future(self._pool.run(_logged, function))
        self._unawaited.add(task)
        task.add_done_callback(self._unawaited.discard)

    def shutdown(self) -> None:
        self._pool.shutdown()
        for task in self._unawaited:
            task.cancel()


def _logged(function: Callable[[], Any]) -> None:
    try:
        function()
    except Exception:  # noqa: BLE001 - nobody waits for it
        log.exception("bot: %s failed", getattr(function, "__qualname__", function))

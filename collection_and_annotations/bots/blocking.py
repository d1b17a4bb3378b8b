"""Blocking bot code (ParlAI agents, Python agents) run off the event loop, a bounded number at
once: one slow `act()` must never stall the thousands of chats sharing the loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar

T = TypeVar("T")


class BlockingCalls:
    """A bot's own threads: at most `limit` responses at once (`max_concurrent_responses`).

    `slot()` is held for a whole response (a streamed one yields the thread between pieces,
    but keeps its slot); the pool of the same size bounds threads still running after their
    chat gave up on them."""

    def __init__(self, limit: int, name: str):
        self.limit = max(1, limit)
        self._slots = asyncio.Semaphore(self.limit)
        self._pool = ThreadPoolExecutor(self.limit, thread_name_prefix=f"bot-{name}")

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._slots:
            yield

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, function, *args)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

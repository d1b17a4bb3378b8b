"""Blocking calls (the Flask app, database steps) from the event loop, on a few threads.

One queue in, and each result handed straight to the awaiting event loop's future: cheaper than
an executor, whose concurrent future is chained to an asyncio one on every call (a tenth of the
server's CPU under load). The threads start on first use, in the process that serves (a pool
made before a fork has none yet), and keep their database connections from call to call
(`reused_connections`).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from collection_and_annotations.storage.database import reused_connections

T = TypeVar("T")
_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[..., Any], tuple[Any, ...]]


class ThreadPool:
    def __init__(self, threads: int, name: str):
        self.size, self.name = threads, name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` in a pool thread; its result or its exception."""
        if not self._threads:
            self._start()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[T] = loop.create_future()
        self._jobs.put((loop, done, function, args))
        return await done

    def _start(self) -> None:
        self._threads = [threading.Thread(target=self._work, name=f"{self.name}-{n}",
                                          daemon=True) for n in range(self.size)]
        for thread in self._threads:
            thread.start()

    def _work(self) -> None:
        with reused_connections():
            while (job := self._jobs.get()) is not None:
                loop, done, function, args = job
                try:
                    result, failed = function(*args), False
                except BaseException as exc:  # noqa: BLE001 - handed to the awaiting caller
                    result, failed = exc, True
                with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits
                    loop.call_soon_threadsafe(settle, done, result, failed)

    def shutdown(self) -> None:
        """The threads end once the calls queued before this are done (a later call starts
        new ones)."""
        for _ in self._threads:
            self._jobs.put(None)
        self._threads = []

    async def aclose(self) -> None:
        """As `shutdown`, from the event loop (the greenlet pool's interface): the threads
        end on their own, without being waited for."""
        self.shutdown()


def settle(done: asyncio.Future[Any], result: Any, failed: bool) -> None:
    """In the loop: a call's result (or exception) to the future its caller awaits."""
    if done.cancelled():  # the caller went away meanwhile
        return
    if failed:
        done.set_exception(result)
    else:
        done.set_result(result)

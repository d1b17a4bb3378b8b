"""Blocking calls (the Flask app's worker steps) in greenlets of the event loop's own thread.

Each of a few slots is a greenlet that runs one call at a time with its own database
connections (`reused_connections`). When a call waits for the database's socket outside a
transaction (storage/socket_wait.py), its slot hands the wait to the event loop and the loop
runs other calls meanwhile; every other wait blocks the thread, as in a thread pool. No call
ever leaves the loop's thread, so none queues to win the GIL back after a round trip: on
PostgreSQL that queueing, not the database, was most of a worker step's time on threads.

Its interface is the thread pool's (thread_pool.py), so the WSGI pool takes either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import greenlet

from collection_and_annotations.server.thread_pool import settle
from collection_and_annotations.storage.database import reused_connections
from collection_and_annotations.storage.socket_wait import waiting_with

T = TypeVar("T")
CLOSE_SECONDS = 10.0


class _Job(NamedTuple):
    done: asyncio.Future[Any]
    function: Callable[..., Any]
    args: tuple[Any, ...]


class _Wait(NamedTuple):
    """From a slot to its driver: return once `fd` is ready."""

    fd: int
    for_writing: bool


class _Outcome(NamedTuple):
    """From a slot to its driver: its call ended with `result` (an exception if `failed`)."""

    result: Any
    failed: bool


class GreenletPool:
    """`slots` greenlets, each driven by a task of the loop that serves (they start on first
    use, so a pool made before the loop runs, or before a fork, has none yet)."""

    def __init__(self, slots: int, name: str):
        self.size, self.name = slots, name
        # The slots' queue and drivers, made in the loop that serves (a queue keeps the loop
        # it first waited in); none until the first call.
        self._jobs: asyncio.Queue[_Job | None] | None = None
        self._drivers: list[asyncio.Task[None]] = []

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` in a slot; its result or its exception."""
        if self._jobs is None:
            self._jobs = asyncio.Queue()
            self._drivers = [asyncio.create_task(self._drive(self._jobs),
                                                 name=f"{self.name}-{n}")
                             for n in range(self.size)]
        done: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._jobs.put_nowait(_Job(done, function, args))
        return await done

    @staticmethod
    async def _drive(jobs: asyncio.Queue[_Job | None]) -> None:
        """One slot's driver, in the loop: hands it calls, and waits for its sockets."""
        loop = asyncio.get_running_loop()
        slot = greenlet.greenlet(_slot)
        while (job := await jobs.get()) is not None:
            message = slot.switch(job)
            while isinstance(message, _Wait):
                await _ready(loop, message)
                message = slot.switch()
            settle(job.done, message.result, message.failed)
        slot.switch(None)  # the slot ends and closes its connections

    async def aclose(self, timeout: float = CLOSE_SECONDS) -> None:
        """Returns once the calls queued before this are done and the slots have closed
        their connections, or after `timeout` seconds: a call stuck on the database must not
        hold the server's stop (its connection then closes with the process). A later call
        starts new slots."""
        jobs, drivers = self._jobs, self._drivers
        if jobs is None:
            return
        self._jobs, self._drivers = None, []
        for _ in drivers:
            jobs.put_nowait(None)
        await asyncio.wait(drivers, timeout=timeout)


def _slot(job: _Job | None) -> None:
    """A slot's greenlet: calls one job at a time, each switch back to the driver carrying
    a socket wait or the call's outcome (and bringing the next job)."""
    driver = greenlet.getcurrent().parent
    # Only the autocommit connection is held: a transaction's connection (a claim's or a
    # submit's fallback, screening) comes from the pool, so the slots never hold more than one
    # connection each.
    with reused_connections(("read",)), waiting_with(_wait_in_loop):
        while job is not None:
            try:
                outcome = _Outcome(job.function(*job.args), False)
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting caller
                outcome = _Outcome(exc, True)
            job = driver.switch(outcome)


def _wait_in_loop(fd: int, for_writing: bool) -> None:
    """In a slot: suspend it until the loop sees `fd` ready."""
    greenlet.getcurrent().parent.switch(_Wait(fd, for_writing))


async def _ready(loop: asyncio.AbstractEventLoop, wait: _Wait) -> None:
    ready = loop.create_future()
    watch, unwatch = (loop.add_writer, loop.remove_writer) if wait.for_writing else \
        (loop.add_reader, loop.remove_reader)
    watch(wait.fd, _set_once, ready)
    try:
        await ready
    finally:
        unwatch(wait.fd)


def _set_once(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)

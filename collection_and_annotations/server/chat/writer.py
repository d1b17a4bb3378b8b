"""One thread writes the chat's and the arena's frequent steps on SQLite, all that wait in one
transaction (engine/chat_batch.py says why).

Steps queue while a batch is written and form the next one, so a batch grows with the load
and the calls into SQLite per step shrink with it. Two steps of one chat never share a batch:
the second waits for the next, and sees the first.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections import deque
from typing import Any

from collection_and_annotations.engine.chat import ChatRules
from collection_and_annotations.engine.chat_batch import Outcome, Step, write_batch
from collection_and_annotations.storage.database import Database

MAX_BATCH = 500
_Waiting = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Step]


class StepWriter:
    def __init__(self, db: Database, rules: ChatRules):
        self.db, self.rules = db, rules
        self._steps: queue.SimpleQueue[_Waiting | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    async def write(self, step: Step) -> Any:
        """The step's result, or its exception, once its batch is committed."""
        if self._thread is None:  # started in the process that serves (after any fork)
            self._thread = threading.Thread(target=self._work, name="chat-writer", daemon=True)
            self._thread.start()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()
        self._steps.put((loop, done, step))
        return await done

    def _work(self) -> None:
        held: deque[_Waiting] = deque()  # steps that wait for a later batch
        stopping = False  # shutdown was asked: write what is held, take nothing new
        while True:
            if not held:
                if stopping or (first := self._steps.get()) is None:
                    return
                held.append(first)
            with contextlib.suppress(queue.Empty):
                while not stopping and len(held) < 4 * MAX_BATCH:
                    waiting = self._steps.get_nowait()
                    if waiting is None:
                        stopping = True
                    else:
                        held.append(waiting)
            batch, units, later = [], set(), deque()
            for waiting in held:
                unit = waiting[2].public_id
                if unit in units or len(batch) == MAX_BATCH:
                    later.append(waiting)
                else:
                    units.add(unit)
                    batch.append(waiting)
            held = later
            outcomes = write_batch(self.db, [step for _, _, step in batch], self.rules)
            by_loop: dict[asyncio.AbstractEventLoop, list[tuple[Any, Outcome]]] = {}
            for (loop, done, _), outcome in zip(batch, outcomes, strict=True):
                by_loop.setdefault(loop, []).append((done, outcome))
            for loop, settled in by_loop.items():
                with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits
                    loop.call_soon_threadsafe(_settle, settled)

    def shutdown(self) -> None:
        """The thread ends once the steps queued before this are written."""
        if self._thread is not None:
            self._steps.put(None)


def _settle(settled: list[tuple[asyncio.Future[Any], Outcome]]) -> None:
    for done, outcome in settled:
        if done.cancelled():  # the caller went away meanwhile
            continue
        if outcome.error is not None:
            done.set_exception(outcome.error)
        else:
            done.set_result(outcome.result)

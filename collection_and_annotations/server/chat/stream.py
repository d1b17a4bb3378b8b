"""One chat event stream: the events delivered for a unit, written to the page as they come.

Events that wait in the mailbox together go out in one write: under load a stream falls a few
pieces behind, and one write costs far less than several. The stream wakes by itself only when
a ping is due (after PING_SECONDS of silence), the worker's reply time has run out or the
stream has been idle for IDLE_SECONDS, through one timer that it re-arms then, not through a
timeout around every event. An idle stream ends (the page reconnects and reads the state
anew): a connection whose client vanished without closing it is not held for ever.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

from collection_and_annotations.engine.work import WorkRefused
from collection_and_annotations.server.chat.bus import Mailbox, sse
from collection_and_annotations.storage.models import utcnow

PING_SECONDS = 15.0
IDLE_SECONDS = 300.0  # a stream that sent nothing but pings this long ends
PING = b": ping\n\n"
END = b""  # put in a stream's mailbox: the stream ends
STALE = sse("stale", {})  # another process changed the chat: read it again
_WAKE = b": wake\n\n"  # put by the stream's own timer
_BOT = b'"role":"bot"'
TIMED_OUT = ("The time for this chat ran out and it went back to the pool; your messages are "
             "saved. Please open your task link again for new work.")


class EventStream:
    """A unit's events after its initial `state`, as the chunks of a streaming response;
    `read` reads the state again (it raises WorkRefused once the unit is no longer the
    worker's)."""

    def __init__(self, mailbox: Mailbox, read: Callable[[], Awaitable[dict[str, Any]]],
                 max_resp_time: int):
        self.mailbox, self.read = mailbox, read
        self.max_resp_time = max_resp_time
        self.loop = asyncio.get_running_loop()
        self.last_sent = self.last_event = self.loop.time()  # any write; not a ping
        self.due_at: float | None = None  # loop time when the worker's next message is due
        self.position: int | None = None  # the current conversation, for the timed-out error
        self.timer: asyncio.TimerHandle | None = None

    async def events(self, state: dict[str, Any]) -> AsyncIterator[bytes]:
        """The chunks to send: each holds every event that waited together."""
        try:
            out, going = [self._state(state)], True
            while True:
                if out:
                    yield b"".join(out)
                    self._sent(out)
                if not going:
                    return
                out, going = await self._handle(await self.mailbox.take())
                if self.timer is None:
                    self._arm()
        finally:
            if self.timer is not None:
                self.timer.cancel()

    async def _handle(self, batch: list[bytes]) -> tuple[list[bytes], bool]:
        """The events of one batch to send, and False when the stream ends after them."""
        out: list[bytes] = []
        for encoded in batch:
            if encoded is END:
                return out, False
            if encoded is _WAKE:
                now = self.loop.time()
                if self.due_at is not None and now >= self.due_at:
                    encoded = STALE  # the reply time ran out: see whether the unit went back
                elif now - self.last_event >= IDLE_SECONDS - 0.01:
                    return out, False
                elif not out and now - self.last_sent >= PING_SECONDS - 0.01:
                    out.append(PING)
                    continue
                else:
                    continue
            if encoded == STALE:
                try:
                    out.append(self._state(await self.read()))
                except WorkRefused:
                    out.append(sse("error", {"position": self.position, "message": TIMED_OUT,
                                             "retry": False}))
                    return out, False
                continue
            if encoded.startswith(b"event: state"):
                self._follow(json.loads(encoded.split(b"data: ", 1)[1]))
            elif encoded.startswith(b"event: message") and _BOT in encoded:
                self._set_due(utcnow() + timedelta(seconds=self.max_resp_time))
            out.append(encoded)
        return out, True

    def _state(self, state: dict[str, Any]) -> bytes:
        self._follow(state)
        return sse("state", state)

    def _follow(self, state: dict[str, Any]) -> None:
        """Take the current conversation and its deadline from the state the page now has."""
        current = state["current"]
        self.position = current
        respond_by = None if current is None else state["conversations"][current]["respond_by"]
        self._set_due(None if respond_by is None
                      else datetime.fromisoformat(respond_by.rstrip("Z")))

    def _sent(self, events: list[bytes]) -> None:
        self.last_sent = self.loop.time()
        if events != [PING]:
            self.last_event = self.last_sent

    def _set_due(self, due: datetime | None) -> None:
        self.due_at = None if due is None else \
            self.loop.time() + (due - utcnow()).total_seconds()
        self._arm()

    def _arm(self) -> None:
        """Wake for the next ping, just after the worker's reply time runs out (the launcher
        then returns the unit to the pool within a second or two), or when the stream has been
        idle too long; an armed timer that rings earlier stays."""
        at = min(self.last_sent + PING_SECONDS, self.last_event + IDLE_SECONDS)
        if self.due_at is not None:
            at = min(at, self.due_at + 2.0)
        at = max(at, self.loop.time() + 0.5)
        if self.timer is not None:
            if self.timer.when() <= at:
                return
            self.timer.cancel()
        self.timer = self.loop.call_at(at, self._wake)

    def _wake(self) -> None:
        self.timer = None
        self.mailbox.put(_WAKE, always=True)

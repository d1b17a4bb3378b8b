"""Chat events from where they happen (a request, a bot turn) to the streams that show them.

Each server process keeps its watchers per unit. With several server processes or launchers a
worker's stream may be held by another process than the one running the bot turn, so events
are also relayed through PostgreSQL (LISTEN/NOTIFY, `PostgresRelay`): every process hears every
event and hands it to its own watchers. Events are encoded once, as server-sent-event bytes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import make_url

log = logging.getLogger(__name__)
CHANNEL = "cep_chat"
# NOTIFY payloads are at most 8000 bytes: bigger events go as a hint to re-read the state, and
# events that wait together share a payload up to NOTIFY_BYTES, joined by a record separator
# (events are ASCII JSON, which escapes control characters, so it never occurs inside one)
MAX_RELAYED = 7000
NOTIFY_BYTES = 7900
_SEPARATOR = b"\x1e"
WATCHER_BACKLOG = 1000


def to_json(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"))


def sse(event: str, data: dict[str, Any]) -> bytes:
    return sse_json(event, to_json(data))


def sse_json(event: str, encoded: str) -> bytes:
    """An event whose data is already JSON."""
    return f"event: {event}\ndata: {encoded}\n\n".encode()


def piece_events(position: int, index: int) -> Callable[[str], bytes]:
    """The encoder of one reply's pieces: the same bytes as `sse("piece", {...})`, with only
    the text encoded per piece (a reply has many pieces; their position and index never
    change)."""
    head = sse("piece", {"position": position, "index": index, "text": ""})[:-5]

    def encode(text: str) -> bytes:
        return b"".join((head, json.dumps(text).encode(), b"}\n\n"))

    return encode


class Mailbox:
    """A stream's events, in order. Cheaper than an asyncio.Queue for one reader that takes
    everything waiting at once: delivering appends, and wakes the reader only if it waits."""

    def __init__(self, limit: int | None = WATCHER_BACKLOG):
        self.events: list[bytes] = []
        self.limit = limit
        self._waiter: asyncio.Future[None] | None = None

    def put(self, event: bytes, always: bool = False) -> None:
        """Add an event. A stream that stopped reading loses events past the limit (it
        reconnects and starts again from the whole state); `always` (markers that end or
        wake the stream) ignores it."""
        if self.limit is not None and len(self.events) >= self.limit and not always:
            return
        self.events.append(event)
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def take(self) -> list[bytes]:
        """Every event waiting (at least one)."""
        while not self.events:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        events, self.events = self.events, []
        return events


class ChatBus:
    def __init__(self) -> None:
        self._watchers: dict[str, set[Mailbox]] = {}
        self.relay: PostgresRelay | None = None

    def subscribe(self, unit: str) -> Mailbox:
        """A new mailbox for the unit's events (its public id), until `unsubscribe`."""
        mailbox = Mailbox()
        self._watchers.setdefault(unit, set()).add(mailbox)
        return mailbox

    def unsubscribe(self, unit: str, mailbox: Mailbox) -> bool:
        """False when the mailbox was not subscribed (any more)."""
        watchers = self._watchers.get(unit)
        if watchers is None or mailbox not in watchers:
            return False
        watchers.discard(mailbox)
        if not watchers:
            del self._watchers[unit]
        return True

    def end_all(self, marker: bytes) -> None:
        """Put `marker` in every watcher's mailbox (the streams end on it)."""
        for watchers in self._watchers.values():
            for mailbox in watchers:
                mailbox.put(marker, always=True)

    def publish(self, unit: str, event: str, data: dict[str, Any]) -> None:
        """Deliver to this process's watchers of the unit (its public id) now, and to the
        other processes' (if any)."""
        self.publish_encoded(unit, sse(event, data))

    def publish_encoded(self, unit: str, encoded: bytes) -> None:
        self.deliver(unit, encoded)
        if self.relay is not None:
            self.relay.send(unit, encoded)

    def deliver(self, unit: str, encoded: bytes) -> None:
        for mailbox in self._watchers.get(unit, ()):
            mailbox.put(encoded)


class PostgresRelay:
    """Relays events between server processes through one LISTEN connection per process and
    an ordered queue of NOTIFYs (so a stream sees a reply's pieces in order). The events that
    wait together go in one NOTIFY: one round trip per event could not keep up with thousands
    of pieces a second."""

    def __init__(self, database_url: str, bus: ChatBus):
        url = make_url(database_url)
        self.conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
        self.bus = bus
        self.origin = secrets.token_hex(4)
        self._outbox = Mailbox(limit=None)
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        import psycopg

        self._listener = await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True)
        await self._listener.execute(f"LISTEN {CHANNEL}")
        self._sender = await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True)
        self._tasks = [asyncio.create_task(self._listen()), asyncio.create_task(self._send())]

    def send(self, unit: str, encoded: bytes) -> None:
        if len(encoded) > MAX_RELAYED:
            encoded = sse("stale", {})  # the other side re-reads the state
        self._outbox.put(b"%s %s" % (unit.encode(), encoded))

    async def _send(self) -> None:
        while True:
            for payload in self._payloads(await self._outbox.take()):
                try:
                    await self._sender.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))
                except Exception:  # noqa: BLE001 - a lost event is recovered by a reconnect
                    log.exception("chat: relaying events to the other server processes failed")

    def _payloads(self, events: list[bytes]) -> list[str]:
        """`events` ("<unit> <event>") in order, as few NOTIFY payloads as fit: the origin,
        then the events with a separator between them."""
        payloads: list[str] = []
        batch: list[bytes] = []
        size = len(self.origin)
        for event in events:
            if batch and size + 1 + len(event) > NOTIFY_BYTES:
                payloads.append(f"{self.origin} {_SEPARATOR.join(batch).decode()}")
                batch, size = [], len(self.origin)
            batch.append(event)
            size += 1 + len(event)
        if batch:
            payloads.append(f"{self.origin} {_SEPARATOR.join(batch).decode()}")
        return payloads

    async def _listen(self) -> None:
        async for notify in self._listener.notifies():
            origin, events = notify.payload.split(" ", 1)
            if origin != self.origin:
                for event in events.split(_SEPARATOR.decode()):
                    unit, text = event.split(" ", 1)
                    self.bus.deliver(unit, text.encode())

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        for connection in (getattr(self, "_listener", None), getattr(self, "_sender", None)):
            if connection is not None:
                await connection.close()

"""uvicorn's httptools protocol with a deadline on each incoming request.

uvicorn times out idle keep-alive connections but not a request that arrives slowly: a client
sending one header byte every few seconds, or a body one byte a second, would keep its
connection forever. Here every request (request line, headers and body) must arrive whole within
REQUEST_DEADLINE seconds of its first byte, or of the connection's opening for the first
request; the client then gets 408 and the connection is closed. Its head is also bounded.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

REQUEST_DEADLINE = 30.0
MAX_HEAD_BYTES = 64 * 1024

_TIMEOUT_BODY = b'{"error": "the request did not arrive in time"}'
_TIMEOUT_RESPONSE = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
                     b"content-length: %d\r\nconnection: close\r\n\r\n%s"
                     % (len(_TIMEOUT_BODY), _TIMEOUT_BODY))


class HeadTooLarge(Exception):
    """Raised inside the parser; httptools turns it into a parse error, uvicorn answers 400."""


class DeadlineProtocol(HttpToolsProtocol):
    """One connection; the timer runs while a request is being received, never while the
    application works on it or while the connection idles between requests (uvicorn's
    keep-alive timeout covers that)."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._receiving = False
        self._head_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._receiving, self._head_bytes = True, 0
        self._arm()

    def on_url(self, url: bytes) -> None:
        self._count_head(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count_head(len(name) + len(value))
        super().on_header(name, value)

    def on_message_complete(self) -> None:
        self._receiving = False
        self._disarm()
        super().on_message_complete()

    def _count_head(self, size: int) -> None:
        self._head_bytes += size
        if self._head_bytes > MAX_HEAD_BYTES:
            raise HeadTooLarge

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(REQUEST_DEADLINE, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        cycle = self.cycle
        answering = cycle is not None and cycle.response_started and not cycle.response_complete
        if self._receiving and not answering:
            self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()

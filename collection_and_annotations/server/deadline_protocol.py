"""uvicorn's httptools protocol with a deadline on each incoming request.

uvicorn times out idle keep-alive connections but not a request that arrives slowly: a client
sending one header byte every few seconds, or a body one byte a second, would keep its
connection forever. Here every request (request line, headers and body) must arrive whole within
REQUEST_DEADLINE seconds of its first byte, or of the connection's opening for the first
request; the client then gets 408 and the connection is closed. Its request line and headers
are bounded too (httptools sets no limit).
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


class DeadlineProtocol(HttpToolsProtocol):
    """One connection; the timer runs while a request is being received, never while the
    application works on it or while the connection idles between requests (uvicorn's
    keep-alive timeout covers that)."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._receiving = False
        self._head_done = False
        self._head_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if not self._head_done:  # all of `data` was request line and headers
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES and not self.transport.is_closing():
                self.send_400_response("The request line and headers are too large.")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._receiving = True
        self._arm()

    def on_headers_complete(self) -> None:
        self._head_done = True
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._receiving, self._head_done, self._head_bytes = False, False, 0
        self._disarm()
        super().on_message_complete()

    def shutdown(self) -> None:
        """On stop, a request still arriving is dropped (it was not acknowledged, so the client
        retries), rather than held on to until the graceful-stop timeout."""
        if self._receiving and (self.cycle is None or not self.cycle.response_started):
            self.transport.close()
        else:
            super().shutdown()

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

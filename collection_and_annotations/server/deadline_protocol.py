"""uvicorn's httptools protocol with a deadline on each incoming request.

uvicorn times out idle keep-alive connections but not a request that arrives slowly: a client
sending one header byte every few seconds, or a body one byte a second, would keep its
connection forever. Here every request (request line, headers and body) must arrive whole within
REQUEST_DEADLINE seconds of its first byte, or of the connection's opening for the first
request; the client then gets 408 and the connection is closed. Its request line and headers
are bounded too (httptools sets no limit). Both answers, and the 400 of a request that cannot
be parsed, are JSON errors with the security headers of every other response.
"""

from __future__ import annotations

import asyncio
import json

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from collection_and_annotations.server.security import SECURITY_HEADERS

REQUEST_DEADLINE = 30.0
MAX_HEAD_BYTES = 64 * 1024


def error_response(status: str, message: str) -> bytes:
    """A whole HTTP/1.1 error response that closes the connection, as the app's errors read."""
    body = json.dumps({"error": message}).encode()
    headers = "".join(f"{name}: {value}\r\n" for name, value in SECURITY_HEADERS.items())
    return (f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: "
            f"{len(body)}\r\nconnection: close\r\n{headers}\r\n").encode() + body


_TIMEOUT_RESPONSE = error_response("408 Request Timeout", "the request did not arrive in time")


class DeadlineProtocol(HttpToolsProtocol):
    """One connection; the timer runs while a request is being received, never while the
    application works on it or while the connection idles between requests (uvicorn's
    keep-alive timeout covers that)."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._receiving = False
        self._head_done = False
        self._head_bytes = 0  # of the head arriving (request line and headers)
        self._head_tail = b""  # its last 3 bytes: a blank line may span two reads

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """The head is measured before it is parsed, up to the blank line that ends it, so a
        head too large is never handed on, and body bytes never count. (A pipelined head that
        begins in the read ending the request before it is not measured: at most one read.)"""
        if not (self._receiving and self._head_done):  # a head arrives (or the next begins)
            seen = self._head_tail + data
            end = seen.find(b"\r\n\r\n")
            self._head_bytes += len(data) if end < 0 else end + 4 - len(self._head_tail)
            self._head_tail = seen[-3:]
            if self._head_bytes > MAX_HEAD_BYTES:
                self.send_400_response("the request line and headers are larger than "
                                       f"{MAX_HEAD_BYTES} bytes")
                return
        super().data_received(data)

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request it cannot parse, and ours to a head too large."""
        if not self.transport.is_closing():
            if not self._earlier_answer_pending():
                self.transport.write(error_response("400 Bad Request", msg))
            self.transport.close()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._receiving, self._head_done = True, False
        self._arm()

    def on_headers_complete(self) -> None:
        self._head_done = True
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._receiving, self._head_bytes, self._head_tail = False, 0, b""
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
        if self._receiving and not answering and not self._earlier_answer_pending():
            self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()

    def _earlier_answer_pending(self) -> bool:
        """Whether a request sent before the one arriving (pipelined) is still being
        answered: an error written now would read as its answer, maybe for stored work, so
        the connection is closed without one."""
        if self.pipeline:
            return True
        cycle, arriving_has_cycle = self.cycle, self._receiving and self._head_done
        return cycle is not None and not cycle.response_complete and not arriving_has_cycle

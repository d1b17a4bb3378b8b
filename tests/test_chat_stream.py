"""An event stream on its own: queued events in one write, a ping after silence, and a fresh
read once the worker's reply time has run out."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from helpers import run_coroutine

from collection_and_annotations.engine.work import WorkRefused
from collection_and_annotations.server.chat import stream as stream_module
from collection_and_annotations.server.chat.bus import Mailbox, sse
from collection_and_annotations.server.chat.stream import END, PING, TIMED_OUT, EventStream
from collection_and_annotations.storage.models import iso_utc, utcnow


def _state(respond_by: str | None = None) -> dict[str, Any]:
    return {"current": 0, "conversations": [{"respond_by": respond_by}]}


async def _stream(state: dict[str, Any], events: list[bytes], end_after: float | None = None,
                  read: Any = None) -> list[bytes]:
    mailbox = Mailbox()
    for event in events:
        mailbox.put(event)
    if end_after is not None:
        asyncio.get_running_loop().call_later(end_after, mailbox.put, END)

    async def chunks() -> list[bytes]:
        return [chunk async for chunk in EventStream(mailbox, read, 600).events(state)]

    return await asyncio.wait_for(chunks(), 10)



def test_events_that_wait_together_go_out_in_one_write():
    pieces = [sse("piece", {"position": 0, "index": 1, "text": t}) for t in ("a", "b", "c")]
    writes = run_coroutine(_stream(_state(), [*pieces, END]))
    assert writes == [sse("state", _state()), b"".join(pieces)]


def test_a_silent_stream_pings(monkeypatch):
    monkeypatch.setattr(stream_module, "PING_SECONDS", 0.1)
    writes = run_coroutine(_stream(_state(), [], end_after=0.7))
    assert writes[1:] == [PING]  # one ping: the stream wakes at most every half second


def test_a_passed_reply_time_reads_the_chat_again_and_ends_when_the_unit_went_back():
    reads = []

    async def read() -> dict[str, Any]:
        reads.append(1)
        raise WorkRefused("the unit went back to the pool", 409)

    due = iso_utc(utcnow() + timedelta(seconds=0.1))
    writes = run_coroutine(_stream(_state(due), [], read=read))
    assert reads == [1]
    assert writes[-1] == sse("error", {"position": 0, "message": TIMED_OUT, "retry": False})

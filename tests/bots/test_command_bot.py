"""A command bot: a real subprocess speaking JSON lines, shared by all chats, multiplexed by
request id; crashes, hangs and garbage fail only the requests they touch, then it restarts."""

from __future__ import annotations

import asyncio
import logging
import sys
import time

import pytest

from collection_and_annotations.bots import BotUnavailable, build_bots

from .conftest import reply, write_opts

pytestmark = pytest.mark.anyio

SCRIPT = """\
import json, os, sys, threading, time

lock = threading.Lock()
print("bot script started", file=sys.stderr, flush=True)


def send(message):
    with lock:
        sys.stdout.write(json.dumps(message) + "\\n")
        sys.stdout.flush()


def handle(request):
    rid, text = request["id"], request["history"][-1]["text"]
    if text == "crash":
        send({"id": rid, "piece": "partial "})
        time.sleep(0.1)
        os._exit(3)
    if text == "hang":
        time.sleep(60)
    if text == "garbage":
        with lock:
            print("this is not JSON", flush=True)
        return
    if text == "whole":
        return send({"id": rid, "text": "all at once"})
    if text == "error":
        return send({"id": rid, "error": "model exploded"})
    words = f"{request['session']} pid {os.getpid()} turns {len(request['history'])}".split()
    for word in words:
        send({"id": rid, "piece": word + " "})
        time.sleep(0.05)
    send({"id": rid, "done": True})


for line in sys.stdin:
    message = json.loads(line)
    if message.get("type") == "end":
        with open("ended.txt", "a") as ended:
            ended.write(message["session"] + "\\n")
        continue
    threading.Thread(target=handle, args=(message,), daemon=True).start()
"""


@pytest.fixture
async def bot(tmp_path, context):
    (tmp_path / "bot.py").write_text(SCRIPT)
    _, specs = write_opts(tmp_path, f"""\
        scripted:
          type: command
          command: ["{sys.executable}", "bot.py"]
          timeout: 1
        """)
    built = build_bots(specs, ["scripted"], context)["scripted"]
    yield built
    await built.aclose()


def _pid(pieces: list[str]) -> str:
    return "".join(pieces).split()[2]


async def test_two_sessions_at_once_share_one_process(bot, tmp_path):
    events: list[tuple[str, str]] = []

    async def chat(session_id: str) -> str:
        pieces = []
        async for piece in bot.session(session_id).reply(_history("hi")):
            events.append((session_id, "piece"))
            pieces.append(piece)
        events.append((session_id, "done"))
        return "".join(pieces)

    first, second = await asyncio.gather(chat("s1"), chat("s2"))
    assert first.startswith("s1 pid ") and second.startswith("s2 pid ")
    assert first.split()[2] == second.split()[2]  # one process
    first_done = min(events.index(("s1", "done")), events.index(("s2", "done")))
    assert {session for session, _ in events[:first_done]} == {"s1", "s2"}  # interleaved
    assert bot.settings() == {"type": "command", "command": [sys.executable, "bot.py"]}
    session = bot.session("s3")
    assert "".join(await reply(session, "hi", "s3 ...", "again")).endswith("turns 3 ")
    assert await reply(session, "whole") == ["all at once"]
    await session.close()
    ended = tmp_path / "ended.txt"
    deadline = time.monotonic() + 5
    # the script opens the file, then writes its line: wait for the line, not the file
    while not (ended.exists() and ended.read_text()) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert ended.read_text() == "s3\n"


async def test_crash_mid_reply_then_restart(bot, caplog):
    before = _pid(await reply(bot.session("a"), "hi"))
    pieces = []
    with caplog.at_level(logging.INFO), pytest.raises(BotUnavailable):
        async for piece in bot.session("b").reply(_history("crash")):
            pieces.append(piece)
    assert pieces == ["partial "]
    after = _pid(await reply(bot.session("a"), "hi"))
    assert after != before
    assert "bot script started" in caplog.text  # the child's stderr goes to the log


async def test_malformed_line_fails_its_request_at_once(bot):
    started = time.monotonic()
    with pytest.raises(BotUnavailable):
        await reply(bot.session("a"), "garbage")
    assert time.monotonic() - started < 0.9  # not the 1 s timeout
    with pytest.raises(BotUnavailable):
        await reply(bot.session("a"), "error")
    assert "".join(await reply(bot.session("a"), "hi")).startswith("a pid")


async def test_hang_hits_the_timeout_and_the_process_is_replaced(bot):
    before = _pid(await reply(bot.session("a"), "hi"))
    started = time.monotonic()
    with pytest.raises(BotUnavailable, match="too long"):
        await reply(bot.session("b"), "hang")
    assert 0.9 < time.monotonic() - started < 2
    assert _pid(await reply(bot.session("a"), "hi")) != before


def _history(text: str):
    from collection_and_annotations.bots import Turn

    return [Turn("worker", text)]


async def test_a_reply_given_up_midway_leaves_the_process_serving_quietly(bot, caplog):
    """A chat's early turn cancelled after its first piece: the rest of that reply's lines
    are dropped without a warning, and the same process serves the next request whole."""
    pid = _pid(await reply(bot.session("a"), "hi"))
    with caplog.at_level(logging.WARNING):
        async def first_piece() -> None:
            async for _piece in bot.session("a").reply(_history("hi")):
                await asyncio.sleep(10)  # cancelled here, with the reply half sent

        given_up = asyncio.ensure_future(first_piece())
        await asyncio.sleep(0.1)
        given_up.cancel()
        with pytest.raises(asyncio.CancelledError):
            await given_up
        await asyncio.sleep(0.5)  # the abandoned reply's remaining lines arrive meanwhile
        assert _pid(await reply(bot.session("a"), "hi")) == pid
    assert "no waiting request" not in caplog.text

"""The early bot turn (server/chat/runner.py `ChatRunner.early`) through the real server: the
bot starts on a worker's message while the message is being stored, nothing of its reply is
shown before the message is, and a message that is refused cancels the turn and its bot
session."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from chat_helpers import ChatServer, ScriptedBot, auth, event_stream, write_chat_conf
from helpers import run_coroutine

from collection_and_annotations.bots.base import Turn
from collection_and_annotations.engine.chat import ChatRules, MessageStep, ReplyJob, ReplyStep
from collection_and_annotations.server.chat import writer as writer_module
from collection_and_annotations.server.chat.bus import ChatBus
from collection_and_annotations.server.chat.runner import ChatRunner
from collection_and_annotations.storage.models import utcnow

SLOW_WRITE = 0.6


class TimedBot(ScriptedBot):
    """Notes when each reply began."""

    def __init__(self, nickname: str, delay: float):
        super().__init__(nickname, delay)
        self.began: list[float] = []

    def reply(self, history):
        self.began.append(time.monotonic())
        return super().reply(history)


@pytest.fixture
def slow_messages(monkeypatch):
    """The writer stores a worker's message only after SLOW_WRITE seconds, once armed."""
    armed = threading.Event()
    write_batch = writer_module.write_batch

    def slow(db, steps, rules):
        if armed.is_set() and any(isinstance(step, MessageStep) for step in steps):
            time.sleep(SLOW_WRITE)
        return write_batch(db, steps, rules)

    monkeypatch.setattr(writer_module, "write_batch", slow)
    return armed


@pytest.fixture
def server(tmp_path):
    bots = {"alpha": TimedBot("alpha", delay=0.05)}
    served = ChatServer(tmp_path, write_chat_conf(tmp_path, "alpha:1", ["alpha"]), bots)
    yield served, bots["alpha"]
    served.stop()


def _opened(served: ChatServer, stream, unit: str, token: str) -> None:
    stream.next("state")
    assert served.client.post(f"/api/chat/{unit}/start", json={},
                              headers=auth(token)).status_code == 200
    while stream.next("message")[1]["role"] != "bot":
        pass


def test_the_bot_works_while_the_message_is_stored_and_shows_after_it(server, slow_messages):
    served, bot = server
    unit, token = served.claim("w1")
    with event_stream(served.base, unit, token) as stream:
        _opened(served, stream, unit, token)
        slow_messages.set()
        sent_at = time.monotonic()
        sent = served.client.post(f"/api/chat/{unit}/messages", headers=auth(token),
                                  json={"text": "hello", "client_message_id": "m1"})
        stored_at = time.monotonic()
        assert sent.status_code == 202, sent.text
        # The bot began on the message long before its write was done ...
        assert bot.began[-1] - sent_at < SLOW_WRITE / 2 < stored_at - sent_at
        # ... and the page saw nothing of the reply before the message itself.
        events = [stream.next("message", "typing", "piece")]
        while not (events[-1][0] == "message" and events[-1][1]["role"] == "bot"):
            events.append(stream.next("message", "typing", "piece"))
    assert events[0] == ("message", {**events[0][1], "role": "worker", "text": "hello"})
    assert events[1] == ("typing", {"position": 0, "index": 3})
    assert {event for event, _ in events[2:-1]} == {"piece"}
    assert events[-1][1]["text"] == "alpha heard: hello "
    assert bot.seen[-1][-1].text == "hello" and len(bot.seen[-1]) == 3


def test_a_refused_message_cancels_the_early_turn_and_its_session(server):
    served, bot = server
    unit, token = served.claim("w1")
    with event_stream(served.base, unit, token) as stream:
        _opened(served, stream, unit, token)
        sessions = bot.sessions
        # Refused when stored (this chat takes no labels), after the bot began on it.
        refused = served.client.post(f"/api/chat/{unit}/messages", headers=auth(token),
                                     json={"text": "not this one", "label": "yes"})
        assert refused.status_code == 400, refused.text
        assert bot.seen[-1][-1].text == "not this one"  # the early turn did begin
        sent = served.client.post(f"/api/chat/{unit}/messages", headers=auth(token),
                                  json={"text": "this one"})
        assert sent.status_code == 202, sent.text
        worker = stream.next("message", "typing", "piece")
        assert worker[0] == "message" and worker[1]["text"] == "this one"
        assert stream.next("message", "typing", "piece") == (
            "typing", {"position": 0, "index": 3})
        while (event := stream.next("message"))[1]["role"] != "bot":
            pass
    assert event[1]["text"] == "alpha heard: this one "
    # A new session for the turn after the refused one, with the stored transcript only.
    assert bot.sessions == sessions + 1
    assert [turn.text for turn in bot.seen[-1]] == ["Hi!", "alpha heard: Hi! ", "this one"]


def test_an_early_turn_for_a_chat_that_moved_on_elsewhere_gives_way_to_the_stored_one():
    """This process's memory of the chat is stale (another server process answered the last
    message): the stored turn differs, so the early one is cancelled unseen, its session
    dropped, and the stored turn runs with a new session and the stored history."""
    bot = TimedBot("alpha", delay=0.01)
    stored_replies: list[ReplyStep] = []

    async def write(step: ReplyStep) -> dict:
        stored_replies.append(step)
        return {"role": "bot", "index": step.job.index, "text": step.text}

    async def scenario() -> tuple[list[bytes], int, int]:
        bus = ChatBus()
        runner = ChatRunner(None, {"alpha": bot}, ChatRules(num_turns=5, max_resp_time=60),
                            bus, None, write, None)
        hi = (Turn("worker", "Hi!"),)
        last = ReplyJob(1, "u1", 7, 0, 0, "alpha", None, 1, hi, utcnow())
        runner.answered["u1"] = (last, "alpha heard: Hi! ")  # stale: two turns behind
        runner.sessions[7] = bot.session("7")
        mailbox = bus.subscribe("u1")
        early = runner.early("u1", "third")
        await asyncio.sleep(0.05)  # the bot is answering, unseen
        assert mailbox.events == []
        history = (*hi, Turn("bot", "b1"), Turn("worker", "second"), Turn("bot", "b2"),
                   Turn("worker", "third"))
        stored = ReplyJob(1, "u1", 7, 0, 0, "alpha", None, 5, history, utcnow())
        assert early.settle(stored) is False
        runner.run(stored)
        while not stored_replies:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        return list(mailbox.events), bot.sessions, len(runner.sessions)

    sessions_before = bot.sessions
    events, sessions, kept = run_coroutine(scenario())
    [reply] = stored_replies
    assert reply.job.index == 5 and reply.text == "alpha heard: third "
    assert [turn.text for turn in bot.seen[-1]] == ["Hi!", "b1", "second", "b2", "third"]
    assert bot.sessions == sessions_before + 2 and kept == 1  # the stale one dropped
    assert all(b'"index": 3' not in event and b'"index":3' not in event for event in events)
    assert any(b"typing" in event for event in events)

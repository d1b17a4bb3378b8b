"""A bot cannot hold a chat or the server hostage: every kind of bot gets a total reply time
and a maximum reply size (model_opts.yaml), a reply over either is cut and the worker offered
Try again, replies that are not text are a retryable bot error, and Ctrl-C stops the server
within seconds whatever a bot is doing. Through the chat API, of `welcome.py` for Ctrl-C."""

from __future__ import annotations

import contextlib
import queue
import signal
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from bots.fake_openai import FakeOpenAI, Served
from chat_helpers import ChatServer, EventStream, auth, write_chat_conf
from helpers import Running, free_port, http_client

STOP_SECONDS = 8  # Ctrl-C to exit, whatever the bot does

# Python agents misbehave on their first reply in the server process, then answer.
AGENT = """\
import itertools
import time

REPLIES = itertools.count()


class MisbehaveAgent:
    def __init__(self, opt):
        self.how = opt["how"]

    def observe(self, message):
        self.heard = message["text"]

    def act(self):
        if next(REPLIES) == 0:
            if self.how == "hang":
                time.sleep(3600)
            if self.how == "long":
                return {"text": "word " * 200_000}
            if self.how == "object":
                return {"text": {"not": "text"}}
        return {"text": "agent heard: " + self.heard}
"""
STREAMER = """\
import itertools

REPLIES = itertools.count()


class StreamerAgent:
    def __init__(self, opt):
        pass

    def observe(self, message):
        self.heard = message["text"]

    def act(self):
        return {"text": "unused"}

    def act_stream(self):
        if next(REPLIES) == 0:
            while True:
                yield "more "
        yield "streamer heard: " + self.heard
"""
# Command bots: the first request misbehaves, then the script answers.
COMMAND = """\
import json, sys, time

how = sys.argv[1]
first = True
for line in sys.stdin:
    request = json.loads(line)
    if request.get("type") == "end":
        continue
    rid = request["id"]
    if first and how == "long":
        for _ in range(100_000):
            print(json.dumps({"id": rid, "piece": "more "}), flush=True)
    elif first and how == "slow":
        for _ in range(20):  # a line now and then for 2 s: never silent for its `timeout`
            print(json.dumps({"id": rid, "piece": ""}), flush=True)
            time.sleep(0.1)
    elif first and how == "number":
        print(json.dumps({"id": rid, "piece": 5}), flush=True)
    print(json.dumps({"id": rid, "text": "command heard: " + request["history"][-1]["text"]}),
          flush=True)
    first = False
"""


@dataclass
class ChatTask:
    """A one-bot chat task served by `welcome.py` (`server`) or in this process."""

    base: str
    stop_serving: Callable[[], None]
    server: Running | None = None

    def open_chat(self, worker: str = "w1") -> tuple[str, str, EventStream]:
        """A claimed chat unit, its event stream (past the first state) and the chat started:
        the bot is answering the opener."""
        with http_client(base_url=self.base, timeout=20) as client:
            claimed = client.post("/api/claim", json={"worker_id": worker, "assignment_id": "1"})
            assert claimed.status_code == 200, claimed.text
            unit, token = claimed.json()["unit_id"], claimed.json()["token"]
            stream = EventStream(self.base, unit, token)
            stream.next("state")
            assert client.post(f"/api/chat/{unit}/start", headers=auth(token)).status_code == 200
        return unit, token, stream

    def post(self, path: str, token: str, body: dict | None = None) -> httpx.Response:
        with http_client(base_url=self.base, timeout=20) as client:
            return client.post(path, json=body or {}, headers=auth(token))

    def stop(self) -> float:
        """Stop serving (Ctrl-C for `welcome.py`); the seconds it took."""
        started = time.monotonic()
        self.stop_serving()
        return time.monotonic() - started


def _interrupt(server: Running) -> None:
    """Ctrl-C, and a kill if the process is still there long after."""
    server.process.send_signal(signal.SIGINT)
    try:
        server.process.wait(STOP_SECONDS + 20)
    finally:
        if server.process.poll() is None:
            server.process.kill()


@contextmanager
def chat_task(tmp_path: Path, opts: str, needed: str = "bot:3", *overrides: str,
              process: bool = False) -> Iterator[ChatTask]:
    """The chats `needed` names (a conversations_needed_string) with the bots of `opts`
    (model_opts.yaml text), with the agents and scripts above where `opts` finds them
    (`parlai_internal` beside the task folder, `bot.py` beside model_opts.yaml); served by
    `welcome.py` when the test is about the `process`, else in this process (what a bot's
    limits do is the same)."""
    for name, source in (("misbehave", AGENT), ("streamer", STREAMER)):
        folder = tmp_path / "tasks" / "parlai_internal" / "agents" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.py").write_text(source)
    conf_dir = tmp_path / "tasks" / "task_config"
    conf_dir.mkdir(parents=True, exist_ok=True)
    (conf_dir / "bot.py").write_text(COMMAND)
    conf = write_chat_conf(conf_dir, needed, textwrap.dedent(opts))
    if not process:
        served = ChatServer(tmp_path, conf, None, overrides=(f"task_dir={conf_dir}", *overrides))
        stopped = threading.Event()

        def stop() -> None:
            if not stopped.is_set():
                stopped.set()
                served.stop()

        try:
            yield ChatTask(served.base, stop)
        finally:
            stop()
        return
    port = free_port()
    server = Running(tmp_path, port, str(conf), f"task_dir={conf_dir}", *overrides)
    task = ChatTask(f"http://127.0.0.1:{port}", lambda: _interrupt(server), server)
    try:
        server.wait_for("press Ctrl-C to stop", timeout=60)
        yield task
    finally:
        if server.process.poll() is None:
            task.stop()


def assert_no_traceback(capfd: pytest.CaptureFixture, caplog: pytest.LogCaptureFixture) -> None:
    """The server in this process printed no traceback: none on stderr (a thread's), none
    logged (an error the server logs with its traceback)."""
    assert "Traceback" not in capfd.readouterr().err
    assert [record.getMessage() for record in caplog.records if record.exc_info] == []


def bot_answer(stream: EventStream, timeout: float = 20) -> tuple[str, dict]:
    """The next bot message or error event."""
    while True:
        event, data = stream.next("message", "error", timeout=timeout)
        if event == "error" or data["role"] == "bot":
            return event, data


@pytest.fixture
def fake_openai():
    app = FakeOpenAI(pieces=["openai ", "heard: ", "Hi!"])  # echoing the opener, as the others
    served = Served(app)
    yield app
    served.stop()


def _openai(fake: FakeOpenAI, limits: str) -> str:
    return f"bot: {{type: openai, base_url: '{fake.base_url}', model: m, timeout: 5, {limits}}}\n"


def _command(how: str, limits: str) -> str:
    return f"bot: {{type: command, command: ['{sys.executable}', bot.py, {how}], {limits}}}\n"


def _agent(how: str, limits: str) -> str:
    return f"bot: {{opt: '--model internal:misbehave --how {how}', {limits}}}\n"


TOO_LONG = "max_reply_chars: 300"
TOO_SLOW = "reply_timeout: 1.5"
LONG, SLOW, MALFORMED = "reply was too long", "took too long", "could not answer right now"
CUT = {  # case -> model_opts.yaml, what the worker is told, whether the retry is answered
    "demo-long": ("bot: {type: demo, name: counter, delay: 0, max_reply_chars: 20}\n", LONG,
                  False),
    "demo-slow": ("bot: {type: demo, name: parrot, think: 30, reply_timeout: 1}\n", SLOW,
                  False),
    "openai-long": (lambda fake: _openai(fake, TOO_LONG), LONG, True),
    "openai-slow": (lambda fake: _openai(fake, TOO_SLOW), SLOW, True),
    "openai-no-newline": (lambda fake: _openai(fake, ""), MALFORMED, True),
    "command-long": (_command("long", TOO_LONG), LONG, True),
    "command-slow": (_command("slow", TOO_SLOW), SLOW, True),
    "agent-long": (_agent("long", TOO_LONG), LONG, True),
    "agent-slow": (_agent("hang", TOO_SLOW), SLOW, False),  # its thread still sleeps
    "agent-stream-long": ("bot: {opt: '--model internal:streamer', max_reply_chars: 300}\n",
                          LONG, True),
}
FAKE_MODES = {"openai-long": "forever", "openai-slow": "idle", "openai-no-newline": "no_newline"}


@pytest.mark.parametrize("case", CUT)
def test_a_reply_over_its_limit_is_cut_and_the_worker_may_try_again(tmp_path, case,
                                                                     fake_openai):
    opts, told, answers_retry = CUT[case]
    if callable(opts):
        opts = opts(fake_openai)
        fake_openai.modes = [FAKE_MODES[case]]
    with chat_task(tmp_path, opts) as task:
        unit, token, stream = task.open_chat()
        started = time.monotonic()
        event, error = bot_answer(stream)
        assert event == "error" and error["retry"] is True, error
        assert told in error["message"]
        assert time.monotonic() - started < 10
        assert task.post(f"/api/chat/{unit}/retry", token).status_code == 202
        if answers_retry:
            event, message = bot_answer(stream)
            assert event == "message" and "heard: Hi!" in message["text"], message
        # The worker is never stuck: after the retry's outcome the chat answers again.
        with http_client(base_url=task.base, timeout=20) as client:
            chat = client.get(f"/api/units/{unit}", headers=auth(token)).json()["chat"]
        (conversation,) = chat["conversations"]
        assert conversation["status"] == "active"
        assert [m["role"] for m in conversation["messages"]] == \
            (["worker", "bot"] if answers_retry else ["worker"])
        stream.close()
        assert task.stop() < STOP_SECONDS


BAD_TYPES = {
    "openai-object": [{"choices": [{"delta": {"content": {"text": "hi"}}}]}],
    "openai-number": [{"choices": [{"delta": {"content": 42}}]}],
    "openai-list-delta": [{"choices": [{"delta": ["hi"]}]}],
    "openai-string-event": ["just a string"],
}


@pytest.mark.parametrize("case", [*BAD_TYPES, "command-number", "agent-object"])
def test_a_reply_that_is_not_text_is_a_retryable_bot_error(tmp_path, case, fake_openai,
                                                             capfd, caplog):
    if case in BAD_TYPES:
        fake_openai.modes, fake_openai.events = ["events"], BAD_TYPES[case]
        opts = _openai(fake_openai, "")
    else:
        opts = _command("number", "") if case == "command-number" else _agent("object", "")
    with chat_task(tmp_path, opts) as task:
        unit, token, stream = task.open_chat()
        event, error = bot_answer(stream)
        assert event == "error" and error["retry"] is True, error
        assert task.post(f"/api/chat/{unit}/retry", token).status_code == 202
        event, message = bot_answer(stream)
        assert event == "message" and "heard: Hi!" in message["text"], message
        stream.close()
        assert_no_traceback(capfd, caplog)


HOSTAGE = {  # a bot busy forever with its chat's opener when Ctrl-C comes
    "agent_hangs_in_act": _agent("hang", "reply_timeout: 600"),
    "agent_streams_forever": "bot: {opt: '--model internal:streamer', "
                             "max_reply_chars: 100000000, reply_timeout: 600}\n",
    "openai_streams_forever": "forever",
    "openai_line_without_newline": "no_newline",
    "command_streams_forever": _command("long", "max_reply_chars: 100000000, "
                                                "reply_timeout: 600"),
}


@pytest.mark.parametrize("processes", [1, pytest.param(2, marks=pytest.mark.postgres)])
def test_ctrl_c_stops_the_server_within_seconds_whatever_its_bots_do(tmp_path, processes,
                                                                      fake_openai, request):
    """Every kind of hostage above at once, each in a chat of its own: the bots that stream
    are streaming, the others well into a reply that shows nothing, when Ctrl-C comes. With
    two server processes, they stop as the launcher does."""
    overrides = [] if processes == 1 else [
        f"database_url={request.getfixturevalue('postgres_url')}",
        "mephisto.architect.server_processes=2"]
    fake_openai.modes = [HOSTAGE[name] for name in HOSTAGE if name.startswith("openai")]
    limits = "max_reply_chars: 100000000, reply_timeout: 600"
    opts = "".join(
        (_openai(fake_openai, limits) if name.startswith("openai") else how)
        .replace("bot:", f"{name}:", 1) for name, how in HOSTAGE.items())
    needed = ",".join(f"{name}:1" for name in HOSTAGE)
    streaming = sum(name.endswith("streams_forever") for name in HOSTAGE)
    with chat_task(tmp_path, opts, needed, *overrides, process=True) as task:
        streams = [task.open_chat(f"w{i}")[2] for i in range(len(HOSTAGE))]
        for stream in streams:
            stream.next("typing")
        thinking = time.monotonic()
        waiting, deadline = list(streams), time.monotonic() + 20
        while len(streams) - len(waiting) < streaming:
            assert time.monotonic() < deadline, "the streaming bots did not stream"
            for stream in list(waiting):
                with contextlib.suppress(queue.Empty):
                    stream.next("piece", timeout=0.05)
                    waiting.remove(stream)
        time.sleep(max(0.0, thinking + 1.5 - time.monotonic()))  # well into the silent replies
        assert fake_openai.modes == [], "an OpenAI bot's endless reply was not asked for"
        for stream in streams:
            stream.close()
        assert task.stop() < STOP_SECONDS, "".join(task.server.lines)
        assert task.server.process.returncode == 0


SEQUENTIAL = """\
import json, os, sys, threading, time

cancelled = set()
requests = []
wake = threading.Condition()


def read():
    for line in sys.stdin:
        message = json.loads(line)
        with wake:
            if message.get("type") == "cancel":
                cancelled.add(message["id"])
                with open("cancelled.txt", "a") as out:
                    out.write(message["id"] + "\\n")
            elif message.get("type") != "end":
                requests.append(message)
            wake.notify()
    os._exit(0)  # stdin closed: the server stopped


if sys.argv[1] == "hello":
    print(json.dumps({"type": "hello", "accepts": ["cancel"]}), flush=True)
threading.Thread(target=read, daemon=True).start()
while True:  # one request at a time
    with wake:
        while not requests:
            wake.wait()
        request = requests.pop(0)
    rid = request["id"]
    with open("handled.txt", "a") as out:
        out.write(rid + "\\n")
    text = request["history"][-1]["text"]
    for _ in range(int(float(sys.argv[2]) * 10)):  # thinking, and listening for a cancel
        time.sleep(0.1)
        if rid in cancelled:
            break
    if rid not in cancelled:
        print(json.dumps({"id": rid, "text": "sequential heard: " + text}), flush=True)
"""


def _sequential(tmp_path: Path, *args: str, limits: str = "") -> str:
    (tmp_path / "sequential.py").write_text(SEQUENTIAL)
    argv = ", ".join(f"'{arg}'" for arg in [sys.executable, tmp_path / "sequential.py", *args])
    return f"bot: {{type: command, command: [{argv}], cwd: {tmp_path}, {limits}}}\n"


def test_a_command_bot_is_told_to_drop_a_request_the_platform_gave_up(tmp_path):
    opts = _sequential(tmp_path, "hello", "3", limits="reply_timeout: 1")
    with chat_task(tmp_path, opts) as task:
        unit, token, stream = task.open_chat()
        event, error = bot_answer(stream)
        assert event == "error" and error["retry"] is True
        deadline = time.monotonic() + 5
        while not (tmp_path / "cancelled.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        handled = (tmp_path / "handled.txt").read_text().split()
        assert (tmp_path / "cancelled.txt").read_text().split() == handled[:1]
        stream.close()


def test_a_command_bot_that_says_nothing_of_cancels_gets_none(tmp_path, capfd, caplog):
    """Backwards compatible: a script that did not say it takes cancels never sees one."""
    opts = _sequential(tmp_path, "no-hello", "3", limits="reply_timeout: 1")
    with chat_task(tmp_path, opts) as task:
        _, _, stream = task.open_chat()
        event, _ = bot_answer(stream)
        assert event == "error"
        time.sleep(0.5)
        assert not (tmp_path / "cancelled.txt").exists()
        stream.close()
        assert_no_traceback(capfd, caplog)


def test_a_one_at_a_time_command_bot_serves_ten_chats_at_once_without_failing(tmp_path):
    """Ten chats start at once against a script that answers one request at a time, each in
    0.3 s, with a `timeout` of 1 s between lines: given one request at a time, the others
    wait in the platform and every chat gets its answer."""
    opts = _sequential(tmp_path, "hello", "0.3",
                       limits="timeout: 1, concurrent_requests: 1, reply_timeout: 30")
    with chat_task(tmp_path, opts, "bot:10") as task:
        outcomes: dict[str, str] = {}

        def chat(worker: str) -> None:
            _, _, stream = task.open_chat(worker)
            try:
                outcomes[worker] = bot_answer(stream, timeout=30)[0]
            finally:
                stream.close()

        threads = [threading.Thread(target=chat, args=(f"w{n}",)) for n in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert outcomes == {f"w{n}": "message" for n in range(10)}

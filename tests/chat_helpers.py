"""Live chat in tests: scripted bots, a served chat task in this process, and an SSE reader."""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from helpers import free_port, http_client, launch_database

from collection_and_annotations.blueprints import build_blueprint
from collection_and_annotations.bots.base import BotUnavailable, Turn
from collection_and_annotations.bots.limits import ReplyLimits
from collection_and_annotations.cli.run import open_task
from collection_and_annotations.config.loader import load_run_config
from collection_and_annotations.server.http import HttpService
from collection_and_annotations.storage.database import Database


@dataclass
class ScriptedBot:
    """Answers "<nickname> heard: <last message>" in word pieces. `failures` scripts the next
    turns: "unavailable" (retryable), "crash" (an exception), or None (answer)."""

    nickname: str
    delay: float = 0.005
    failures: list[str | None] = field(default_factory=list)
    seen: list[list[Turn]] = field(default_factory=list)
    sessions: int = 0
    closed: int = 0  # sessions closed
    limits: ReplyLimits = field(default_factory=ReplyLimits)

    def settings(self) -> dict[str, Any]:
        return {"kind": "scripted", "delay": self.delay}

    def session(self, conversation_id: str) -> ScriptedBot:
        self.sessions += 1
        return self

    async def reply(self, history: list[Turn]) -> AsyncIterator[str]:
        self.seen.append(list(history))
        failure = self.failures.pop(0) if self.failures else None
        if failure == "unavailable":
            raise BotUnavailable("Your partner is not available right now. Try again.")
        if failure == "crash":
            raise RuntimeError("the agent broke")
        for word in f"{self.nickname} heard: {history[-1].text}".split(" "):
            await asyncio.sleep(self.delay)
            yield word + " "

    async def close(self) -> None:
        self.closed += 1

    async def check(self) -> str | None:
        return None

    async def aclose(self) -> None:
        pass


def write_model_opts(folder: Path, bots: list[str] | str) -> Path:
    """`folder`'s model_opts.yaml: scripted bots by nickname (for ChatServer), or the text of
    a model_opts.yaml as given."""
    folder.mkdir(parents=True, exist_ok=True)
    opts = folder / "model_opts.yaml"
    opts.write_text(bots if isinstance(bots, str)
                    else "".join(f"{bot}: --model {bot}\n" for bot in bots))
    return opts


def write_chat_conf(folder: Path, needed: str, bots: list[str] | str, *, num_bots: int = 1,
                    num_turns: int = 2, max_resp_time: int = 600, extra: str = "") -> Path:
    """A chat conf in `folder`; `bots` are nicknames of scripted bots (given to ChatServer), or
    the text of a model_opts.yaml for a server started with welcome.py."""
    opts = write_model_opts(folder, bots)
    conf = folder / "chat.yaml"
    conf.write_text(
        "#@package _global_\n"
        "defaults:\n  - /mephisto/blueprint: dialogue_collection\n"
        f"mephisto:\n  architect:\n    hostname: 127.0.0.1\n    port: {free_port()}\n"
        f"  blueprint:\n    model_opt_path: {opts}\n"
        f"    conversations_needed_string: \"{needed}\"\n    num_bots: {num_bots}\n"
        f"    num_turns: {num_turns}\n    max_resp_time: {max_resp_time}\n{extra}"
        "  task:\n    task_name: chat\n    task_title: Chat\n"
        "    assignment_duration_in_seconds: 600\n"
    )
    return conf


class ChatServer:
    """A chat task served in this process (one server process) with scripted bots, or with
    the bots of its model_opts.yaml when `bots` is None."""

    def __init__(self, folder: Path, conf: Path, bots: dict[str, ScriptedBot] | None,
                 database_url: str | None = None, overrides: tuple[str, ...] = ()):
        overrides = (f"data_dir={folder / 'data'}", *overrides)
        if database_url:
            overrides = (*overrides, f"database_url={database_url}")
        cfg = load_run_config(str(conf), list(overrides)).config
        blueprint = build_blueprint(cfg)
        if bots is not None:
            blueprint.make_bots = lambda: bots  # type: ignore[method-assign]
        self.db = Database(cfg.database_url or launch_database(folder / "data"))
        self.served = open_task(cfg, str(conf), self.db, blueprint)
        # port 0: the system's free port, taken at once (a port probed earlier may be gone)
        self.http = HttpService(self.served, "127.0.0.1", 0)
        self.port = self.http.port
        self.base = f"http://127.0.0.1:{self.port}"
        self.client = http_client(base_url=self.base, timeout=10)

    def stop(self) -> None:
        self.client.close()
        self.http.stop()
        self.db.dispose()

    def claim(self, worker: str, assignment: str = "1") -> tuple[str, str]:
        answer = self.client.post("/api/claim", json={"worker_id": worker,
                                                      "assignment_id": assignment})
        assert answer.status_code == 200, answer.text
        return answer.json()["unit_id"], answer.json()["token"]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class EventStream:
    """Reads a chat's event stream in a thread; `next(event)` waits for the next one."""

    def __init__(self, base: str, unit: str, token: str):
        self.events: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()
        self.status: int | None = None
        self._client = http_client(base_url=base, timeout=httpx.Timeout(10, read=60))
        self._thread = threading.Thread(target=self._read, args=(unit, token), daemon=True)
        self._thread.start()

    def _read(self, unit: str, token: str) -> None:
        with contextlib.suppress(httpx.HTTPError), self._client.stream(
                "GET", f"/api/chat/{unit}/events", headers=auth(token)) as reply:
            self.status = reply.status_code
            event = None
            for line in reply.iter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event:
                    self.events.put((event, json.loads(line[6:])))
                    event = None

    def next(self, *wanted: str, timeout: float = 10) -> tuple[str, dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while True:
            event, data = self.events.get(timeout=max(0.01, deadline - time.monotonic()))
            if not wanted or event in wanted:
                return event, data

    def close(self) -> None:
        self._client.close()


@contextlib.contextmanager
def event_stream(base: str, unit: str, token: str) -> Iterator[EventStream]:
    stream = EventStream(base, unit, token)
    try:
        yield stream
    finally:
        stream.close()

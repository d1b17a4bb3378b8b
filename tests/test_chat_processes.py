"""Live chat across processes: quota races against the real server (SQLite with one server
process, PostgreSQL with two, so a chat's stream and its requests land on different processes
and events cross through LISTEN/NOTIFY), the relay itself, and a restart in the middle of a
bot's reply."""

from __future__ import annotations

import asyncio
import signal
import threading
from pathlib import Path

import httpx
import pytest
from chat_helpers import EventStream, auth, write_chat_conf
from helpers import Running, free_port, http_client, run_coroutine
from sqlalchemy import create_engine, func, select

from collection_and_annotations.server.chat.bus import ChatBus, PostgresRelay, sse
from collection_and_annotations.storage.models import Conversation, Message, Unit


def _conf(folder: Path, needed: str, think: float = 0.0, turns: int = 2) -> Path:
    return write_chat_conf(
        folder, needed, f"parrot: {{type: demo, name: parrot, delay: 0.01, think: {think}}}\n",
        num_turns=turns)


def _post(base: str, path: str, token: str, body: dict) -> httpx.Response:
    """Each request on a new connection: with two server processes any of them may answer."""
    with http_client(base_url=base, timeout=20) as client:
        return client.post(path, json=body, headers=auth(token))


def _chat_worker(base: str, name: str, turns: int, outcome: dict) -> None:
    with http_client(base_url=base, timeout=20) as client:
        claimed = client.post("/api/claim", json={"worker_id": name, "assignment_id": "1"})
    if claimed.status_code != 200:
        outcome[name] = claimed.status_code
        return
    unit, token = claimed.json()["unit_id"], claimed.json()["token"]
    stream = EventStream(base, unit, token)
    try:
        stream.next("state")
        assert _post(base, f"/api/chat/{unit}/start", token, {}).status_code == 200
        while stream.next("message", timeout=20)[1]["role"] != "bot":
            pass
        for turn in range(turns):
            assert _post(base, f"/api/chat/{unit}/messages", token,
                         {"text": f"{name} says {turn}"}).status_code == 202
            while stream.next("message", timeout=20)[1]["role"] != "bot":
                pass
        assert _post(base, f"/api/chat/{unit}/end", token, {}).status_code == 200
        outcome[name] = _post(base, f"/api/units/{unit}/submit", token,
                              {"answers": {}}).status_code
    finally:
        stream.close()


@pytest.mark.parametrize("database",
                         ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_concurrent_workers_never_exceed_a_quota_and_every_event_arrives(
        tmp_path, database, request):
    overrides = []
    if database == "postgres":
        url = request.getfixturevalue("postgres_url")
        overrides = [f"database_url={url}", "mephisto.architect.server_processes=2"]
    port = free_port()
    server = Running(tmp_path, port, str(_conf(tmp_path, "parrot:5")),
                     "mephisto.architect.hostname=127.0.0.1", *overrides)
    try:
        server.wait_for("press Ctrl-C to stop", timeout=60)
        base = f"http://127.0.0.1:{port}"
        outcome: dict[str, int] = {}
        threads = [threading.Thread(target=_chat_worker, args=(base, f"w{n}", 2, outcome))
                   for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(90)
        assert sorted(outcome.values()) == [200] * 5 + [409] * 3, outcome
        server.wait_for("all units are completed", timeout=10)
    finally:
        server.process.send_signal(signal.SIGINT)
        server.process.wait(30)
    engine = create_engine(url if database == "postgres"
                           else f"sqlite:///{tmp_path / 'data' / 'cep.sqlite3'}")
    with engine.connect() as connection:
        assert connection.scalar(select(func.count()).select_from(Unit)
                                 .where(Unit.status == "completed")) == 5
        assert connection.scalar(select(func.count()).select_from(Conversation)) == 5
        assert connection.scalar(select(func.count()).select_from(Message)) == 5 * 6
    engine.dispose()


def test_the_relay_carries_events_between_processes_in_order(postgres_url):
    async def scenario() -> list[bytes]:
        here, there = ChatBus(), ChatBus()
        here.relay, there.relay = (PostgresRelay(postgres_url, here),
                                   PostgresRelay(postgres_url, there))
        await here.relay.start()
        await there.relay.start()
        try:
            far, near = there.subscribe("u_7"), here.subscribe("u_7")
            for n in range(20):
                here.publish("u_7", "piece", {"index": 1, "text": f"p{n}"})
            here.publish("u_7", "state", {"big": "x" * 9000})  # over NOTIFY's limit
            received: list[bytes] = []
            while len(received) < 21:
                received += await asyncio.wait_for(far.take(), 5)
            assert len(near.events) == 21  # the publisher's own watchers, once each
            return received
        finally:
            await here.relay.aclose()
            await there.relay.aclose()

    received = run_coroutine(scenario())
    assert received[:20] == [sse("piece", {"index": 1, "text": f"p{n}"}) for n in range(20)]
    assert received[20] == sse("stale", {})  # too big to relay: the stream re-reads the state


def test_a_restart_during_a_reply_resumes_the_chat(tmp_path):
    port = free_port()
    conf = _conf(tmp_path, "parrot:1", think=3.0, turns=1)
    base = f"http://127.0.0.1:{port}"
    server = Running(tmp_path, port, str(conf), "mephisto.architect.hostname=127.0.0.1")
    server.wait_for("press Ctrl-C to stop", timeout=60)
    with http_client(base_url=base, timeout=20) as client:
        claimed = client.post("/api/claim", json={"worker_id": "w", "assignment_id": "1"}).json()
    unit, token = claimed["unit_id"], claimed["token"]
    assert _post(base, f"/api/chat/{unit}/start", token, {}).status_code == 200
    server.process.send_signal(signal.SIGINT)  # mid-reply: the bot thinks for 3 s
    server.process.wait(20)

    again = Running(tmp_path, port, str(conf), "mephisto.architect.hostname=127.0.0.1")
    try:
        again.wait_for("press Ctrl-C to stop", timeout=60)
        assert any("waiting for a bot reply" in line for line in again.lines)
        with http_client(base_url=base, timeout=20) as client:
            resumed = client.post("/api/claim", json={"worker_id": "w", "assignment_id": "1"})
            assert resumed.json()["unit_id"] == unit
            chat = client.get(f"/api/units/{unit}", headers=auth(token)).json()["chat"]
        conversation = chat["conversations"][0]
        assert conversation["messages"][0]["text"] == "Hi!"
        assert conversation["error"]["retry"] is True
        stream = EventStream(base, unit, token)
        try:
            stream.next("state")
            assert _post(base, f"/api/chat/{unit}/retry", token, {}).status_code == 202
            assert stream.next("message", timeout=20)[1]["role"] == "bot"
            assert _post(base, f"/api/chat/{unit}/messages", token,
                         {"text": "back again"}).status_code == 202
            while stream.next("message", timeout=20)[1]["role"] != "bot":
                pass
        finally:
            stream.close()
        assert _post(base, f"/api/chat/{unit}/end", token, {}).status_code == 200
        assert _post(base, f"/api/units/{unit}/submit", token,
                     {"answers": {}}).json()["status"] == "completed"
    finally:
        again.process.send_signal(signal.SIGINT)
        again.process.wait(30)

"""Concurrent messages on one chat (a double click, two tabs, a script) through the real server,
on SQLite and PostgreSQL: one is stored, the others get 409, never 500, and the chat goes on."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
from chat_helpers import ChatServer, ScriptedBot, auth, write_chat_conf
from helpers import http_client
from sqlalchemy import func, select

from collection_and_annotations.storage.models import Message

ROUNDS = 5
AT_ONCE = 24


def _awaiting_worker(server: ChatServer, unit: str, token: str) -> None:
    """Wait (bounded) until the bot answered and the worker may send."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        state = server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
        current = state.json()["conversations"][0]
        if current["respond_by"] is not None:
            return
        time.sleep(0.02)
    raise AssertionError(f"the bot did not answer: {current}")


def test_concurrent_messages_on_one_chat_store_one_and_refuse_the_rest(tmp_path,
                                                                       database_url):
    conf = write_chat_conf(tmp_path, "alpha:1", ["alpha"], num_turns=ROUNDS)
    server = ChatServer(tmp_path, conf, {"alpha": ScriptedBot("alpha", delay=0.1)},
                        database_url)
    clients = [http_client(base_url=server.base, timeout=20) for _ in range(AT_ONCE)]
    try:
        unit, token = server.claim("w1")
        for round_ in range(ROUNDS):
            _awaiting_worker(server, unit, token)

            def send(n: int, round_: int = round_) -> httpx.Response:
                return clients[n].post(f"/api/chat/{unit}/messages", headers=auth(token),
                                       json={"text": f"round {round_} message {n}",
                                             "client_message_id": f"r{round_}m{n}"})

            with ThreadPoolExecutor(AT_ONCE) as pool:
                replies = list(pool.map(send, range(AT_ONCE)))
            statuses = sorted(reply.status_code for reply in replies)
            assert statuses == [202] + [409] * (AT_ONCE - 1), (
                round_, [r.text for r in replies if r.status_code not in (202, 409)])
        _awaiting_worker(server, unit, token)
        with server.db.session() as session:  # the opener, its reply, one message a round
            assert session.scalar(select(func.count()).select_from(Message)) == 2 + 2 * ROUNDS
    finally:
        for client in clients:
            client.close()
        server.stop()


def test_concurrent_retries_ask_the_bot_once(tmp_path, database_url):
    bot = ScriptedBot("alpha", delay=0.1, failures=[None, "unavailable"])
    server = ChatServer(tmp_path, write_chat_conf(tmp_path, "alpha:1", ["alpha"]),
                        {"alpha": bot}, database_url)
    clients = [http_client(base_url=server.base, timeout=20) for _ in range(AT_ONCE)]
    try:
        unit, token = server.claim("w1")
        _awaiting_worker(server, unit, token)
        assert server.client.post(f"/api/chat/{unit}/messages", headers=auth(token),
                                  json={"text": "hello"}).status_code == 202
        deadline = time.monotonic() + 10
        while (server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
               .json()["conversations"][0]["error"] is None):
            assert time.monotonic() < deadline, "the bot's failure never showed"
            time.sleep(0.02)
        asked = len(bot.seen)
        with ThreadPoolExecutor(AT_ONCE) as pool:
            replies = list(pool.map(lambda n: clients[n].post(
                f"/api/chat/{unit}/retry", headers=auth(token), json={}), range(AT_ONCE)))
        assert sorted(r.status_code for r in replies) == [202] + [409] * (AT_ONCE - 1), \
            [r.text for r in replies if r.status_code not in (202, 409)]
        _awaiting_worker(server, unit, token)
        assert len(bot.seen) == asked + 1
        with server.db.session() as session:  # the opener and its reply, hello and its reply
            assert session.scalar(select(func.count()).select_from(Message)) == 4
    finally:
        for client in clients:
            client.close()
        server.stop()

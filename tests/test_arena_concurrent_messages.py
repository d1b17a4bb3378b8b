"""Many battles' messages at once through the real server (on SQLite they share the step
writer's batches): every one is stored on both sides and answered by both bots, none refused;
a message sent twice at once to one battle (a double click) is stored once, both answered
alike."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
from arena_helpers import write_arena_conf
from chat_helpers import ChatServer, ScriptedBot, auth
from helpers import http_client
from sqlalchemy import select

from collection_and_annotations.storage.models import Conversation, Message, Unit

BATTLES = 16
TURNS = 2


def _transcripts(server: ChatServer) -> dict[tuple[str, int], list[tuple[str, str]]]:
    """(unit, side) -> its messages (role, text) in order."""
    found: dict[tuple[str, int], list[tuple[str, str]]] = {}
    with server.db.snapshot() as connection:
        for public_id, position, role, text in connection.execute(
                select(Unit.public_id, Conversation.position, Message.role, Message.text)
                .join(Conversation, Conversation.unit_id == Unit.id)
                .join(Message, Message.conversation_id == Conversation.id)
                .order_by(Unit.public_id, Conversation.position, Message.index)):
            found.setdefault((public_id, position), []).append((role, text))
    return found


def _wait_for_replies(server: ChatServer, expected: int) -> None:
    """Wait (bounded) until `expected` messages are stored."""
    deadline = time.monotonic() + 20
    while sum(map(len, _transcripts(server).values())) < expected:
        assert time.monotonic() < deadline, _transcripts(server)
        time.sleep(0.05)


def test_many_battles_messages_at_once_are_all_stored_and_answered(tmp_path, database_url):
    bots = {name: ScriptedBot(name, delay=0.01) for name in ("alpha", "beta")}
    server = ChatServer(tmp_path, write_arena_conf(tmp_path, ["alpha", "beta"],
                                                   battles_per_pair=BATTLES, num_turns=TURNS),
                        bots, database_url)
    clients = [http_client(base_url=server.base, timeout=20) for _ in range(2 * BATTLES)]
    try:
        battles = [server.claim(f"w{n}") for n in range(BATTLES)]
        for unit, token in battles:
            assert server.client.post(f"/api/chat/{unit}/start", json={},
                                      headers=auth(token)).status_code == 200
        for turn in range(TURNS):
            def send(n: int, turn: int = turn) -> httpx.Response:
                unit, token = battles[n % BATTLES]  # each battle twice: a double click
                return clients[n].post(f"/api/chat/{unit}/messages", headers=auth(token),
                                       json={"text": f"turn {turn} of {n % BATTLES}",
                                             "client_message_id": f"t{turn}n{n % BATTLES}"})

            with ThreadPoolExecutor(2 * BATTLES) as pool:
                answers = list(pool.map(send, range(2 * BATTLES)))
            for n in range(BATTLES):
                pair = [answers[m] for m in (n, n + BATTLES)]
                assert [a.status_code for a in pair] == [202, 202], [a.text for a in pair]
                assert pair[0].json() == pair[1].json() == {
                    "index": 2 * turn, "sent_at": pair[0].json()["sent_at"]}
            _wait_for_replies(server, BATTLES * 2 * 2 * (turn + 1))

        stored = _transcripts(server)
        assert len(stored) == 2 * BATTLES
        for n, (unit, _token) in enumerate(battles):
            for position in (0, 1):
                transcript = stored[(unit, position)]
                assert [role for role, _text in transcript] == ["worker", "bot"] * TURNS
                assert [text for role, text in transcript if role == "worker"] == \
                    [f"turn {turn} of {n}" for turn in range(TURNS)]
                assert all(text.strip().endswith(f"heard: {said}") for (_role, said), (_r, text)
                           in zip(transcript[::2], transcript[1::2], strict=True))
    finally:
        for client in clients:
            client.close()
        server.stop()

"""The dashboard over a chat task (real server, scripted bots): quotas per bot spec, live chats,
chat units in the review queue and a submission's conversations with every message."""

from __future__ import annotations

import pytest
from chat_helpers import ChatServer, ScriptedBot, auth, event_stream, write_chat_conf
from test_chat_flow import _chat_to_the_end

from collection_and_annotations.server.auth import requester_token


@pytest.fixture
def server(tmp_path):
    bots = {"alpha": ScriptedBot("alpha")}
    served = ChatServer(tmp_path, write_chat_conf(tmp_path, "alpha:2", ["alpha"], num_turns=1),
                        bots)
    yield served
    served.stop()


def test_quotas_live_chats_and_conversations(server):
    requester = auth(requester_token(server.served.secret))

    def get(path):
        reply = server.client.get(f"/api/requester/{path}", headers=requester)
        assert reply.status_code == 200, reply.text
        return reply.json()

    done, token = server.claim("w1")
    _chat_to_the_end(server, done, token, 1)
    assert server.client.post(f"/api/units/{done}/submit", headers=auth(token),
                              json={"answers": {}}).status_code == 200
    live, token2 = server.claim("w2")
    with event_stream(server.base, live, token2) as stream:
        stream.next("state")
        server.client.post(f"/api/chat/{live}/start", json={}, headers=auth(token2))
        stream.next("message")  # the bot answered the opener: the chat is on

    shown = get("overview")
    assert shown["quotas"] == [{"bot": "alpha", "needed": 2, "done": 1, "in_progress": 1}]
    assert shown["live_chats"] == 1
    assert shown["progress"] == {"total": 2, "done": 1, "in_progress": 1, "waiting": 0}

    queue = get("review")
    assert queue["total"] == 1 and queue["buckets"] == []
    [item] = queue["items"]
    assert (item["unit_id"], item["kind"], item["pool"], item["bots"]) == (
        done, "chat", "main", ["alpha"])
    assert get("review?bucket=anything")["total"] == 0

    unit = get(f"units/{done}")
    assert unit["kind"] == "chat" and unit["payload"]["kind"] == "chat"
    [conversation] = unit["conversations"]
    assert conversation["bot"] == "alpha" and conversation["status"] == "ended"
    assert conversation["position"] == 0
    assert [(m["index"], m["role"], m["text"]) for m in conversation["messages"]] == [
        (0, "worker", "Hi!"), (1, "bot", "alpha heard: Hi! "), (2, "worker", "message 0"),
        (3, "bot", "alpha heard: message 0 ")]
    assert all(m["labels"] is None for m in conversation["messages"])
    assert unit["answers"]["dialogues"][0]["conversation_id"] == conversation[
        "conversation_id"]
    assert get("results")["questions"] == []
    held = server.client.get(f"/api/requester/units/{live}", headers=requester)
    assert held.status_code == 404  # a chat still going has no submission to show

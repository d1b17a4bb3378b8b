"""Live chat through the real server (uvicorn, the chat routes, the runner) with scripted bots."""

from __future__ import annotations

import time

import pytest
from chat_helpers import ChatServer, ScriptedBot, auth, event_stream, write_chat_conf
from sqlalchemy import select

from collection_and_annotations.engine.chat import expire_idle_chats
from collection_and_annotations.export.dialogues import collected_dialogues
from collection_and_annotations.storage.models import Conversation, Message, Unit


@pytest.fixture
def single(tmp_path):
    bots = {"alpha": ScriptedBot("alpha")}
    server = ChatServer(tmp_path, write_chat_conf(tmp_path, "alpha:2", ["alpha"]), bots)
    yield server, bots
    server.stop()


def _chat_to_the_end(server: ChatServer, unit: str, token: str, turns: int,
                     position: int = 0) -> None:
    with event_stream(server.base, unit, token) as stream:
        event, state = stream.next("state")
        assert state["conversations"][position]["status"] == "pending"
        started = server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
        assert started.status_code == 200, started.text
        stream.next("message")  # the bot answers the opener
        for turn in range(turns):
            sent = server.client.post(f"/api/chat/{unit}/messages", headers=auth(token), json={
                "text": f"message {turn}", "client_message_id": f"m{position}{turn}"})
            assert sent.status_code == 202, sent.text
            while True:
                event, data = stream.next("message")
                if data["role"] == "bot":
                    break
        ended = server.client.post(f"/api/chat/{unit}/end", json={}, headers=auth(token))
        assert ended.status_code == 200, ended.text


def test_a_single_chat_streams_replies_stores_every_message_and_submits(single):
    server, bots = single
    unit, token = server.claim("w1")
    view = server.client.get(f"/api/units/{unit}", headers=auth(token)).json()
    assert view["kind"] == "chat"
    chat = view["chat"]
    assert chat["current"] == 0 and chat["num_turns"] == 2
    assert chat["conversations"][0]["partner"] == "Partner"
    assert "alpha" not in str(view)  # nicknames never reach the browser

    with event_stream(server.base, unit, token) as stream:
        assert stream.next()[0] == "state"
        started = server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
        assert started.json()["conversations"][0]["messages"][0]["text"] == "Hi!"
        assert stream.next("typing")[1] == {"position": 0, "index": 1}
        pieces = []
        while True:
            event, data = stream.next("piece", "message")
            if event == "message":
                break
            pieces.append(data["text"])
        assert "".join(pieces) == data["text"] == "alpha heard: Hi! "
        assert len(pieces) == 3  # streamed piece by piece

        # refusals: empty, too long, while the bot replies, end before the turns
        def send(text, client_id=None):
            return server.client.post(f"/api/chat/{unit}/messages", headers=auth(token),
                                      json={"text": text, "client_message_id": client_id})
        assert send("   ").status_code == 422
        assert send("x" * 2001).status_code == 413
        assert server.client.post(f"/api/chat/{unit}/end", json={},
                                  headers=auth(token)).status_code == 409
        first = send("hello there", "c1")
        assert first.status_code == 202 and first.json()["index"] == 2
        assert send("hello again").status_code == 409  # the reply is not in yet
        assert send("hello there", "c1").json() == first.json()  # a retried request
        while stream.next("message")[1]["role"] != "bot":
            pass
        assert send("second", "c2").status_code == 202
        while stream.next("message")[1]["role"] != "bot":
            pass
        refused = send("third")
        assert refused.status_code == 409 and "End chat" in refused.json()["error"]
        early = server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                                   json={"answers": {}})
        assert early.status_code == 409
        ended = server.client.post(f"/api/chat/{unit}/end", json={}, headers=auth(token))
        assert ended.json()["current"] is None
        after_end = send("one more")
        assert after_end.status_code == 409 and "no chat is open" in after_end.json()["error"]
    submitted = server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                                   json={"answers": {}})
    assert submitted.status_code == 200 and submitted.json()["status"] == "completed"

    with server.db.read() as session:
        rows = session.execute(select(Message).order_by(Message.index)).scalars().all()
    assert [(m.role, m.text) for m in rows] == [
        ("worker", "Hi!"), ("bot", "alpha heard: Hi! "), ("worker", "hello there"),
        ("bot", "alpha heard: hello there "), ("worker", "second"),
        ("bot", "alpha heard: second ")]
    assert rows[0].opener and not rows[2].opener
    bot_rows = [m for m in rows if m.role == "bot"]
    assert all(m.bot == "alpha" and m.settings == {"kind": "scripted", "delay": 0.005}
               and m.latency_ms >= m.first_piece_ms >= 0 for m in bot_rows)
    assert bots["alpha"].seen[-1][-1].text == "second"  # the bot sees the whole history
    assert len(bots["alpha"].seen[-1]) == 5

    [dialogue] = collected_dialogues(server.db, "chat", ["quality"])
    assert dialogue["bot"] == "alpha" and "alpha" not in dialogue["dialogue_id"]
    assert dialogue["turns"][:2] == [["user", "Hi!"], ["system", "alpha heard: Hi! "]]
    assert dialogue["origin_worker_id"].startswith("w_")


def test_paired_chats_run_one_after_the_other_in_the_recorded_order(tmp_path):
    bots = {"alpha": ScriptedBot("alpha"), "beta": ScriptedBot("beta")}
    server = ChatServer(tmp_path, write_chat_conf(tmp_path, "alpha|beta:4", ["alpha", "beta"],
                                                  num_bots=2, num_turns=1,
                                                  extra="    random_seed: 1\n"), bots)
    try:
        orders = set()
        for worker in ("w1", "w2", "w3", "w4"):
            unit, token = server.claim(worker)
            with server.db.read() as session:
                layout = session.scalar(select(Unit.layout).where(Unit.public_id == unit))
            orders.add(tuple(layout["bots"]))
            view = server.client.get(f"/api/units/{unit}", headers=auth(token)).json()
            assert [c["partner"] for c in view["chat"]["conversations"]] == [
                "Partner A", "Partner B"]
            _chat_to_the_end(server, unit, token, 1, 0)
            _chat_to_the_end(server, unit, token, 1, 1)
            with server.db.read() as session:
                spoken = session.execute(
                    select(Conversation.bot).join(Unit, Unit.id == Conversation.unit_id)
                    .where(Unit.public_id == unit).order_by(Conversation.position)).scalars()
                assert tuple(spoken) == tuple(layout["bots"])
            assert server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                                      json={"answers": {}}).status_code == 200
        assert len(orders) == 2  # the order is drawn per unit (seeded: both orders occur)
    finally:
        server.stop()


def test_a_bot_that_breaks_ends_the_chat_returns_the_unit_and_the_server_keeps_serving(single):
    server, bots = single
    bots["alpha"].failures = ["unavailable", None, "crash"]
    unit, token = server.claim("w1")
    with event_stream(server.base, unit, token) as stream:
        stream.next("state")
        server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
        event, error = stream.next("error")
        assert error["retry"] is True
        assert server.client.post(f"/api/chat/{unit}/messages", headers=auth(token),
                                  json={"text": "hi"}).status_code == 409
        assert server.client.post(f"/api/chat/{unit}/retry", json={},
                                  headers=auth(token)).status_code == 202
        assert stream.next("message")[1]["role"] == "bot"
        server.client.post(f"/api/chat/{unit}/messages", headers=auth(token),
                           json={"text": "and now?"})
        event, error = stream.next("error")
        assert error["retry"] is False
        state = stream.next("state")[1]
        assert state["conversations"][0]["status"] == "failed"
    with server.db.read() as session:
        assert session.scalar(select(Unit.status).where(Unit.public_id == unit)) == "launched"
        assert session.scalar(select(Conversation.status)) == "failed"
        assert session.scalar(select(Message.text).where(Message.index == 2)) == "and now?"
    again, token2 = server.claim("w2")  # the unit went back to the pool
    assert again == unit
    assert server.client.get(f"/api/units/{unit}", headers=auth(token2)).json()["chat"][
        "conversations"][0]["status"] == "pending"


def test_a_worker_who_does_not_answer_in_time_loses_the_unit_and_the_stream_says_so(tmp_path):
    bots = {"alpha": ScriptedBot("alpha")}
    server = ChatServer(tmp_path, write_chat_conf(tmp_path, "alpha:1", ["alpha"],
                                                  max_resp_time=1), bots)
    try:
        unit, token = server.claim("w1")
        with event_stream(server.base, unit, token) as stream:
            stream.next("state")
            server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
            stream.next("message")
            time.sleep(1.2)
            with server.db.session() as session:
                assert expire_idle_chats(session, server.served.run_id) == 1
            event, error = stream.next("error", timeout=6)
            assert error["retry"] is False and "ran out" in error["message"]
        with server.db.read() as session:
            assert session.scalar(select(Conversation.status)) == "timed_out"
            assert session.scalar(select(Unit.status)) == "launched"
    finally:
        server.stop()

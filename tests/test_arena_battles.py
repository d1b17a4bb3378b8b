"""Arena battles through the real server (uvicorn, the chat runner) with scripted bots: both
replies stream at once, one side may fail alone, votes name the bots, and the bots' names
never reach the worker unless the conf reveals them after the vote."""

from __future__ import annotations

import pytest
from arena_helpers import play, write_arena_conf
from chat_helpers import ChatServer, ScriptedBot, auth, event_stream
from sqlalchemy import select

from collection_and_annotations.export.submissions import answered_items, whole_submissions
from collection_and_annotations.server.auth import requester_token
from collection_and_annotations.storage.models import BattleVote, Conversation, Message, Unit

BOTS = ["alpha", "beta"]
VOICES = {"alpha": "one", "beta": "two"}  # what each says: never its nickname


@pytest.fixture
def arena(tmp_path, database_url):
    """A served arena of two scripted bots; `arena(**conf)` starts it."""
    servers = []

    def _serve(**conf):
        bots = {name: ScriptedBot(VOICES[name], delay=0.02) for name in BOTS}
        server = ChatServer(tmp_path / f"s{len(servers)}",
                            write_arena_conf(tmp_path / f"s{len(servers)}", BOTS, **conf), bots,
                            database_url)
        servers.append(server)
        return server, bots

    yield _serve
    for server in servers:
        server.stop()


def _first_message(server, stream, unit: str, token: str) -> None:
    """Start the battle, send one message and wait until both bots have answered it."""
    stream.next("state")
    server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
    server.client.post(f"/api/chat/{unit}/messages", headers=auth(token),
                       json={"text": "hi", "client_message_id": "m0"})
    bot_messages = 0
    while bot_messages < 2:
        bot_messages += stream.next("message")[1]["role"] == "bot"


def test_both_replies_stream_at_once_and_the_vote_names_the_bot(arena):
    server, _bots = arena(num_turns=2, vote="per_turn")
    unit, token = server.claim("w1")
    bodies = []

    def call(method, path, **kwargs):
        answer = server.client.request(method, path, headers=auth(token), **kwargs)
        bodies.append(answer.text)
        return answer

    view = call("GET", f"/api/units/{unit}").json()
    assert view["kind"] == "arena"
    assert [c["partner"] for c in view["chat"]["conversations"]] == ["Model A", "Model B"]
    with event_stream(server.base, unit, token) as stream:
        stream.next("state")
        assert call("POST", f"/api/chat/{unit}/start", json={}).status_code == 200
        sent = call("POST", f"/api/chat/{unit}/messages",
                    json={"text": "hello both", "client_message_id": "m0"})
        assert sent.status_code == 202 and sent.json()["index"] == 0
        events = []
        while sum(1 for e, d in events if e == "message" and d["role"] == "bot") < 2:
            events.append(stream.next("message", "piece"))
        pieces = [d["position"] for e, d in events if e == "piece"]
        first_reply = next(i for i, (e, d) in enumerate(events)
                           if e == "message" and d["role"] == "bot")
        # both sides had sent pieces before either reply was whole: they streamed together
        assert {p for p in pieces[:first_reply]} == {0, 1}, pieces
        refused = call("POST", f"/api/chat/{unit}/messages",
                       json={"text": "too soon", "client_message_id": "m1"})
        assert refused.status_code == 409 and "vote" in refused.json()["error"]
        assert call("POST", f"/api/chat/{unit}/vote", json={"choice": "b"}).status_code == 200
        again = call("POST", f"/api/chat/{unit}/vote", json={"choice": "a"})
        assert again.status_code == 409
        assert call("POST", f"/api/chat/{unit}/messages",
                    json={"text": "second", "client_message_id": "m1"}).status_code == 202
        replied = set()
        while replied != {0, 1}:
            _e, data = stream.next("message")
            if data["role"] == "bot":
                replied.add(data["position"])
        last = call("POST", f"/api/chat/{unit}/vote", json={"choice": "bothbad"}).json()
        bodies.extend(str(e) for e in events)
    assert last["arena"]["finished"] and last["arena"]["models"] is None
    assert call("POST", f"/api/units/{unit}/submit", json={"answers": {}}).status_code == 200
    assert not any(bot in body for body in bodies for bot in BOTS)

    with server.db.snapshot() as connection:
        layout = connection.execute(select(Unit.layout).where(Unit.public_id == unit)).scalar()
        votes = connection.execute(select(BattleVote).order_by(BattleVote.turn)).all()
        worker_texts = connection.execute(
            select(Message.conversation_id, Message.text).where(Message.role == "worker")).all()
    a, b = layout["bots"]
    assert sorted((a, b)) == BOTS
    assert [(v.turn, v.model_a, v.model_b, v.choice, v.winner, v.preferred) for v in votes] == [
        (1, a, b, "b", "model_b", b), (2, a, b, "bothbad", "tie (bothbad)", None)]
    assert sorted(t for _c, t in worker_texts) == ["hello both", "hello both", "second", "second"]


def test_the_bots_are_named_only_once_the_battle_is_voted(arena):
    server, _bots = arena(reveal=True)
    unit, token = server.claim("w1")
    with event_stream(server.base, unit, token) as stream:
        _first_message(server, stream, unit, token)
        before = server.client.get(f"/api/units/{unit}", headers=auth(token)).text
        assert not any(bot in before for bot in BOTS)
        voted = server.client.post(f"/api/chat/{unit}/vote", headers=auth(token),
                                   json={"choice": "tie"})
        _e, published = stream.next("state")
    models = voted.json()["arena"]["models"]
    assert sorted(models.values()) == BOTS and published["arena"]["models"] == models
    with server.db.snapshot() as connection:
        vote = connection.execute(select(BattleVote)).one()
    assert models == {"A": vote.model_a, "B": vote.model_b}


def test_one_side_failing_is_asked_again_alone_and_the_battle_waits_for_it(arena):
    server, bots = arena()
    unit, token = server.claim("w1")
    with server.db.snapshot() as connection:
        layout = connection.execute(select(Unit.layout).where(Unit.public_id == unit)).scalar()
    failing = layout["bots"][1]  # side B
    bots[failing].failures = ["unavailable"]
    with event_stream(server.base, unit, token) as stream:
        stream.next("state")
        server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
        server.client.post(f"/api/chat/{unit}/messages", headers=auth(token),
                           json={"text": "hi", "client_message_id": "m0"})
        _e, error = stream.next("error")
        assert error["position"] == 1 and error["retry"] is True
        _e, reply = stream.next("message")
        while reply["role"] != "bot":
            _e, reply = stream.next("message")
        assert reply["position"] == 0  # the other side's reply stays
        vote = server.client.post(f"/api/chat/{unit}/vote", headers=auth(token),
                                  json={"choice": "a"})
        assert vote.status_code == 409  # a battle whose bot never answered is not voted
        wrong = server.client.post(f"/api/chat/{unit}/retry", headers=auth(token),
                                   json={"position": 0})
        assert wrong.status_code == 409
        retried = server.client.post(f"/api/chat/{unit}/retry", headers=auth(token),
                                     json={"position": 1})
        assert retried.status_code == 202
        _e, reply = stream.next("message")
        assert reply["position"] == 1 and reply["role"] == "bot"
    assert server.client.post(f"/api/chat/{unit}/vote", headers=auth(token),
                              json={"choice": "a"}).status_code == 200
    assert len(bots[layout["bots"][0]].seen) == 1  # side A was asked once
    assert len(bots[failing].seen) == 2
    with server.db.snapshot() as connection:
        counts = connection.execute(select(Conversation.position, Conversation.status)
                                    .order_by(Conversation.position)).all()
    assert [tuple(c) for c in counts] == [(0, "ended"), (1, "ended")]


def test_the_end_vote_waits_for_the_last_message_and_the_submit_for_the_vote(arena):
    server, _bots = arena(num_turns=2)
    unit, token = server.claim("w1")
    with event_stream(server.base, unit, token) as stream:
        _first_message(server, stream, unit, token)
        early = server.client.post(f"/api/chat/{unit}/vote", headers=auth(token),
                                   json={"choice": "a"})
        assert early.status_code == 409 and "last message" in early.json()["error"]
    submit = server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                                json={"answers": {}})
    assert submit.status_code == 409 and "vote" in submit.json()["error"]
    for choice in ("left", ["a"], {"a": 1}, None):
        bad = server.client.post(f"/api/chat/{unit}/vote", headers=auth(token),
                                 json={"choice": choice})
        assert bad.status_code == 422, bad.text
    for position in (True, "1", 2, None):
        bad = server.client.post(f"/api/chat/{unit}/retry", headers=auth(token),
                                 json={"position": position})
        assert bad.status_code == 400, bad.text


def test_sides_are_drawn_per_unit_and_reproducible_with_a_seed(arena):
    layouts = []
    for _run in range(2):
        server, _bots = arena(battles_per_pair=12, extra="    random_seed: 7\n",
                              task="    allowed_concurrent: 0\n")
        for n in range(12):
            server.claim(f"w{n}")
        with server.db.snapshot() as connection:
            layouts.append(sorted((u.claim_order, tuple(u.layout["bots"])) for u in
                                  connection.execute(select(Unit.claim_order, Unit.layout))))
    assert layouts[0] == layouts[1]
    assert len({bots for _order, bots in layouts[0]}) == 2  # both orders occur


def test_a_played_battle_is_submitted(arena):
    server, _bots = arena(num_turns=2, vote="per_turn")
    unit, token = server.claim("w1")
    play(server, unit, token, ["a", "b"], ["a", "tie"])
    done = server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                              json={"answers": {}})
    assert done.status_code == 200, done.text
    records = [record for record, _definitions in whole_submissions(server.db, "arena")]
    assert len(records) == 1
    rows = list(answered_items(records[0], {}))
    a, b = records[0]["dialogues"][0]["bot"], records[0]["dialogues"][0]["bot2"]
    assert [(r["turn_index"], r["answer"], r["chosen"], r["bot"], r["bot2"]) for r in rows] == [
        (1, "model_a", a, a, b), (2, "tie", None, a, b)]


def test_the_live_leaderboard_follows_the_submitted_battles(arena):
    """The dashboard's leaderboard is the votes as they stand: none before any battle is
    submitted, and each one submitted since counts at the next look."""
    server, _bots = arena(num_turns=1, vote="end")
    headers = {"Authorization": f"Bearer {requester_token(server.served.secret)}"}

    def leaderboard():
        reply = server.client.get("/api/requester/arena", headers=headers)
        assert reply.status_code == 200, reply.text
        return reply.json()["leaderboard"]

    assert leaderboard() is None
    for battles, worker in enumerate(("w1", "w2"), start=1):
        unit, token = server.claim(worker)
        play(server, unit, token, ["hi"], ["a"])
        assert server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                                  json={"answers": {}}).status_code == 200
        assert leaderboard()["battles"] == battles

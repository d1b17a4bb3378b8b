"""Annotating while and after chatting, through the real server with scripted bots: online
labels checked and stored with their message, offline answers checked like static ones, and the
stored submission exported like a static one (bots, conversation ids, sides)."""

from __future__ import annotations

import json

import pytest
from chat_helpers import ChatServer, ScriptedBot, auth, event_stream, write_chat_conf
from helpers import BUCKETS
from sqlalchemy import select

from collection_and_annotations.errors import UserError
from collection_and_annotations.export.submissions import answered_items, whole_submissions
from collection_and_annotations.storage.models import Message, Unit

ANNOTATED = (f"    annotations_config_path: {BUCKETS}\n"
             "    do_interactive_online_annotations: turn_quality\n"
             "    do_interactive_offline_annotations: [[overall_quality, dialogue_scores], "
             "[overall_quality, dialogue_scores, preference]]\n"
             "    random_seed: 1\n")
GOOD = {"Quality": 4}


@pytest.fixture
def paired(tmp_path):
    bots = {"alpha": ScriptedBot("alpha"), "beta": ScriptedBot("beta")}
    conf = write_chat_conf(tmp_path, "alpha|beta:2", ["alpha", "beta"], num_bots=2,
                           num_turns=1, extra=ANNOTATED)
    server = ChatServer(tmp_path, conf, bots)
    yield server
    server.stop()


def _post(server, unit, token, action, body):
    return server.client.post(f"/api/chat/{unit}/{action}", json=body, headers=auth(token))


def _bot_reply(stream) -> dict:
    while True:
        event, data = stream.next("message")
        if data["role"] == "bot":
            return data


def _chat(server, unit, token, stream, position):
    assert _post(server, unit, token, "start", {}).status_code == 200
    _bot_reply(stream)
    missing = _post(server, unit, token, "messages", {"text": "hello"})
    assert missing.status_code == 422
    error = missing.json()["error"]  # the partner's messages are counted on their own
    assert "your partner's message 1 first" in error and "turn_quality" in error
    invalid = _post(server, unit, token, "messages", {"text": "hello", "label": {"Quality": 9}})
    assert invalid.status_code == 422 and invalid.json()["problems"]
    assert _post(server, unit, token, "messages",
                 {"text": "hello", "label": GOOD}).status_code == 202
    _bot_reply(stream)
    assert _post(server, unit, token, "end", {}).status_code == 422  # last reply unlabelled
    ended = _post(server, unit, token, "end", {"label": {"Quality": 2}})
    assert ended.status_code == 200, ended.text
    return ended.json()


def test_online_labels_offline_answers_and_the_export(paired):
    server = paired
    unit, token = server.claim("w1")
    view = server.client.get(f"/api/units/{unit}", headers=auth(token)).json()
    assert set(view["buckets"]) == {"turn_quality", "overall_quality", "dialogue_scores",
                                    "preference"}
    annotations = view["chat"]["annotations"]
    assert annotations["online"] == {"bucket": "turn_quality", "required": True}
    after_first, after_second = annotations["offline"]
    assert [d["key"] for d in after_second["dialogues"]] == ["c1", "c0_c1"]
    assert after_first["dialogues"][0]["targets"] is None  # not ended yet
    first_order = after_first["dialogues"][0]["annotation_tasks"]
    assert sorted(first_order) == ["dialogue_scores", "overall_quality"]

    with event_stream(server.base, unit, token) as stream:
        stream.next("state")
        state = _chat(server, unit, token, stream, 0)
        entry = state["annotations"]["offline"][0]["dialogues"][0]
        assert entry["targets"] == {"overall_quality": [], "dialogue_scores": []}
        labelled = [m for m in state["conversations"][0]["messages"] if m["role"] == "bot"]
        # the value as the page sent it, so a reload shows the stored ratings
        assert [m["labels"] for m in labelled] == [GOOD, {"Quality": 2}]
        _chat(server, unit, token, stream, 1)

    answers = {
        "c0": {"overall_quality": {"dialogue": {"Overall": 5}},
               "dialogue_scores": {"dialogue": {"coherence": 4, "engagement": 3}}},
        "c1": {"overall_quality": {"dialogue": {"Overall": 2}},
               "dialogue_scores": {"dialogue": {"coherence": 2, "engagement": 2}}},
    }
    missing = server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                                 json={"answers": answers})
    assert missing.status_code == 422
    assert any(p["dialogue"] == "c0_c1" and p["bucket"] == "preference"
               for p in missing.json()["problems"])
    answers["c0_c1"] = {"preference": {"dialogue": "Dialogue 1 (left)"}}
    done = server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                              json={"answers": answers})
    assert done.status_code == 200, done.text
    again = server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                               json={"answers": answers})
    assert again.status_code == 200  # a retried submit gets the same answer

    with server.db.read() as session:
        layout = session.scalar(select(Unit.layout).where(Unit.public_id == unit))
        stored_labels = session.execute(select(Message.index, Message.labels)
                                        .where(Message.role == "bot")
                                        .order_by(Message.id)).all()
    assert [labels for _, labels in stored_labels] == [
        {"turn_quality": GOOD}, {"turn_quality": {"Quality": 2}}] * 2
    [(record, definitions)] = list(whole_submissions(server.db, "chat"))
    dialogues = {d["key"]: d for d in record["dialogues"]}
    bots = layout["bots"]
    assert dialogues["c0"]["source_fields"] == {"bot": bots[0]}
    assert dialogues["c0_c1"]["source_fields"] == {"bot": bots[0], "bot2": bots[1]}
    left = layout["left"]["c0_c1"]
    assert dialogues["c0_c1"]["left"] == left
    choice = record["answers"]["c0_c1"]["preference"]["dialogue"]
    preferred = bots[0] if left == "turns" else bots[1]  # the left one was chosen
    assert choice == {"option": "Dialogue 1 (left)", "side": "left", "dialogue": left,
                      "bot": preferred}
    assert dialogues["c0"]["tasks"] == ["turn_quality", *layout["offline"][0]]

    rows = list(answered_items(record, definitions))
    online = [r for r in rows if r["bucket"] == "turn_quality"]
    assert {(r["bot"], r["turn_index"], r["answer"]) for r in online} == {
        (bots[0], 1, 4), (bots[0], 3, 2), (bots[1], 1, 4), (bots[1], 3, 2)}
    assert all(r["conversation_id"] for r in online)
    preference = next(r for r in rows if r["bucket"] == "preference")
    assert (preference["bot"], preference["bot2"], preference["chosen"]) == (
        bots[0], bots[1], left)


def test_labels_are_refused_when_the_chat_has_no_online_bucket(tmp_path):
    server = ChatServer(tmp_path, write_chat_conf(tmp_path, "alpha:1", ["alpha"], num_turns=1),
                        {"alpha": ScriptedBot("alpha")})
    try:
        unit, token = server.claim("w1")
        with event_stream(server.base, unit, token) as stream:
            stream.next("state")
            _post(server, unit, token, "start", {})
            _bot_reply(stream)
            refused = _post(server, unit, token, "messages", {"text": "hi", "label": GOOD})
            assert refused.status_code == 400
    finally:
        server.stop()


def test_a_single_offline_bucket_is_asked(tmp_path, database_url):
    """One bucket in one offline list: nothing to shuffle, and still asked after the chat."""
    conf = write_chat_conf(tmp_path, "alpha:1", ["alpha"], num_turns=1, extra=(
        f"    annotations_config_path: {BUCKETS}\n"
        "    do_interactive_offline_annotations: [[overall_quality]]\n"))
    server = ChatServer(tmp_path, conf, {"alpha": ScriptedBot("alpha")}, database_url)
    try:
        unit, token = server.claim("w1")
        view = server.client.get(f"/api/units/{unit}", headers=auth(token)).json()
        offline = view["chat"]["annotations"]["offline"]
        assert [d["annotation_tasks"] for e in offline for d in e["dialogues"]] == [
            ["overall_quality"]]
        with event_stream(server.base, unit, token) as stream:
            stream.next("state")
            assert _post(server, unit, token, "start", {}).status_code == 200
            _bot_reply(stream)
            assert _post(server, unit, token, "messages", {"text": "hello"}).status_code == 202
            _bot_reply(stream)
            assert _post(server, unit, token, "end", {}).status_code == 200
        unanswered = server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                                        json={"answers": {}})
        assert unanswered.status_code == 422
        answered = server.client.post(f"/api/units/{unit}/submit", headers=auth(token), json={
            "answers": {"c0": {"overall_quality": {"dialogue": {"Overall": 4}}}}})
        assert answered.status_code == 200, answered.text
    finally:
        server.stop()


def _buckets_conf(tmp_path, buckets: dict, online: str):
    path = tmp_path / "buckets.json"
    path.write_text(json.dumps({"config": buckets}))
    return write_chat_conf(tmp_path, "alpha:1", ["alpha"], num_turns=2, extra=(
        f"    annotations_config_path: {path}\n"
        f"    do_interactive_online_annotations: {online}\n"))


def test_a_text_bucket_labels_messages_while_chatting(tmp_path):
    why = {"config": "text", "indices": "system", "question": "Why did SPEAKER_X say this?",
           "max_chars": 30, "require": {"level": "turn"}}
    server = ChatServer(tmp_path, _buckets_conf(tmp_path, {"why": why}, "why"),
                        {"alpha": ScriptedBot("alpha")})
    try:
        unit, token = server.claim("w1")
        with event_stream(server.base, unit, token) as stream:
            stream.next("state")
            _post(server, unit, token, "start", {})
            _bot_reply(stream)
            for label in ("   ", "x" * 31, 5):  # blank, too long, not a text
                refused = _post(server, unit, token, "messages", {"text": "hi", "label": label})
                assert refused.status_code == 422, label
            sent = _post(server, unit, token, "messages",
                         {"text": "hi", "label": " It greets me.\n"})
            assert sent.status_code == 202
            _bot_reply(stream)
        with server.db.read() as session:
            stored = session.scalars(select(Message.labels).where(Message.role == "bot")
                                     .order_by(Message.index)).all()
        assert stored[0] == {"why": " It greets me.\n"}  # as given
    finally:
        server.stop()


def test_an_explained_bucket_is_refused_for_labels_while_chatting(tmp_path):
    spec = json.loads(BUCKETS.read_text())["config"]["turn_quality"]
    conf = _buckets_conf(tmp_path, {"rated": {**spec, "explain": True}}, "rated")
    with pytest.raises(UserError, match="'rated' has \"explain\": true"):
        ChatServer(tmp_path, conf, {"alpha": ScriptedBot("alpha")})

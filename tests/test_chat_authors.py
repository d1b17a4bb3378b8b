"""A chat's author never annotates it: chat, `export --format dialogues`, a static task on the
same database using that export, the author's claim."""

from __future__ import annotations

import json

from chat_helpers import ChatServer, ScriptedBot, auth, event_stream, write_chat_conf
from helpers import app_client, cli, write_task

from collection_and_annotations.server.app import create_app


def _chat_and_submit(server: ChatServer, worker: str) -> None:
    unit, token = server.claim(worker)
    with event_stream(server.base, unit, token) as stream:
        stream.next("state")
        assert server.client.post(f"/api/chat/{unit}/start", json={},
                                  headers=auth(token)).status_code == 200
        stream.next("message")  # the bot answers the opener
        assert server.client.post(f"/api/chat/{unit}/messages", headers=auth(token), json={
            "text": "hello there", "client_message_id": "m1"}).status_code == 202
        while stream.next("message")[1]["role"] != "bot":
            pass
    assert server.client.post(f"/api/chat/{unit}/end", json={},
                              headers=auth(token)).status_code == 200
    submitted = server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                                   json={"answers": {}})
    assert submitted.status_code == 200, submitted.text


def test_the_author_of_a_chat_is_never_served_it_to_annotate(tmp_path, database_url, open_conf):
    server = ChatServer(tmp_path / "chat", write_chat_conf(tmp_path / "chat", "alpha:1",
                                                           ["alpha"], num_turns=1),
                        {"alpha": ScriptedBot("alpha")}, database_url)
    try:
        _chat_and_submit(server, "author")
    finally:
        server.stop()
    exported = tmp_path / "chats.jsonl"
    done = cli("export", "--task", "chat", "--format", "dialogues", "--output", str(exported),
               "--annotation-tasks", "overall_quality", "--annotators", "2",
               "--database-url", database_url)
    assert done.returncode == 0, done.stderr
    lines = exported.read_text().splitlines()
    assert json.loads(lines[0])["data"][0]["origin_worker_id"].startswith("w_")  # a pseudonym
    conf = write_task(tmp_path / "rate", [], json.loads(
        exported.with_name("chats_units.json").read_text()), task_name="rate",
        raw_lines=lines, task={"allowed_concurrent": 0})
    served = open_conf(str(conf), database_url)
    client = app_client(create_app(served))
    refused = client.post("/api/claim", json={"worker_id": "author", "assignment_id": "r1"})
    assert refused.status_code == 409 and "no more work" in refused.json()["error"]
    other = client.post("/api/claim", json={"worker_id": "someone", "assignment_id": "r1"})
    assert other.status_code == 200

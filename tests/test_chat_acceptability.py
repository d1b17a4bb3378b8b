"""check_acceptability: the rules from one table, and a violation flagging the unit (and
blocking its worker when configured) through the real server."""

from __future__ import annotations

import pytest
from chat_helpers import ChatServer, ScriptedBot, auth, event_stream, write_chat_conf
from sqlalchemy import select

from collection_and_annotations.blueprints.dialogue_collection.acceptability import violations
from collection_and_annotations.storage.models import Submission

BOT = ["Hello! How are you today?", "I like the sea."]
CASES = [
    # (worker's messages, offensive list, violations)
    (["I am fine, thanks for asking", "What do you do for fun?"], [], []),
    (["ok", "yes", "sure thing"], [], ["under_min_length"]),
    (["I LOVE THE SEA TOO", "WHAT ABOUT YOU THEN"], [], ["too_much_all_caps"]),
    (["I LOVE THE SEA TOO", "what about you then?"], [], []),
    (["ONLY ONE MESSAGE HERE"], [], ["too_much_all_caps"]),
    (["i like the sea!", "and you like it too?"], [], ["copies_partner"]),
    (["Hello, how are you today", "fine thanks, and you?"], [], ["copies_partner"]),
    (["you are a silly goose", "that was rude of me"], ["silly goose"], ["offensive:1"]),
    (["goosebumps are a thing", "so are geese"], ["goose"], []),
    ([], [], []),
]


@pytest.mark.parametrize(("worker", "offensive", "expected"), CASES)
def test_acceptability_rules(worker, offensive, expected):
    assert violations(worker, BOT, frozenset(offensive)) == expected


def test_a_violation_flags_the_unit_and_blocks_the_worker(tmp_path):
    words = tmp_path / "offensive.txt"
    words.write_text("# words refused\nsilly goose\n")
    extra = (f"    check_acceptability: true\n    offensive_words_path: {words}\n"
             "    block_on_unacceptable: true\n")
    server = ChatServer(tmp_path, write_chat_conf(tmp_path, "alpha:3", ["alpha"], num_turns=1,
                                                  extra=extra),
                        {"alpha": ScriptedBot("alpha")})
    try:
        for worker, text, flagged in (("w1", "I really enjoy long walks outside", False),
                                      ("w2", "you are a silly goose indeed", True)):
            unit, token = server.claim(worker)
            with event_stream(server.base, unit, token) as stream:
                stream.next("state")
                server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
                while stream.next("message")[1]["role"] != "bot":
                    pass
                server.client.post(f"/api/chat/{unit}/messages", json={"text": text},
                                   headers=auth(token))
                while stream.next("message")[1]["role"] != "bot":
                    pass
            server.client.post(f"/api/chat/{unit}/end", json={}, headers=auth(token))
            done = server.client.post(f"/api/units/{unit}/submit", json={"answers": {}},
                                      headers=auth(token))
            assert done.status_code == 200, done.text
            with server.db.read() as session:
                stored = session.execute(
                    select(Submission.flagged_for_review, Submission.answers)
                    .order_by(Submission.id.desc())).first()
            assert stored.flagged_for_review is flagged
            assert bool(stored.answers["dialogues"][0]["acceptability"]) is flagged
        blocked = server.client.post("/api/claim", json={"worker_id": "w2",
                                                         "assignment_id": "2"})
        assert blocked.status_code == 403 and "not eligible" in blocked.json()["error"]
        assert server.client.post("/api/claim", json={"worker_id": "w1", "assignment_id": "2"}
                                  ).status_code == 200
    finally:
        server.stop()

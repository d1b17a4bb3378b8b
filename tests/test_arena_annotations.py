"""Labels inside arena battles, through the real server with scripted bots: each side's reply
is labelled with the chat kind's online bucket (required before the vote and the next
message), the chat kind's offline buckets are asked about each side after the last vote, and
the stored labels and answers name each side's bot, never the side."""

from __future__ import annotations

import json

import pytest
from arena_helpers import send_to_both, sides, write_arena_conf
from chat_helpers import ChatServer, ScriptedBot, auth, event_stream
from click.testing import CliRunner
from helpers import BUCKETS
from sqlalchemy import select

from collection_and_annotations.cli import main
from collection_and_annotations.export.battles import battles
from collection_and_annotations.export.submissions import answered_items, whole_submissions
from collection_and_annotations.storage.models import Message

BOTS = ["alpha", "beta"]
ONLINE = (f"    annotations_config_path: {BUCKETS}\n"
          "    do_interactive_online_annotations: turn_quality\n")
ONE_BUCKET = "    do_interactive_offline_annotations: [[overall_quality]]\n"
GOOD, BAD = {"Quality": 4}, {"Quality": 2}


@pytest.fixture
def arena(tmp_path, database_url):
    """`arena(extra, **conf)` serves an arena of two scripted bots with those conf lines."""
    servers = []

    def _serve(extra: str, **conf):
        folder = tmp_path / f"s{len(servers)}"
        bots = {name: ScriptedBot(name[0] * 3, delay=0.01) for name in BOTS}
        server = ChatServer(folder, write_arena_conf(folder, BOTS, extra=extra, **conf), bots,
                            database_url)
        servers.append(server)
        return server

    yield _serve
    for server in servers:
        server.stop()


def _post(server, unit, token, action, body):
    return server.client.post(f"/api/chat/{unit}/{action}", json=body, headers=auth(token))


def _send(server, unit, token, stream, n, labels=None):
    """Message `n` to both sides, with `labels` if given, answered by both bots."""
    body = {"text": f"message {n}", "client_message_id": f"m{n}"}
    if labels is not None:
        body["labels"] = labels
    send_to_both(server, unit, token, stream, body)


def test_labels_per_side_before_the_vote_and_offline_answers_name_the_bots(arena, tmp_path):
    server = arena(ONLINE + ONE_BUCKET, num_turns=2, vote="per_turn")
    unit, token = server.claim("w1")
    view = server.client.get(f"/api/units/{unit}", headers=auth(token)).json()
    assert set(view["buckets"]) == {"turn_quality", "overall_quality"}
    annotations = view["chat"]["annotations"]
    assert annotations["online"] == {"bucket": "turn_quality", "required": True}
    # one list of one bucket: asked about each side's conversation
    assert [[d["key"], d["annotation_tasks"]] for e in annotations["offline"]
            for d in e["dialogues"]] == [["c0", ["overall_quality"]],
                                         ["c1", ["overall_quality"]]]

    with event_stream(server.base, unit, token) as stream:
        stream.next("state")
        assert _post(server, unit, token, "start", {}).status_code == 200
        _send(server, unit, token, stream, 0)
        missing = _post(server, unit, token, "vote", {"choice": "a"})
        assert missing.status_code == 422
        assert "Model A's message 1" in missing.json()["error"]
        assert "turn_quality" in missing.json()["error"]
        one_side = _post(server, unit, token, "vote", {"choice": "a", "labels": {"0": GOOD}})
        assert one_side.status_code == 422 and "Model B's message 1" in one_side.json()["error"]
        invalid = _post(server, unit, token, "vote",
                        {"choice": "a", "labels": {"0": GOOD, "1": {"Quality": 9}}})
        assert invalid.status_code == 422 and invalid.json()["problems"]
        wrong_side = _post(server, unit, token, "vote", {"choice": "a", "labels": {"2": GOOD}})
        assert wrong_side.status_code == 400
        voted = _post(server, unit, token, "vote",
                      {"choice": "a", "labels": {"0": GOOD, "1": BAD}})
        assert voted.status_code == 200, voted.text
        shown = [[m["labels"] for m in c["messages"] if m["role"] == "bot"]
                 for c in voted.json()["conversations"]]
        assert shown == [[GOOD], [BAD]]
        assert voted.json()["annotations"]["offline"][0]["dialogues"][0]["targets"] is None
        _send(server, unit, token, stream, 1)  # the replies before it are labelled already
        assert _post(server, unit, token, "vote", {"choice": "b"}).status_code == 422
        done = _post(server, unit, token, "vote",
                     {"choice": "b", "labels": {"0": BAD, "1": GOOD}})
        assert done.status_code == 200, done.text
        assert done.json()["arena"]["finished"]
        offline = done.json()["annotations"]["offline"]
        assert [d["targets"] for e in offline for d in e["dialogues"]] == [
            {"overall_quality": []}] * 2

    submit = f"/api/units/{unit}/submit"
    answers = {"c0": {"overall_quality": {"dialogue": {"Overall": 5}}}}
    refused = server.client.post(submit, headers=auth(token), json={"answers": answers})
    assert refused.status_code == 422
    assert any(p["dialogue"] == "c1" and p["bucket"] == "overall_quality"
               for p in refused.json()["problems"])
    answers["c1"] = {"overall_quality": {"dialogue": {"Overall": 1}}}
    stored = server.client.post(submit, headers=auth(token), json={"answers": answers})
    assert stored.status_code == 200, stored.text

    a, b = sides(server, unit)
    with server.db.read() as session:
        labels = session.execute(select(Message.bot, Message.labels)
                                 .where(Message.role == "bot").order_by(Message.id)).all()
    assert {(bot, labels["turn_quality"]["Quality"]) for bot, labels in labels} == {
        (a, 4), (b, 2), (a, 2), (b, 4)}
    [(record, definitions)] = list(whole_submissions(server.db, "arena"))
    rows = list(answered_items(record, definitions))
    online = [r for r in rows if r["bucket"] == "turn_quality"]
    assert sorted((r["bot"], r["turn_index"], r["answer"]) for r in online) == sorted([
        (a, 1, 4), (a, 3, 2), (b, 1, 2), (b, 3, 4)])
    assert all(r["conversation_id"] for r in online)
    overall = {r["bot"]: r["answer"] for r in rows if r["bucket"] == "overall_quality"}
    assert overall == {a: 5, b: 1}
    votes = [r for r in rows if r["bucket"] == "vote"]
    assert [(r["bot"], r["bot2"], r["chosen"]) for r in votes] == [(a, b, a), (a, b, b)]
    # the battles export stays Chatbot Arena's: one line per vote, no labels
    exported = list(battles(server.db, "arena"))
    assert [(x["model_a"], x["winner"]) for x in exported] == [(a, "model_a"), (a, "model_b")]
    assert not any("labels" in str(x) for x in exported)
    # analyze reads the labels per bot, beside the leaderboard
    results = tmp_path / "results.json"
    analysed = CliRunner().invoke(main, ["analyze", "--task", "arena", "--json", str(results),
                                         "--resamples", "20", "--database-url", server.db.url])
    assert analysed.exit_code == 0, analysed.output
    likert = {(r["bucket"], r["bot"]): (r["mean"], r["n"])
              for r in json.loads(results.read_text())["likert"]}
    assert likert == {("overall_quality", a): (5, 1), ("overall_quality", b): (1, 1),
                      ("turn_quality", a): (3, 2), ("turn_quality", b): (3, 2)}


def test_the_next_message_waits_for_the_labels_of_the_replies(arena):
    """vote: end: the labels of each pair of replies go with the next message."""
    server = arena(ONLINE, num_turns=2, vote="end")
    unit, token = server.claim("w1")
    with event_stream(server.base, unit, token) as stream:
        stream.next("state")
        assert _post(server, unit, token, "start", {}).status_code == 200
        _send(server, unit, token, stream, 0)
        body = {"text": "next", "client_message_id": "m1"}
        missing = _post(server, unit, token, "messages", body)
        assert missing.status_code == 422 and "Model A's message 1" in missing.json()["error"]
        half = _post(server, unit, token, "messages", {**body, "labels": {"0": GOOD}})
        assert half.status_code == 422 and "Model B's message 1" in half.json()["error"]
        _send(server, unit, token, stream, 1, labels={"0": GOOD, "1": GOOD})
        assert _post(server, unit, token, "vote", {"choice": "tie"}).status_code == 422
        assert _post(server, unit, token, "vote", {
            "choice": "tie", "labels": {"0": BAD, "1": BAD}}).status_code == 200
    # no offline buckets: the battle is submitted with no answers
    assert server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                              json={"answers": {}}).status_code == 200


def test_labels_are_refused_when_the_battle_asks_none(arena):
    server = arena("")
    unit, token = server.claim("w1")
    with event_stream(server.base, unit, token) as stream:
        stream.next("state")
        assert _post(server, unit, token, "start", {}).status_code == 200
        _send(server, unit, token, stream, 0)
        refused = _post(server, unit, token, "vote", {"choice": "a", "labels": {"0": GOOD}})
        assert refused.status_code == 400 and "takes no labels" in refused.json()["error"]


def test_an_adaptive_battle_keeps_its_offline_questions_when_its_pair_is_chosen(arena):
    server = arena(ONLINE + ONE_BUCKET + "    pairs: adaptive\n    adaptive_battles: 1\n",
                   battles_per_pair=1)
    server.claim("w1")  # the pair's floor
    unit, token = server.claim("w2")  # the adaptive battle: its pair is chosen at start
    started = _post(server, unit, token, "start", {})
    assert started.status_code == 200, started.text
    assert sorted(sides(server, unit)) == BOTS
    assert [d["key"] for e in started.json()["annotations"]["offline"]
            for d in e["dialogues"]] == ["c0", "c1"]


def test_a_comparison_of_the_two_sides_names_the_bot_preferred(arena):
    """Two offline lists: the first about Model A, the second about Model B, whose comparative
    bucket compares both conversations side by side (the left one drawn per unit)."""
    server = arena(f"    annotations_config_path: {BUCKETS}\n"
                   "    do_interactive_offline_annotations: "
                   "[[overall_quality], [overall_quality, preference]]\n")
    unit, token = server.claim("w1")
    with event_stream(server.base, unit, token) as stream:
        stream.next("state")
        assert _post(server, unit, token, "start", {}).status_code == 200
        _send(server, unit, token, stream, 0)
        state = _post(server, unit, token, "vote", {"choice": "a"}).json()
    comparison = state["annotations"]["offline"][1]["dialogues"][1]
    assert comparison["key"] == "c0_c1" and {comparison["left"], comparison["right"]} == {0, 1}
    answers = {f"c{n}": {"overall_quality": {"dialogue": {"Overall": 3}}} for n in (0, 1)}
    answers["c0_c1"] = {"preference": {"dialogue": "Dialogue 1 (left)"}}
    stored = server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                                json={"answers": answers})
    assert stored.status_code == 200, stored.text
    a, b = sides(server, unit)
    [(record, definitions)] = list(whole_submissions(server.db, "arena"))
    [row] = [r for r in answered_items(record, definitions) if r["bucket"] == "preference"]
    left_bot = (a, b)[comparison["left"]]
    assert (row["bot"], row["bot2"]) == (a, b)
    assert record["answers"]["c0_c1"]["preference"]["dialogue"]["bot"] == left_bot

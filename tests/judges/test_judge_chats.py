"""Collected chats judged on their offline buckets: a person chats with two scripted bots and
answers the offline questions; the judge answers the same questions about the same
conversations, stored like the person's, and `analyze` shows them side by side."""

from __future__ import annotations

import json
import textwrap

from chat_helpers import ChatServer, ScriptedBot, auth, event_stream, write_chat_conf
from helpers import BUCKETS, cli

from collection_and_annotations.export.submissions import whole_submissions

from .fake_judge import FakeJudge, Served
from .study import KEY, KEY_ENV

OFFLINE = (f"    annotations_config_path: {BUCKETS}\n"
           "    do_interactive_online_annotations: turn_quality\n"
           "    do_interactive_offline_annotations: [[overall_quality], "
           "[overall_quality, preference]]\n")


def _chat(server: ChatServer, unit: str, token: str, stream) -> None:
    def post(action: str, body: dict) -> None:
        answer = server.client.post(f"/api/chat/{unit}/{action}", json=body,
                                    headers=auth(token))
        assert answer.status_code in (200, 202), answer.text

    def bot_reply() -> None:
        while stream.next("message")[1]["role"] != "bot":
            pass

    post("start", {})
    bot_reply()
    post("messages", {"text": "hello", "label": {"Quality": 4}})
    bot_reply()
    post("end", {"label": {"Quality": 5}})


def test_a_judge_answers_the_offline_buckets_of_collected_chats(tmp_path):
    bots = {"alpha": ScriptedBot("alpha"), "beta": ScriptedBot("beta")}
    conf = write_chat_conf(tmp_path, "alpha|beta:2", ["alpha", "beta"], num_bots=2,
                           num_turns=1, extra=OFFLINE)
    fake = FakeJudge()
    judge_server = Served(fake)
    server = ChatServer(tmp_path, conf, bots)
    try:
        for person in ("p1", "p2"):
            unit, token = server.claim(person)
            with event_stream(server.base, unit, token) as stream:
                stream.next("state")
                _chat(server, unit, token, stream)
                _chat(server, unit, token, stream)
            answers = {key: {"overall_quality": {"dialogue": {"Overall": 3}}}
                       for key in ("c0", "c1")}
            answers["c0_c1"] = {"preference": {"dialogue": "No real difference"}}
            done = server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                                      json={"answers": answers})
            assert done.status_code == 200, done.text
        opts = tmp_path / "judges.yaml"
        opts.write_text(textwrap.dedent(f"""\
            gpt:
              type: openai
              base_url: {fake.base_url}
              model: fake-judge-1
              api_key_env: {KEY_ENV}
            """))
        url = str(server.db.url)
        judged = cli("judge", "--task", "chat", "--bot", "gpt", "--model-opts", str(opts),
                     "--database-url", url, cwd=tmp_path, env={KEY_ENV: KEY})
        assert judged.returncode == 0, judged.stderr
        assert "2 units answered now" in judged.stdout
        people = {r["unit_id"]: r for r, _ in whole_submissions(server.db, "chat")}
        judges = [r for r, _ in whole_submissions(server.db, "chat", judges="only")]
    finally:
        server.stop()
        judge_server.stop()
    assert len(judges) == 2 and len(fake.requests) == 2 * 3
    person_dialogues = {d["dialogue_id"]: d for r in people.values() for d in r["dialogues"]}
    for record in judges:
        ids = {d["dialogue_id"] for d in record["dialogues"]}
        assert ids <= set(person_dialogues)  # the same conversations the people judged
        # the rule's answers, and none of the person's labels made while chatting
        assert record["answers"]["c0"] == {"overall_quality": {"dialogue": {"Overall": 3}}}
        assert record["answers"]["c0_c1"]["preference"]["dialogue"]["option"] == \
            "No real difference"
        assert "turn_quality" not in json.dumps(record["answers"])
        for dialogue in record["dialogues"]:
            assert dialogue["source_fields"] == person_dialogues[dialogue["dialogue_id"]][
                "source_fields"]
    analysed = cli("analyze", "--task", "chat", "--database-url", url, "--json", "results.json",
                   "--resamples", "50", cwd=tmp_path)
    assert analysed.returncode == 0, analysed.stderr
    rows = json.loads((tmp_path / "results.json").read_text())["judges"]
    assert {(r["bucket"], r["label"]) for r in rows} == {
        ("overall_quality", "Overall"), ("preference", "chosen dialogue")}
    assert all(r["n_items"] > 0 and r["accuracy"] == 1.0 for r in rows)

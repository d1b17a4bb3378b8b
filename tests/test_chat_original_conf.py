"""The original `collect_dialogues.yaml` runs unchanged but for the bots it points to: paired
chats with all 8 + 16 offline buckets, through the real launcher and the chat API."""

from __future__ import annotations

import signal

from chat_helpers import EventStream, auth
from helpers import Running, cli, free_port, http_client

OPTS = ("parrot: {type: demo, name: parrot, delay: 0}\n"
        "chatter: {type: demo, name: chatter, delay: 0}\n")


def _answer(bucket: dict) -> dict:
    if bucket["config"] == "comparative":
        return {"dialogue": bucket["options"][0]}
    return {"dialogue": {option["label"]: 4 for option in bucket["options"]}}


def test_the_original_collection_conf_runs_with_its_24_offline_buckets(tmp_path, cep_fixtures):
    opts = tmp_path / "model_opts.yaml"
    opts.write_text(OPTS)
    port = free_port()
    conf = cep_fixtures / "hydra_configs" / "conf" / "collect_dialogues.yaml"
    server = Running(tmp_path, port, str(conf),
                     f"task_dir={cep_fixtures}", "mephisto.architect.hostname=127.0.0.1",
                     f"mephisto.blueprint.model_opt_path={opts}",
                     "mephisto.blueprint.conversations_needed_string=parrot|chatter:1")
    base = f"http://127.0.0.1:{port}"
    try:
        server.wait_for("press Ctrl-C to stop", timeout=60)
        printed = "".join(server.lines)
        assert "units_per_assignment is accepted but not used" in printed
        assert "data_jsonl is accepted but not used" in printed
        # the original kept its instructions in its page's code: the launch says so, once
        assert printed.count("warning: no instructions for bucket(s) grammatical_likert,") == 1
        assert f"{(cep_fixtures / 'task_config' / 'instructions').resolve()}" in printed
        client = http_client(base_url=base, timeout=20)
        claimed = client.post("/api/claim", json={"worker_id": "w", "assignment_id": "1"}).json()
        unit, token = claimed["unit_id"], claimed["token"]
        view = client.get(f"/api/units/{unit}", headers=auth(token)).json()
        offline = view["chat"]["annotations"]["offline"]
        assert [len(d["annotation_tasks"]) for e in offline for d in e["dialogues"]] == [8, 8, 8]
        stream = EventStream(base, unit, token)
        try:
            stream.next("state")
            for _position in range(2):
                assert client.post(f"/api/chat/{unit}/start", json={},
                                   headers=auth(token)).status_code == 200
                for turn in range(5):  # the opener's reply, then num_turns: 4
                    while stream.next("message", timeout=20)[1]["role"] != "bot":
                        pass
                    if turn < 4:
                        assert client.post(f"/api/chat/{unit}/messages", headers=auth(token),
                                           json={"text": f"message {turn}"}).status_code == 202
                assert client.post(f"/api/chat/{unit}/end", json={},
                                   headers=auth(token)).status_code == 200
        finally:
            stream.close()
        buckets = view["buckets"]
        answers = {d["key"]: {name: _answer(buckets[name]) for name in d["annotation_tasks"]}
                   for e in offline for d in e["dialogues"]}
        submitted = client.post(f"/api/units/{unit}/submit", headers=auth(token),
                                json={"answers": answers})
        assert submitted.status_code == 200, submitted.text
        server.wait_for("all units are completed", timeout=10)
    finally:
        server.process.send_signal(signal.SIGINT)
        server.process.wait(30)
    exported = cli("export", "--task", "collect_dialogues", "--format", "csv", "--data-dir",
                   str(tmp_path / "data"))
    assert exported.returncode == 0, exported.stderr
    rows = exported.stdout.strip().splitlines()[1:]
    assert len(rows) == 24  # one row per offline bucket: 8 + 8 likert, 8 comparative
    assert all(("parrot" in row) and ("chatter" in row) for row in rows if "comparative" in row)

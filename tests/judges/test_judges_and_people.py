"""Judges never touch the people's side: a judge that ran first takes no unit a person needs,
and the progress, workers, review queue, exports, answer counts and figures stay the people's
(the judge's answers only when asked for). The conf's judges answer while the task is served."""

from __future__ import annotations

import json
import signal

import pytest
from helpers import Running, cli, free_port, http_client, live_server, welcome
from sqlalchemy import func, select

from collection_and_annotations.engine.runs import end_run, unit_counts
from collection_and_annotations.server.auth import requester_token
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Submission, Unit

from .study import KEY, KEY_ENV, annotate, run_judge, write_study

MAIN = ("behaviour_rates", "likert", "differences", "comparisons", "ranking", "agreement",
        "annotators", "position_bias")


def _analyze(tmp_path, *source: str) -> dict:
    done = cli("analyze", *source, "--json", "results.json", "--resamples", "50", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads((tmp_path / "results.json").read_text())


def test_a_judge_takes_no_unit_a_person_needs_and_leaves_people_s_figures_alone(
        tmp_path, database_url, open_conf, fake):
    conf = write_study(tmp_path, 6, fake.base_url, annotators=2, pairs=2)
    served = open_conf(str(conf), database_url)
    people_units = unit_counts(served.db, served.task_id)
    assert people_units == {"launched": 16}
    done = run_judge(tmp_path, database_url, "--bot", "gpt")
    assert done.returncode == 0, done.stderr
    assert unit_counts(served.db, served.task_id) == people_units
    # a new run of the conf plans the same units: the judge's count for no group
    end_run(served.db, served.run_id, "stopped")
    served = open_conf(str(conf), database_url)
    assert unit_counts(served.db, served.task_id) == people_units
    requester = {"Authorization": f"Bearer {requester_token(served.secret)}"}
    with live_server(served) as base, http_client(base_url=base, timeout=30) as client:
        waiting = client.get("/api/requester/overview", headers=requester).json()["progress"]
        assert waiting == {"total": 16, "done": 0, "in_progress": 0, "waiting": 16}
        assert annotate(base, workers=2, mistakes=0.0) == 16  # each person every unit
        progress = client.get("/api/requester/overview", headers=requester).json()["progress"]
        assert progress == {"total": 16, "done": 16, "in_progress": 0, "waiting": 0}
        workers = client.get("/api/requester/workers", headers=requester).json()["workers"]
        assert sorted(w["units_done"] for w in workers) == [8, 8]
        queue = client.get("/api/requester/review?limit=200", headers=requester).json()
        assert queue["total"] == 16
        people = {item["worker"] for item in queue["items"]}
        assert {w["pseudonym"] for w in workers} == people
        submissions = client.get("/api/requester/submissions", headers=requester).json()
        assert len(submissions["submissions"]) == 16
        both = client.get("/api/requester/submissions?include=judges",
                          headers=requester).json()["submissions"]
        judged = [s for s in both if s.get("judge") == "gpt"]
        assert len(both) == 24 and len(judged) == 8
        assert client.get("/api/requester/submissions?include=all",
                          headers=requester).status_code == 400
        decided = client.post(f"/api/requester/units/{judged[0]['unit_id']}/review",
                              headers=requester, json={"decision": "approve"})
        assert decided.status_code == 409 and "judge" in decided.json()["error"]
        counts = client.get("/api/requester/results", headers=requester).json()["questions"]
        assert {q["bucket"]: q["n"] for q in counts if q["bucket"] != "labels"} == {
            "quality": 12, "preference": 4}
        identities = client.get("/api/requester/workers/identities",
                                headers=requester).json()["workers"]
        assert {w["provider"] for w in identities} == {"local"}
    end_run(served.db, served.run_id, "stopped")
    again = open_conf(str(conf), database_url)
    assert unit_counts(again.db, again.task_id) == {"completed": 16}
    with again.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Unit)
                              .where(Unit.status == "launched")) == 0
    # the people's figures are the same with the judge's answers in the database or not
    exported = tmp_path / "people.jsonl"
    done = cli("export", "--task", "t", "--database-url", database_url, "--format",
               "submissions", "-o", str(exported))
    assert done.returncode == 0, done.stderr
    alone = _analyze(tmp_path, "--from", str(exported), "--buckets",
                     str(tmp_path / "buckets.json"))
    beside = _analyze(tmp_path, "--task", "t", "--database-url", database_url)
    for section in MAIN:
        assert alone[section] == beside[section], section
    assert alone["signature"]["data_sha256"] == beside["signature"]["data_sha256"]
    assert alone["judges"] == [] and beside["judges"]


def test_the_conf_s_judges_answer_while_the_task_is_served(tmp_path, fake, monkeypatch):
    conf = write_study(tmp_path, 3, fake.base_url)
    wrong = welcome(f"conf={conf}", f"data_dir={tmp_path / 'data'}",
                    f"mephisto.architect.port={free_port()}",
                    "mephisto.blueprint.judges=[nobody]", cwd=tmp_path)
    assert wrong.returncode == 2 and "judge 'nobody' is not in" in wrong.stderr, wrong.stderr
    assert not (tmp_path / "data").exists()  # refused before anything was written
    monkeypatch.setenv(KEY_ENV, KEY)
    running = Running(tmp_path, free_port(), str(conf), "mephisto.blueprint.judges=[gpt]")
    try:
        running.wait_for(r"judges: gpt answer the task beside the workers")
        running.wait_for(r"judge 'gpt': 3 units answered now", timeout=60)
        running.wait_for(r"progress: 0/9 units completed")
    finally:
        running.process.send_signal(signal.SIGINT)
        assert running.process.wait(30) == 0
    db = Database(f"sqlite:///{tmp_path / 'data' / 'cep.sqlite3'}")
    with db.read() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 3
    db.dispose()
    assert KEY not in "".join(running.lines)


def test_the_requester_api_shows_each_judge_and_its_answers_beside_a_person_s(
        tmp_path, database_url, open_conf, fake):
    served = open_conf(str(write_study(tmp_path, 2, fake.base_url, annotators=1)),
                       database_url)
    fake.cost = 0.01
    fake.scripted = ["no"] * 3  # one question of one unit refused three times
    done = run_judge(tmp_path, database_url, "--bot", "gpt", "--concurrency", "1")
    assert done.returncode == 1
    requester = {"Authorization": f"Bearer {requester_token(served.secret)}"}
    with live_server(served) as base, http_client(base_url=base, timeout=30) as client:
        assert annotate(base, workers=1, mistakes=0.0) == 2
        (judge,) = client.get("/api/requester/judges", headers=requester).json()["judges"]
        assert {k: judge[k] for k in ("judge", "units_answered", "units_open", "calls",
                                      "invalid_replies", "failed_calls")} == {
            "judge": "gpt", "units_answered": 1, "units_open": 1, "calls": 3 + 3,
            "invalid_replies": 3, "failed_calls": 0}
        assert judge["cost"] == pytest.approx(0.06) and judge["settings"]["model"] == \
            "fake-judge-1"
        people = client.get("/api/requester/review", headers=requester).json()["items"]
        shown = {}
        for item in people:
            found = client.get(f"/api/requester/units/{item['unit_id']}/judges",
                               headers=requester).json()["judges"]
            (shown[item["unit_id"]],) = found
        answered = [j for j in shown.values() if j["answers"] is not None]
        waiting = [j for j in shown.values() if j["answers"] is None]
        assert len(answered) == 1 and len(waiting) == 1
        unit_id = next(u for u, j in shown.items() if j in answered)
        person = client.get(f"/api/requester/units/{unit_id}", headers=requester).json()
        assert set(answered[0]["answers"]) == {d["key"] for d in person["payload"]["dialogues"]}
        assert [f["outcome"] for f in waiting[0]["failures"]] == ["invalid"] * 3
        assert "no JSON object" in waiting[0]["failures"][0]["reason"]
        missing = client.get(f"/api/requester/units/{answered[0]['unit_id']}/judges",
                             headers=requester)
        assert missing.status_code == 404  # a judge's own unit is no person's
        assert client.get("/api/requester/judges").status_code == 401

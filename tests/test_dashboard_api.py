"""The dashboard's views and actions over a static task with real submissions, on SQLite and
PostgreSQL (durations, time buckets and the bucket filter are SQL of each database)."""

from __future__ import annotations

import csv
import io

import pytest
from click.testing import CliRunner
from helpers import app_client, dialogue, write_task

from collection_and_annotations.cli import main
from collection_and_annotations.export import answer_counts
from collection_and_annotations.providers.local import link_signature
from collection_and_annotations.server.app import create_app
from collection_and_annotations.server.auth import requester_token

API = "/api/requester"


class Study:
    """A static task of four one-annotator items: w1 submits two (ratings 5, 3), w2 one
    (rating 5, rejected), w3 holds one; w1's first unit got a bonus."""

    def __init__(self, served, client):
        self.served, self.client = served, client
        self.auth = {"Authorization": f"Bearer {requester_token(served.secret)}"}
        self.units: dict[str, list[str]] = {}
        for worker, rating in (("w1", 5), ("w1", 3), ("w2", 5)):
            self.units.setdefault(worker, []).append(self.submit(worker, rating))
        self.held, self.held_auth = self.claim("w3")
        self.pseudonyms = {w["worker_id"]: w["pseudonym"]
                           for w in self.get("workers/identities")["workers"]}
        assert self.post(f"units/{self.units['w2'][0]}/review",
                         {"decision": "reject", "reason": "ignored the task"}).status_code == 200
        assert self.post(f"units/{self.units['w1'][0]}/bonus",
                         {"amount": 0.5, "reason": "careful"}).status_code == 200

    def claim(self, worker: str) -> tuple[str, dict[str, str]]:
        visit = f"a{sum(map(len, self.units.values()))}"
        claimed = self.client.post("/api/claim", json={
            "worker_id": worker, "assignment_id": visit,
            "sig": link_signature(self.served.secret, worker, visit)})
        assert claimed.status_code == 200, claimed.json()
        body = claimed.json()
        return body["unit_id"], {"Authorization": f"Bearer {body['token']}"}

    def submit(self, worker: str, rating: int) -> str:
        return self.answer(*self.claim(worker), rating)

    def answer(self, unit_id: str, headers: dict[str, str], rating: int) -> str:
        unit = self.client.get(f"/api/units/{unit_id}", headers=headers).json()
        key = unit["dialogues"][0]["key"]
        reply = self.client.post(f"/api/units/{unit_id}/submit", headers=headers, json={
            "answers": {key: {"overall_quality": {"dialogue": {"Overall": rating}}}}})
        assert reply.status_code == 200, reply.json()
        return unit_id

    def get(self, path: str, status: int = 200) -> dict:
        reply = self.client.get(f"{API}/{path}", headers=self.auth)
        assert reply.status_code == status, reply.text
        return reply.json()

    def post(self, path: str, body: dict):
        return self.client.post(f"{API}/{path}", json=body, headers=self.auth)


@pytest.fixture
def study(tmp_path, open_conf, database_url):
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", ["overall_quality"])]} for i in range(4)]
    conf = write_task(tmp_path / "task", lines, {f"g{i}": 1 for i in range(4)})
    served = open_conf(str(conf), database_url)
    return Study(served, app_client(create_app(served)))


def test_overview_counts_the_task(study):
    shown = study.get("overview")
    assert shown["task"] == "t" and shown["current_run"] == study.served.run_id
    assert shown["state"] == "running" and shown["provider"] == "local"
    assert shown["server_time"].endswith("Z")
    assert shown["progress"] == {"total": 4, "done": 3, "in_progress": 1, "waiting": 0}
    [run] = shown["runs"]
    assert run["units"] == {"launched": 0, "assigned": 1, "completed": 3}
    assert run["status"] == "running" and run["started_at"].endswith("Z")
    assert shown["throughput"]["bucket_seconds"] == 60
    assert sum(p["submissions"] for p in shown["throughput"]["points"]) == 3
    assert 1 <= len(shown["throughput"]["points"]) <= 2
    timing = shown["time_per_unit"]
    assert timing["count"] == 3 and 0 <= timing["median_s"] <= timing["p90_s"] < 60
    # no screening or gold in this task: the page shows no cards for them
    assert shown["screening"] == {"passed": 0, "failed": 0, "pass_rate": None, "used": False}
    assert shown["gold"] == {"passed": 0, "failed": 0, "pass_rate": None, "used": False}
    assert shown["live_chats"] == 0 and shown["quotas"] == []
    assert shown["sync_failures"] == {"reviews": 0, "bonuses": 0}


def test_workers_with_their_work_qualifications_and_flags(study):
    w1, w3 = study.pseudonyms["w1"], study.pseudonyms["w3"]
    listed = {w["pseudonym"]: w for w in study.get("workers")["workers"]}
    assert set(listed) == set(study.pseudonyms.values())
    assert listed[w1]["units_done"] == 2 and listed[w1]["in_progress"] == 0
    assert listed[w1]["median_s"] is not None and listed[w1]["last_seen"].endswith("Z")
    assert listed[w3]["units_done"] == 0 and listed[w3]["in_progress"] == 1
    assert listed[w3]["median_s"] is None
    assert listed[w1]["screening"] is None and listed[w1]["gold"] == {"passed": 0, "failed": 0}
    assert listed[w1]["qualifications"] == [] and listed[w1]["flags"] == []
    granted = study.post(f"workers/{w1}/qualifications/grant", {"name": "skilled", "value": 2})
    assert granted.status_code == 200 and granted.json()["ok"] is True
    assert "w1" not in granted.json()["message"]  # pseudonyms only
    assert granted.json()["worker"] == w1 and granted.json()["value"] == 2
    assert study.post(f"workers/{w3}/block", {"reason": "spam"}).status_code == 200
    listed = {w["pseudonym"]: w for w in study.get("workers")["workers"]}
    assert listed[w1]["qualifications"] == [{"name": "skilled", "value": 2}]
    assert listed[w3]["flags"] == ["blocked"]
    revoked = study.post(f"workers/{w1}/qualifications/revoke", {"name": "skilled"})
    assert revoked.status_code == 200 and revoked.json()["ok"] is True
    assert study.post(f"workers/{w1}/qualifications/revoke",
                      {"name": "skilled"}).status_code == 404
    assert study.post("workers/w_nobody/qualifications/grant",
                      {"name": "skilled"}).status_code == 404
    assert study.post(f"workers/{w1}/qualifications/grant", {}).status_code == 400
    listed = {w["pseudonym"]: w for w in study.get("workers")["workers"]}
    assert listed[w1]["qualifications"] == []


def test_review_queue_filters_and_pages(study):
    w1 = study.pseudonyms["w1"]
    everything = study.get("review")
    assert everything["total"] == 3 and everything["offset"] == 0 and everything["limit"] == 50
    assert everything["buckets"] == ["overall_quality"]
    newest_first = [study.units["w2"][0], study.units["w1"][1], study.units["w1"][0]]
    assert [i["unit_id"] for i in everything["items"]] == newest_first
    rejected = everything["items"][0]
    assert rejected["worker"] == study.pseudonyms["w2"] and rejected["status"] == "rejected"
    assert rejected["pool"] == "main" and rejected["kind"] == "static"
    assert rejected["decision"]["decision"] == "reject"
    assert rejected["decision"]["sync_state"] == "recorded"  # local links: nothing to send
    assert rejected["decision"]["decided_at"].endswith("Z")
    assert rejected["flagged"] is False and rejected["verified"] is None
    assert rejected["buckets"] == ["overall_quality"] and rejected["bots"] == []
    assert 0 <= rejected["duration_s"] < 60 and rejected["submitted_at"].endswith("Z")

    def ids(query: str) -> list[str]:
        return [i["unit_id"] for i in study.get(f"review?{query}")["items"]]

    assert ids(f"worker={w1}") == study.units["w1"][::-1]
    assert ids("status=rejected") == study.units["w2"]
    assert ids("decision=none") == study.units["w1"][::-1]
    assert ids("decision=reject") == study.units["w2"]
    assert ids("bucket=overall_quality") == newest_first
    assert ids("bucket=turn_quality") == []
    assert ids("pool=main") == newest_first and ids("pool=gold") == []
    assert ids("flag=flagged") == [] and ids("flag=unverified") == []
    page = study.get("review?offset=1&limit=1")
    assert page["total"] == 3 and [i["unit_id"] for i in page["items"]] == newest_first[1:2]
    assert study.get(f"review?worker={w1}&decision=none&limit=1")["total"] == 2
    assert "status must be one of" in study.get("review?status=lost", 400)["error"]
    assert study.get("review?limit=500", 400)["error"].startswith("offset must be")


def test_one_submission_as_its_worker_saw_it(study):
    unit_id = study.units["w1"][0]
    shown = study.get(f"units/{unit_id}")
    assert shown["unit_id"] == unit_id and shown["worker"] == study.pseudonyms["w1"]
    assert shown["status"] == "completed" and shown["decision"] is None
    [bonus] = shown["bonuses"]
    assert (bonus["amount"], bonus["reason"], bonus["state"]) == (0.5, "careful", "recorded")
    assert isinstance(bonus["id"], int) and bonus["last_error"] is None
    payload = shown["payload"]  # the worker page's GET /api/units/<id>, read only
    assert payload["unit_id"] == unit_id and payload["kind"] == "annotation"
    assert payload["status"] == "completed" and payload["task"]["title"] == "Test task"
    key = payload["dialogues"][0]["key"]
    assert shown["answers"] == {key: {"overall_quality": {"dialogue": {"Overall": 5}}}}
    # the data's id, for the requester (units are served in a random order)
    assert list(shown["dialogue_ids"]) == [key]
    assert shown["dialogue_ids"][key] in {"d0", "d1", "d2", "d3"}
    assert shown["timings"]["server"]["duration_seconds"] >= 0
    assert shown["conversations"] == []
    assert study.get("units/u_missing", 404)["error"].startswith("no submitted unit")
    assert study.get(f"units/{study.held}", 404)  # held, not submitted


def test_bulk_review_decides_each_unit_on_its_own(study):
    approve = study.units["w1"] + ["u_missing", study.units["w2"][0]]
    reply = study.post("units/bulk-review", {"unit_ids": approve, "decision": "approve",
                                             "reason": ""})
    assert reply.status_code == 200
    results = reply.json()["results"]
    assert [r["unit_id"] for r in results] == approve
    assert [r["ok"] for r in results] == [True, True, False, False]
    assert results[0]["decision"]["decision"] == "approve"
    assert results[0]["decision"]["sync_state"] == "recorded"
    assert "no unit" in results[2]["error"] and "already decided" in results[3]["error"]
    assert [i["status"] for i in study.get("review?decision=approve")["items"]] == [
        "accepted", "accepted"]
    assert study.post("units/bulk-review", {"unit_ids": [], "decision": "approve"}
                      ).status_code == 400
    assert study.post("units/bulk-review", {"unit_ids": ["u"] * 501, "decision": "approve"}
                      ).status_code == 400


def test_results_count_the_answers_given_and_list_the_downloads(study):
    shown = study.get("results")
    [question] = shown["questions"]
    assert question["bucket"] == "overall_quality" and question["n"] == 3
    assert question["answers"] == {"3": 1, "5": 2}
    assert question["question"] and question["text"]
    assert [d["url"] for d in shown["downloads"]] == [
        "/api/requester/submissions?format=jsonl", "/api/requester/submissions?format=csv",
        "/api/requester/submissions?format=items-jsonl",
        "/api/requester/workers/identities?format=csv", "/api/requester/report"]
    study.answer(study.held, study.held_auth, 3)  # a new submission is counted at once
    [question] = study.get("results")["questions"]
    assert question["n"] == 4 and question["answers"] == {"3": 2, "5": 2}


def test_identities_as_csv(study):
    reply = study.client.get(f"{API}/workers/identities?format=csv", headers=study.auth)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/csv")
    assert "attachment" in reply.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(reply.text)))
    assert {(r["worker_id"], r["pseudonym"]) for r in rows} == set(study.pseudonyms.items())
    assert {r["worker_id"]: r["units_submitted"] for r in rows} == {"w1": "2", "w2": "1",
                                                                    "w3": "0"}
    assert study.client.get(f"{API}/workers/identities?format=xml",
                            headers=study.auth).status_code == 400


def test_the_report_link_serves_what_analyze_writes(study, tmp_path):
    reply = study.client.get(f"{API}/report", headers=study.auth)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/html")
    assert 'filename="t-report.html"' in reply.headers["Content-Disposition"]
    served = reply.text
    written = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["analyze", "--task", "t", "--output", str(written),
                                       "--database-url", study.served.db.url])
    assert result.exit_code == 0, result.output
    assert "<title>Evaluation results: t</title>" in served
    assert served.replace("Evaluation results: t", "Evaluation results") == \
        written.read_text(encoding="utf-8")


def test_results_read_only_what_arrived_since(study, monkeypatch):
    read: list[tuple[int, int | None]] = []
    real = answer_counts.whole_submissions

    def spy(*args, **kwargs):
        read.append(kwargs["ids"])
        yield from real(*args, **kwargs)

    monkeypatch.setattr(answer_counts, "whole_submissions", spy)
    study.get("results")
    study.get("results")  # nothing new: nothing read
    first = read[-1]
    study.answer(study.held, study.held_auth, 3)
    [question] = study.get("results")["questions"]
    assert question["n"] == 4 and question["answers"] == {"3": 2, "5": 2}
    assert read[-1][0] == first[1] and read[-1][1] > first[1]  # only the new submission
    # A submission with a lower id that committed late shows in the count, not in the window:
    # the counts are read again in full.
    tally = answer_counts._tallies[(str(study.served.db.engine.url), "t")]
    tally.seen -= 1
    (counted,) = tally.counts.values()
    counted["3"] -= 1
    [question] = study.get("results")["questions"]
    assert question["answers"] == {"3": 2, "5": 2} and read[-1][0] == 0

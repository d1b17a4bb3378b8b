"""MTurk with botocore's Stubber (never the real service), external links, and review rows:
units returned to the pool, and local decisions recorded without a platform."""

from __future__ import annotations

import csv
import io

import boto3
import pytest
from botocore.stub import ANY, Stubber
from helpers import http_get, live_server
from sqlalchemy import func, select

from collection_and_annotations.engine.runs import end_run
from collection_and_annotations.providers import mturk
from collection_and_annotations.providers.external import visit_code
from collection_and_annotations.storage.models import Unit


@pytest.fixture
def stubbed(monkeypatch):
    client = boto3.client("mturk", region_name="us-east-1", aws_access_key_id="x",
                          aws_secret_access_key="x",
                          endpoint_url=mturk.ENDPOINTS[True])
    monkeypatch.setattr(mturk, "mturk_client", lambda sandbox: client)
    with Stubber(client) as stub:
        yield stub


def test_mturk_hit_preview_approve_bonus(task_for, stubbed):
    stubbed.add_response("create_hit", {"HIT": {"HITId": "HIT1"}}, {
        "MaxAssignments": 3, "Title": "Test task", "Description": "Rate dialogues",
        "Keywords": "", "Reward": "1.50", "AssignmentDurationInSeconds": 600,
        "LifetimeInSeconds": 7 * 86400, "Question": ANY})
    task = task_for("mephisto.provider._provider_type=mturk_sandbox")
    stubbed.assert_no_pending_responses()
    assert task.served.provider.name == "mturk_sandbox"
    question = mturk.external_question(f"{task.served.provider.public_url}/api/enter")
    assert "<ExternalURL>http://127.0.0.1:3999/api/enter</ExternalURL>" in question
    preview = task.client.post("/api/claim", json={"assignmentId": mturk.PREVIEW,
                                                   "workerId": "A1", "hitId": "HIT1"})
    assert preview.status_code == 409 and "preview" in preview.json()["error"]
    with task.served.db.read() as session:
        assert session.scalar(select(func.count()).where(Unit.worker_id.is_not(None))) == 0
    entered = task.client.get(f"/api/enter?assignmentId={mturk.PREVIEW}&workerId=A1")
    assert entered.status_code == 409
    unit_id, submitted = task.submit({"assignmentId": "ASG1", "workerId": "A1",
                                      "hitId": "HIT1", "turkSubmitTo": "https://evil.example"})
    assert submitted["external_submit"] == {
        "url": "https://workersandbox.mturk.com/mturk/externalSubmit",
        "fields": {"assignmentId": "ASG1"}}
    # MTurk shows the page in its frame and receives the form; nobody else may do either
    with live_server(task.served) as base:
        page = http_get(f"{base}/")
    csp = page.headers["Content-Security-Policy"]
    assert "frame-ancestors https://workersandbox.mturk.com" in csp
    assert "form-action 'self' https://workersandbox.mturk.com;" in csp
    assert "X-Frame-Options" not in page.headers
    stubbed.add_response("approve_assignment", {}, {"AssignmentId": "ASG1"})
    assert task.post(f"units/{unit_id}/review", {"decision": "approve"}).json()[
        "sync_state"] == "done"
    stubbed.add_response("send_bonus", {}, {"WorkerId": "A1", "AssignmentId": "ASG1",
                                            "BonusAmount": "0.50", "Reason": "thanks",
                                            "UniqueRequestToken": ANY})
    bonus = task.post(f"units/{unit_id}/bonus", {"amount": 0.5, "reason": "thanks"})
    assert bonus.json()["state"] == "paid"
    stubbed.assert_no_pending_responses()


def test_mturk_adds_assignments_when_work_is_added(task_for, stubbed, capsys):
    stubbed.add_response("create_hit", {"HIT": {"HITId": "HIT1"}}, {
        "MaxAssignments": 12, "Title": ANY, "Description": ANY, "Keywords": ANY,
        "Reward": ANY, "AssignmentDurationInSeconds": ANY, "LifetimeInSeconds": ANY,
        "Question": ANY})
    first = task_for("mephisto.provider._provider_type=mturk", groups=12)
    end_run(first.served.db, first.served.run_id, "stopped")
    stubbed.add_response("get_hit", {"HIT": {"HITId": "HIT1", "MaxAssignments": 12}},
                         {"HITId": "HIT1"})
    stubbed.add_response("create_additional_assignments_for_hit", {}, {
        "HITId": "HIT1", "NumberOfAdditionalAssignments": 3, "UniqueRequestToken": "HIT1-15"})
    second = task_for("mephisto.provider._provider_type=mturk", groups=15)
    assert "3 assignment(s) added for the work added" in capsys.readouterr().out
    end_run(second.served.db, second.served.run_id, "stopped")
    stubbed.add_response("get_hit", {"HIT": {"HITId": "HIT1", "MaxAssignments": 15}},
                         {"HITId": "HIT1"})
    stubbed.add_client_error("create_additional_assignments_for_hit", "RequestError",
                             "cannot extend")
    third = task_for("mephisto.provider._provider_type=mturk", groups=16)  # starts anyway
    assert third.served.run_id > second.served.run_id
    assert "warning: MTurk did not add the 1 assignment(s)" in capsys.readouterr().out
    stubbed.assert_no_pending_responses()


def test_mturk_reject_failure_is_recorded(task_for, stubbed):
    stubbed.add_response("create_hit", {"HIT": {"HITId": "HIT1"}})
    task = task_for("mephisto.provider._provider_type=mturk")
    unit_id, _ = task.submit({"assignmentId": "ASG1", "workerId": "A1"})
    stubbed.add_client_error("reject_assignment", "ServiceFault", "try later")
    reply = task.post(f"units/{unit_id}/review", {"decision": "reject", "reason": "empty"})
    assert reply.json()["sync_state"] == "failed"
    assert "try later" in reply.json()["last_error"]


def test_external_link_and_hmac_code(task_for):
    task = task_for("mephisto.provider._provider_type=external",
                    "mephisto.provider.worker_id_param=PID",
                    "mephisto.provider.completion_url='https://crowd.example/done?c={code}'")
    provider = task.served.provider
    assert provider.url_template().endswith("/api/enter?PID=WORKER_ID&assignment_id=SESSION_ID")
    entered = task.client.get("/api/enter?PID=alice&assignment_id=v1")
    assert entered.status_code == 302 and "sig=" in entered.headers["location"]
    forged = task.client.post("/api/claim", json={"worker_id": "alice", "assignment_id": "v1"})
    assert forged.status_code == 403  # unsigned: only the entry link vouches
    query = entered.headers["location"].split("?", 1)[1]
    claim = dict(part.split("=", 1) for part in query.split("&"))
    _, submitted = task.submit(claim)
    code = visit_code(task.served.secret, "alice", "v1")
    assert submitted["completion_code"] == code != visit_code(task.served.secret, "bob", "v1")
    assert code != visit_code(task.served.secret, "alice", "v2")
    assert submitted["redirect_url"] == f"https://crowd.example/done?c={code}"


def test_rejected_unit_returns_to_the_pool(task_for):
    task = task_for("mephisto.task.return_rejected_units=true", groups=1)
    unit_id, _ = task.submit({"worker_id": "w1", "assignment_id": "a1"})
    assert task.client.post("/api/claim", json={"worker_id": "w2", "assignment_id": "a"}
                            ).status_code != 200  # no work left
    reply = task.post(f"units/{unit_id}/review", {"decision": "reject", "reason": "spam"})
    assert reply.json()["sync_state"] == "not_sent"  # local: recorded only
    again = task.post(f"units/{unit_id}/review", {"decision": "reject", "reason": "spam"})
    assert again.status_code == 200
    other = task.post(f"units/{unit_id}/review", {"decision": "approve", "reason": ""})
    assert other.status_code == 409
    with task.served.db.read() as session:
        statuses = sorted(session.scalars(select(Unit.status)))
    assert statuses == ["launched", "returned"]
    new_unit, _ = task.submit({"worker_id": "w2", "assignment_id": "a2"})
    assert new_unit != unit_id
    export = task.client.get("/api/requester/submissions", headers=task.auth).json()
    reviews = {s["unit_id"]: s["review"] for s in export["submissions"]}
    assert reviews[unit_id]["decision"] == "reject" and reviews[new_unit] is None
    rows = list(csv.DictReader(io.StringIO(task.client.get(
        "/api/requester/submissions?format=csv", headers=task.auth).text)))
    assert {(r["unit_id"], r["review_decision"]) for r in rows} == {(unit_id, "reject"),
                                                                     (new_unit, "")}


def test_block_by_pseudonym_and_identities(task_for):
    task = task_for()
    task.submit({"worker_id": "w1", "assignment_id": "a1"})
    listed = task.client.get("/api/requester/workers/identities", headers=task.auth).json()
    (worker,) = listed["workers"]
    assert worker["worker_id"] == "w1" and worker["units_submitted"] == 1
    blocked = task.post(f"workers/{worker['pseudonym']}/block")
    assert blocked.status_code == 200 and blocked.json()["platform"] == "not_sent"
    refused = task.client.post("/api/claim", json={"worker_id": "w1", "assignment_id": "a2"})
    assert refused.status_code == 403
    assert task.post(f"workers/{worker['pseudonym']}/unblock").status_code == 200
    assert task.post("workers/nobody/block").status_code == 404


def test_mturk_block_and_unblock_reach_the_platform(task_for, stubbed):
    stubbed.add_response("create_hit", {"HIT": {"HITId": "HIT1"}})
    task = task_for("mephisto.provider._provider_type=mturk_sandbox")
    task.submit({"assignmentId": "ASG1", "workerId": "A1", "hitId": "HIT1"})
    (worker,) = task.client.get("/api/requester/workers/identities",
                                headers=task.auth).json()["workers"]
    stubbed.add_response("create_worker_block", {}, {"WorkerId": "A1", "Reason": "spam"})
    blocked = task.post(f"workers/{worker['pseudonym']}/block", {"reason": "spam"})
    assert blocked.json()["platform"] == "done"
    stubbed.add_client_error("delete_worker_block", "ServiceUnavailable", http_status_code=503)
    unblocked = task.post(f"workers/{worker['pseudonym']}/unblock")
    assert unblocked.status_code == 200 and unblocked.json()["blocked"] is False
    assert unblocked.json()["platform"].startswith("failed: ")  # lifted here all the same
    assert task.client.post("/api/claim", json={"assignmentId": "ASG2", "workerId": "A1",
                                                "hitId": "HIT1"}).status_code == 200
    stubbed.assert_no_pending_responses()

"""Prolific against a fake Prolific API on 127.0.0.1: the draft study, identity from the study
URL, the completion redirect, review and bonus calls made once, and forged identities."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import select

from collection_and_annotations.engine.provider_sync import sync_due, verify_visits
from collection_and_annotations.engine.runs import end_run
from collection_and_annotations.providers.prolific_api import ProlificApi
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import (
    Bonus,
    ReviewDecision,
    Submission,
    Unit,
    utcnow,
)

PROLIFIC = "mephisto.provider._provider_type=prolific"
LONG = "The answers ignore the instructions: every dialogue got the same rating in under " \
       "two seconds, which no careful reading allows."


def _task(task_for, fake, *overrides, groups=3):
    task = task_for(PROLIFIC, "mephisto.provider.completion_code=C0DE1234", *overrides,
                    groups=groups)
    task.served.provider.api.client.timeout = httpx.Timeout(0.5)
    return task


def _visit(task, fake, pid, session, listed=True):
    if listed:
        fake.submissions["study1"].append({"id": session, "participant_id": pid,
                                           "status": "ACTIVE"})
    return task.submit({"PROLIFIC_PID": pid, "STUDY_ID": "study1", "SESSION_ID": session})


def test_draft_study_payload_field_by_field(task_for, fake_prolific, open_conf):
    task = _task(task_for, fake_prolific)
    (method, path, body), = fake_prolific.calls
    assert (method, path) == ("POST", "studies/")
    public = task.served.provider.public_url
    assert body == {
        "name": "Test task", "internal_name": "t", "description": "Rate dialogues",
        "external_study_url": f"{public}/api/enter?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
                              "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        "prolific_id_option": "url_parameters",
        "completion_codes": [{"code": "C0DE1234", "code_type": "COMPLETED",
                              "actions": [{"action": "MANUALLY_REVIEW"}]}],
        "total_available_places": 3, "estimated_completion_time": 10, "reward": 150}
    assert fake_prolific.studies["study1"]["status"] == "UNPUBLISHED"  # nobody published it


@pytest.mark.parametrize("form", ["{host}", "{host}/", "{host}/api/v1", "{host}/api/v1/"])
def test_prolific_url_is_read_as_prolifics_cli_reads_it(task_for, fake_prolific, monkeypatch,
                                                        form):
    """The host, as Prolific's CLI takes PROLIFIC_URL (it adds /api/v1/ itself), or the API
    base itself."""
    monkeypatch.setenv("PROLIFIC_URL", form.format(host=fake_prolific.url.removesuffix(
        "/api/v1/")))
    task = _task(task_for, fake_prolific)
    assert fake_prolific.count("POST", "studies/") == 1
    _, submitted = _visit(task, fake_prolific, "p1", "s1")
    assert submitted["completion_code"] == "C0DE1234"


def test_places_are_raised_when_work_is_added(task_for, fake_prolific):
    first = _task(task_for, fake_prolific)
    end_run(first.served.db, first.served.run_id, "stopped")  # the launcher stopped
    _task(task_for, fake_prolific, groups=5)  # two more groups in the data: two more units
    assert fake_prolific.count("POST", "studies/") == 1  # the same study, not a second one
    assert [(m, p, b) for m, p, b in fake_prolific.calls if m == "PATCH"] == [
        ("PATCH", "studies/study1/", {"total_available_places": 5})]
    assert fake_prolific.studies["study1"]["total_available_places"] == 5


def test_entry_link_claim_and_completion_redirect(task_for, fake_prolific):
    task = _task(task_for, fake_prolific)
    entered = task.client.get("/api/enter?PROLIFIC_PID=p1&STUDY_ID=study1&SESSION_ID=s1")
    assert entered.status_code == 302 and "worker_id=p1" in entered.headers["location"]
    location = entered.headers["location"]
    assert "assignment_id=s1" in location and "sig=" in location
    other = task.client.get("/api/enter?PROLIFIC_PID=p1&STUDY_ID=elsewhere&SESSION_ID=s1")
    assert other.status_code == 403
    _, submitted = _visit(task, fake_prolific, "p1", "s1")
    assert submitted["completion_code"] == "C0DE1234"
    assert submitted["redirect_url"] == (
        "https://app.prolific.com/submissions/complete?cc=C0DE1234")


def test_approve_sent_once_after_a_failure(task_for, fake_prolific):
    task = _task(task_for, fake_prolific)
    unit_id, _ = _visit(task, fake_prolific, "p1", "s1")
    fake_prolific.fail["transition"] = ["http"]
    first = task.post(f"units/{unit_id}/review", {"decision": "approve", "reason": ""})
    assert first.status_code == 200
    assert first.json()["sync_state"] == "failed" and "503" in first.json()["last_error"]
    again = task.post(f"units/{unit_id}/review", {"decision": "approve", "reason": ""})
    assert again.json()["sync_state"] == "failed"  # retried request: no second decision
    with task.served.db.session() as session:  # the back-off has passed
        session.query(ReviewDecision).update({"next_attempt_at": ReviewDecision.decided_at})
    sync_due(task.served.db, task.served.provider, task.served.task_id)
    sync_due(task.served.db, task.served.provider, task.served.task_id)
    transitions = [b for m, p, b in fake_prolific.calls if p == "submissions/s1/transition/"]
    assert transitions == [{"action": "APPROVE"}, {"action": "APPROVE"}]  # failed, then done
    done = task.post(f"units/{unit_id}/review", {"decision": "approve", "reason": ""})
    assert done.json()["sync_state"] == "done" and done.json()["attempts"] == 2


def test_a_decision_being_sent_is_sending_and_sent_again_after_a_crash(task_for,
                                                                        fake_prolific):
    task = _task(task_for, fake_prolific)
    unit_id, _ = _visit(task, fake_prolific, "p1", "s1")
    _killed_mid_call(task, fake_prolific, "transition", f"units/{unit_id}/review",
                     {"decision": "approve", "reason": ""}, ReviewDecision.sync_state,
                     "sending")
    sync_due(task.served.db, task.served.provider, task.served.task_id)
    assert _read(task, ReviewDecision.sync_state) == "sending"  # in its lease
    _lease_runs_out(task, ReviewDecision)
    sync_due(task.served.db, task.served.provider, task.served.task_id)
    assert _read(task, ReviewDecision.sync_state) == "done"
    fake_prolific.settle()  # the fake finishes the call the killed process made
    assert fake_prolific.count("POST", "submissions/s1/transition/") == 2


def test_reject_needs_a_long_message_and_a_category(task_for, fake_prolific):
    task = _task(task_for, fake_prolific)
    unit_id, _ = _visit(task, fake_prolific, "p1", "s1")
    short = task.post(f"units/{unit_id}/review", {"decision": "reject", "reason": "bad",
                                                  "rejection_category": "LOW_EFFORT"})
    assert short.status_code == 422 and "at least 100 characters" in short.json()["error"]
    nocat = task.post(f"units/{unit_id}/review", {"decision": "reject", "reason": LONG})
    assert nocat.status_code == 422 and "rejection_category" in nocat.json()["error"]
    assert fake_prolific.count("POST", "submissions/") == 0
    done = task.post(f"units/{unit_id}/review", {"decision": "reject", "reason": LONG,
                                                 "rejection_category": "LOW_EFFORT"})
    assert done.json()["sync_state"] == "done"
    assert fake_prolific.calls[-1][2] == {"action": "REJECT", "message": LONG,
                                          "rejection_category": "LOW_EFFORT"}


def test_soft_reject_asks_the_participant_to_return(task_for, fake_prolific):
    task = _task(task_for, fake_prolific)
    unit_id, _ = _visit(task, fake_prolific, "p1", "s1")
    blank = task.post(f"units/{unit_id}/review", {"decision": "soft_reject", "reason": " "})
    assert blank.status_code == 422 and "return their submission" in blank.json()["error"]
    assert fake_prolific.count("POST", "submissions/") == 0
    reply = task.post(f"units/{unit_id}/review", {"decision": "soft_reject",
                                                  "reason": "Did not finish the study"})
    assert reply.json()["sync_state"] == "done"
    assert [(p, b) for m, p, b in fake_prolific.calls if m == "POST"][-1] == (
        "submissions/s1/request-return/", {"request_return_reasons": ["Did not finish the study"]})


def _due_now(task):
    with task.served.db.session() as session:
        session.query(Bonus).update({"next_attempt_at": Bonus.created_at})


@pytest.mark.parametrize(("failing", "failure"), [("bonus-setup", "http"), ("pay", 429)])
def test_bonus_paid_once_when_a_call_fails_first(task_for, fake_prolific, failing, failure):
    """A set-up that failed, or a pay Prolific refused (so it surely did not pay), is tried
    again until paid."""
    task = _task(task_for, fake_prolific)
    unit_id, _ = _visit(task, fake_prolific, "p1", "s1")
    fake_prolific.fail[failing] = [failure]
    body = {"amount": 0.5, "reason": "careful work"}
    first = task.post(f"units/{unit_id}/bonus", body).json()
    assert first["state"] == ("failed" if failing == "bonus-setup" else "set_up")
    assert task.post(f"units/{unit_id}/bonus", body).json()["bonus_id"] == first["bonus_id"]
    _due_now(task)
    sync_due(task.served.db, task.served.provider, task.served.task_id)
    sync_due(task.served.db, task.served.provider, task.served.task_id)
    assert task.post(f"units/{unit_id}/bonus", body).json()["state"] == "paid"
    assert len(fake_prolific.paid) == 1
    setups = [b for m, p, b in fake_prolific.calls if p == "submissions/bonus-payments/"]
    assert setups[-1] == {"study_id": "study1", "csv_bonuses": "p1,0.50\n"}
    # a pay that failed with an answer is retried with the same bonus id, never a new set-up
    assert len(setups) == (2 if failing == "bonus-setup" else 1)


def test_pay_with_unknown_outcome_is_never_repeated(task_for, fake_prolific):
    task = _task(task_for, fake_prolific)
    unit_id, _ = _visit(task, fake_prolific, "p1", "s1")
    fake_prolific.fail["pay"] = ["slow"]  # Prolific pays, the answer comes too late
    reply = task.post(f"units/{unit_id}/bonus", {"amount": 1, "reason": "great"}).json()
    assert reply["state"] == "uncertain"
    _due_now(task)
    sync_due(task.served.db, task.served.provider, task.served.task_id)
    fake_prolific.settle()  # the fake finishes the slow call
    assert fake_prolific.paid == ["bonus1"] and fake_prolific.count("POST", "bulk-bonus") == 1


@pytest.mark.parametrize("status", [408, 502, 503])
def test_a_pay_answered_by_a_gateway_error_is_never_repeated(task_for, fake_prolific, status):
    """A timeout or gateway error says nothing of whether Prolific paid: uncertain."""
    task = _task(task_for, fake_prolific)
    unit_id, _ = _visit(task, fake_prolific, "p1", "s1")
    fake_prolific.fail["pay"] = [status]
    reply = task.post(f"units/{unit_id}/bonus", {"amount": 1, "reason": "great"}).json()
    assert reply["state"] == "uncertain" and str(status) in reply["last_error"]
    _due_now(task)
    sync_due(task.served.db, task.served.provider, task.served.task_id)
    assert fake_prolific.count("POST", "bulk-bonus") == 1


def _killed_mid_call(task, fake, route: str, path: str, body: dict, state, shows: str) -> None:
    """`POST /api/requester/<path>` in a server process that is killed while its call to
    Prolific's `route` is out (the fake answers late, and does it), once the row's `state`
    column `shows` the call is out."""
    fake.fail[route] = ["slow"]
    context = multiprocessing.get_context("fork")

    def request() -> None:
        task.served.db = Database(task.served.db.url)
        task.served.provider.api = ProlificApi(fake.url, "test-token", timeout=10)
        task.post(path, body)

    server = context.Process(target=request)
    server.start()
    deadline = time.monotonic() + 10
    while _read(task, state) != shows or fake.fail[route]:  # the fake holds the call
        assert time.monotonic() < deadline and server.is_alive(), _read(task, state)
        time.sleep(0.02)
    os.kill(server.pid, signal.SIGKILL)
    server.join(10)


def _read(task, column):
    with task.served.db.read() as session:
        return session.scalar(select(column))


def _lease_runs_out(task, model) -> None:
    with task.served.db.session() as session:
        session.query(model).update({"next_attempt_at": utcnow() - timedelta(seconds=1)})


def test_a_bonus_left_paying_by_a_crash_becomes_uncertain_after_its_lease(task_for,
                                                                          fake_prolific):
    task = _task(task_for, fake_prolific)
    unit_id, _ = _visit(task, fake_prolific, "p1", "s1")
    _killed_mid_call(task, fake_prolific, "pay", f"units/{unit_id}/bonus",
                     {"amount": 1, "reason": "great"}, Bonus.state, "paying")
    sync_due(task.served.db, task.served.provider, task.served.task_id)
    assert _read(task, Bonus.state) == "paying"  # in its lease another sender may be paying
    _lease_runs_out(task, Bonus)
    sync_due(task.served.db, task.served.provider, task.served.task_id)
    shown = task.client.get(f"/api/requester/units/{unit_id}", headers=task.auth).json()
    [bonus] = shown["bonuses"]
    assert bonus["state"] == "uncertain" and "may have paid" in bonus["last_error"]
    sync_due(task.served.db, task.served.provider, task.served.task_id)
    fake_prolific.settle()  # the fake finishes the call the killed process made
    assert fake_prolific.paid == ["bonus1"] and fake_prolific.count("POST", "bulk-bonus") == 1


def test_forged_pid_is_flagged_and_never_paid(task_for, fake_prolific):
    task = _task(task_for, fake_prolific)
    real, _ = _visit(task, fake_prolific, "p1", "s1")
    forged, _ = _visit(task, fake_prolific, "p2", "s-forged", listed=False)
    assert verify_visits(task.served.db, task.served.provider, task.served.task_id) == 1
    with task.served.db.read() as session:
        rows = dict(session.execute(select(Unit.public_id, Unit.provider_verified)).all())
        flagged = dict(session.execute(select(Unit.public_id, Submission.flagged_for_review)
                                       .join(Submission, Submission.unit_id == Unit.id)).all())
    assert rows[real] is True and rows[forged] is False
    assert flagged == {real: False, forged: True}
    refused = task.post(f"units/{forged}/review", {"decision": "approve", "reason": ""})
    assert refused.status_code == 409 and "flagged" in refused.json()["error"]
    bonus = task.post(f"units/{forged}/bonus", {"amount": 1, "reason": "x"})
    assert bonus.status_code == 409
    assert fake_prolific.count("POST", "submissions/") == 0


def test_a_returned_visit_frees_its_unit_at_once(task_for, fake_prolific):
    task = _task(task_for, fake_prolific, groups=1)
    visit = {"PROLIFIC_PID": "p1", "STUDY_ID": "study1", "SESSION_ID": "s1"}
    held = task.client.post("/api/claim", json=visit).json()["unit_id"]
    fake_prolific.submissions["study1"].append({"id": "s1", "participant_id": "p1",
                                                "status": "ACTIVE"})
    verify_visits(task.served.db, task.served.provider, task.served.task_id)
    busy = task.client.post("/api/claim", json={**visit, "PROLIFIC_PID": "p2",
                                                "SESSION_ID": "s2"})
    assert busy.status_code == 409  # the only unit is still p1's while they work
    fake_prolific.submissions["study1"][0]["status"] = "RETURNED"  # p1 gave up on Prolific
    verify_visits(task.served.db, task.served.provider, task.served.task_id)
    with task.served.db.read() as session:
        assert session.scalar(select(Unit.status).where(Unit.public_id == held)) == "launched"
    taken = task.client.post("/api/claim", json={**visit, "PROLIFIC_PID": "p2",
                                                 "SESSION_ID": "s2"})
    assert taken.status_code == 200 and taken.json()["unit_id"] == held

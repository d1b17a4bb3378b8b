"""The dashboard's payments that did not reach Prolific: listed, retried on request, and an
uncertain bonus settled by the requester (against the fake Prolific API)."""

from __future__ import annotations

import httpx

PROLIFIC = "mephisto.provider._provider_type=prolific"


def _task(task_for):
    task = task_for(PROLIFIC, "mephisto.provider.completion_code=C0DE1234")
    task.served.provider.api.client.timeout = httpx.Timeout(0.5)
    return task


def _visit(task, fake, pid, session):
    fake.submissions["study1"].append({"id": session, "participant_id": pid,
                                       "status": "ACTIVE"})
    return task.submit({"PROLIFIC_PID": pid, "STUDY_ID": "study1", "SESSION_ID": session})[0]


def _get(task, path):
    reply = task.client.get(f"/api/requester/{path}", headers=task.auth)
    assert reply.status_code == 200, reply.json()
    return reply.json()


def test_failed_sends_are_listed_and_retried_on_request(task_for, fake_prolific):
    task = _task(task_for)
    unit = _visit(task, fake_prolific, "p1", "s1")
    fake_prolific.fail["transition"] = ["http"]
    fake_prolific.fail["bonus-setup"] = ["http"]
    assert task.post(f"units/{unit}/review", {"decision": "approve", "reason": ""}
                     ).json()["sync_state"] == "failed"
    assert task.post(f"units/{unit}/bonus", {"amount": 0.5, "reason": "careful"}
                     ).json()["state"] == "failed"
    assert _get(task, "overview")["sync_failures"] == {"reviews": 1, "bonuses": 1}
    failures = _get(task, "sync-failures")
    [review] = failures["reviews"]
    assert review["unit_id"] == unit and review["decision"] == "approve"
    assert review["attempts"] == 1 and "503" in review["last_error"]
    [bonus] = failures["bonuses"]
    assert (bonus["unit_id"], bonus["amount"], bonus["state"]) == (unit, 0.5, "failed")
    assert bonus["worker"].startswith("w_") and bonus["attempts"] == 1
    # the back-off would wait; the requester's retry sends now, and this time it works
    retried = task.post("sync-failures/retry", {})
    assert retried.status_code == 200 and retried.json() == {"reviews": [], "bonuses": []}
    assert fake_prolific.paid == ["bonus2"]
    shown = _get(task, f"units/{unit}")
    assert shown["decision"]["sync_state"] == "sent" and shown["decision"]["attempts"] == 2
    assert shown["bonuses"][0]["state"] == "paid"
    assert _get(task, "overview")["sync_failures"] == {"reviews": 0, "bonuses": 0}


def test_an_uncertain_bonus_is_settled_by_the_requester(task_for, fake_prolific):
    task = _task(task_for)
    unit = _visit(task, fake_prolific, "p1", "s1")
    fake_prolific.fail["pay"] = ["slow"]  # paid, but the answer came too late to know
    first = task.post(f"units/{unit}/bonus", {"amount": 1, "reason": "great"}).json()
    assert first["state"] == "uncertain"
    fake_prolific.settle()  # the fake finishes the slow call
    assert task.post("sync-failures/retry", {}).json()["bonuses"][0]["state"] == \
        "uncertain"  # never repeated on its own
    assert fake_prolific.count("POST", "bulk-bonus") == 1
    paid = task.post(f"bonuses/{first['bonus_id']}/resolve", {"paid": True})
    assert paid.status_code == 200 and paid.json()["state"] == "paid"
    assert fake_prolific.count("POST", "bulk-bonus") == 1
    again = task.post(f"bonuses/{first['bonus_id']}/resolve", {"paid": False})
    assert again.status_code == 409 and "only an uncertain bonus" in again.json()["error"]
    assert task.post("bonuses/999/resolve", {"paid": True}).status_code == 404


def test_an_uncertain_bonus_the_platform_did_not_pay_is_paid_once(task_for, fake_prolific):
    task = _task(task_for)
    unit = _visit(task, fake_prolific, "p1", "s1")
    fake_prolific.fail["pay"] = ["slow"]
    first = task.post(f"units/{unit}/bonus", {"amount": 1, "reason": "great"}).json()
    fake_prolific.settle()
    fake_prolific.paid.clear()  # the requester checked: Prolific shows no payment
    assert task.post(f"bonuses/{first['bonus_id']}/resolve", {"paid": "yes"}).status_code == 400
    settled = task.post(f"bonuses/{first['bonus_id']}/resolve", {"paid": False})
    assert settled.status_code == 200 and settled.json()["state"] == "paid"
    assert fake_prolific.paid == ["bonus1"]  # the same set-up paid, not a new one
    assert fake_prolific.count("POST", "submissions/bonus-payments/") == 1

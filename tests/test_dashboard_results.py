"""The dashboard's Results on the demo: questions as the worker read them (speakers named),
option labels, counts that add up with "no answer", and comparisons counted by the bot
chosen, never by the side of the screen."""

from __future__ import annotations

import time

from demo_study import RELEVANCE_Q, submit_demo
from helpers import app_client

from collection_and_annotations.server.app import create_app
from collection_and_annotations.server.auth import requester_token


def test_results_name_speakers_and_options_and_add_up(open_conf, database_url):
    served = open_conf("demo", database_url)
    submit_demo(served)
    client = app_client(create_app(served))
    reply = client.get("/api/requester/results",
                       headers={"Authorization": f"Bearer {requester_token(served.secret)}"})
    assert reply.status_code == 200, reply.text
    shown = {(q["bucket"], q["question"]): q for q in reply.json()["questions"]}
    assert "SPEAKER_" not in str([q["text"] for q in shown.values()])

    top = shown[("relevance", RELEVANCE_Q)]
    assert top["text"] == "Does Bot's reply follow from what User just said?"
    assert top["n"] == 18 and sum(top["answers"].values()) + top["no_answer"] == top["n"]
    nested = shown[("relevance", "Where does it drift?")]
    assert nested["text"].endswith("> Partly, it responds but drifts away. > Where does it "
                                   "drift?") and nested["n"] == sum(nested["answers"].values())
    problems = shown[("relevance", "Which problems does the reply have?")]
    assert problems["several"] and problems["answers"] == {"It repeats an earlier reply.": 6,
                                                           "(none)": 12}

    issues = shown[("issues", "issues_labels")]  # the stored name, shown as the question
    assert issues["text"] == "Select every label that applies to this reply:"
    assert issues["answers"] == {"off_topic": 6, "(none)": 12}
    assert issues["labels"] == {"off_topic": "Off topic"} and issues["several"]

    overall = shown[("overall_quality",
                     "Overall, how good a conversation partner was SPEAKER_X?")]
    assert overall["text"] == "Overall, how good a conversation partner was Bot?"
    assert list(overall["answers"]) == ["3", "4"] and overall["no_answer"] == 0
    assert overall["labels"] == {}  # 3 and 4 have no description; 1 and 5 would

    # by the bot chosen (the demo's data names them), whichever side each unit showed it on
    preference = shown[("preference", "In which conversation was SPEAKER_X the better "
                                      "partner?")]
    assert preference["answers"] == {"helper-a": 1, "No real difference": 1}
    assert preference["text"] == "In which conversation was Bot the better partner?"


def _wait_ready(client, auth, timeout=240.0):
    """Polls the report's status as the page does; returns every status seen."""
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.get("/api/requester/report/status", headers=auth).json()
        seen.append(status)
        if status["state"] != "running" and status["current"]:
            return seen
        time.sleep(0.2)
    raise AssertionError(f"the report was not ready in {timeout} s: {seen[-1]}")


def test_the_report_shows_progress_and_is_kept_per_data_version(open_conf, database_url):
    served = open_conf("demo", database_url)
    submit_demo(served, workers=1)
    client = app_client(create_app(served))
    auth = {"Authorization": f"Bearer {requester_token(served.secret)}"}
    seen = _wait_ready(client, auth)
    assert seen[-1]["state"] == "ready" and seen[-1]["done"] == seen[-1]["total"] > 5
    assert all(s["total"] == seen[-1]["total"] for s in seen)
    assert [s["done"] for s in seen] == sorted(s["done"] for s in seen)  # it only moves on

    started = time.monotonic()
    first = client.get("/api/requester/report", headers=auth)
    assert first.status_code == 200 and "Answers to question trees" in first.text
    assert client.get("/api/requester/report/status", headers=auth).json() == seen[-1]
    again = client.get("/api/requester/report", headers=auth)
    assert again.text == first.text and time.monotonic() - started < 5  # kept: no computing

    # a decision changes the data the report reads: it is computed again
    [unit] = [i["unit_id"] for i in client.get("/api/requester/review?limit=1",
                                               headers=auth).json()["items"]]
    assert client.post(f"/api/requester/units/{unit}/review", headers=auth, json={
        "decision": "reject", "reason": "test"}).status_code == 200
    status = client.get("/api/requester/report/status", headers=auth).json()
    assert status["state"] == "running" or not status["current"]
    assert _wait_ready(client, auth)[-1]["state"] == "ready"
    newer = client.get("/api/requester/report", headers=auth).text
    assert newer != first.text and "Left out: 1 units (1 rejected" in newer

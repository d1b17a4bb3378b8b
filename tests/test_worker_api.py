"""Worker and requester API over the app, against a real database."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest
from helpers import app_client, dialogue, write_task
from sqlalchemy import func, select

from collection_and_annotations.server.app import create_app
from collection_and_annotations.server.auth import requester_token
from collection_and_annotations.storage.models import Submission, Unit

RELEVANCE_Q = "Does SPEAKER_X's reply follow from what SPEAKER_Y just said?"
PROBLEMS_Q = "Which problems does the reply have?"


@pytest.fixture
def client_for(tmp_path, open_conf, database_url):
    def _make(lines, units, **conf):
        served = open_conf(str(write_task(tmp_path, lines, units, **conf)), database_url)
        return served, app_client(create_app(served))
    return _make


def _claim(client, worker="w1", assignment="a1", **extra):
    reply = client.post("/api/claim", json={"worker_id": worker, "assignment_id": assignment,
                                            **extra})
    return reply


def _open_unit(client, worker="w1", assignment="a1"):
    claimed = _claim(client, worker, assignment).json()
    headers = {"Authorization": f"Bearer {claimed['token']}"}
    unit = client.get(f"/api/units/{claimed['unit_id']}", headers=headers).json()
    return claimed["unit_id"], headers, unit


def _relevance_answer(turns):
    return {str(t): {RELEVANCE_Q: {"Yes, it responds to it directly.": {}}, PROBLEMS_Q: {}}
            for t in turns}


def test_unit_content_identifies_nobody(client_for):
    line = {"data": [dialogue("(12,3)_secretbot", "g1", ["relevance", "overall_quality"],
                              origin="author42")]}
    _, client = client_for([line], {"g1": 1})
    _, _, unit = _open_unit(client)
    text = json.dumps(unit)
    for leak in ("secretbot", "author42", "origin_worker_id", "dialogue_id", "(12,3)"):
        assert leak not in text
    (shown,) = unit["dialogues"]
    assert shown["key"].startswith("d_") and shown["turns"][1]["speaker"] == "system"
    assert unit["buckets"]["relevance"]["targets"] == {shown["key"]: [1, 3]}
    assert unit["buckets"]["overall_quality"]["level"] == "dialogue"
    assert unit["seconds_remaining"] > 500


def test_draft_submit_and_retry(client_for, database_url):
    served, client = client_for([{"data": [dialogue("d1", "g1", ["relevance"])]}], {"g1": 1})
    unit_id, headers, unit = _open_unit(client)
    key = unit["dialogues"][0]["key"]
    answers = {key: {"relevance": _relevance_answer([1, 3])}}
    saved = client.put(f"/api/units/{unit_id}/draft", headers=headers,
                       json={"answers": answers, "position": {"step": 1}})
    assert saved.status_code == 200
    _, _, again = _open_unit(client)  # reload of the same link
    assert again["draft"]["answers"] == answers and again["draft"]["position"] == {"step": 1}
    body = {"answers": answers, "timings": {"ms": 5}, "client_id": "c1"}
    first = client.post(f"/api/units/{unit_id}/submit", headers=headers, json=body)
    retry = client.post(f"/api/units/{unit_id}/submit", headers=headers, json=body)
    assert first.status_code == retry.status_code == 200
    assert first.json()["status"] == "completed"
    with served.db.session() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 1
        stored = session.scalars(select(Submission)).one()
        assert stored.answers == answers and stored.timings["client"] == {"ms": 5}
    changed = {key: {"relevance": _relevance_answer([1, 3]) | {}}}
    changed[key]["relevance"]["1"][PROBLEMS_Q] = {"It is hard to understand.": {}}
    assert client.post(f"/api/units/{unit_id}/submit", headers=headers,
                       json={"answers": changed}).status_code == 409
    assert _claim(client).json()["status"] == "completed"


@pytest.mark.parametrize("mutate, message", [
    (lambda a, k: a[k]["relevance"]["1"].update({RELEVANCE_Q: {"Maybe": {}}}),
     "'Maybe' is not an offered answer"),
    (lambda a, k: a[k]["relevance"].pop("3"), "turn 4, 'relevance': missing"),
    (lambda a, k: a[k]["overall_quality"].update({"dialogue": {"Overall": "5"}}),
     "must be an integer from 1 to 5"),
    (lambda a, k: a[k]["overall_quality"].update({"dialogue": {"Overall": 6}}),
     "must be an integer from 1 to 5"),
    (lambda a, k: a[k]["relevance"].update({"2": _relevance_answer([2])["2"]}),
     "'2' is not a target"),
    (lambda a, k: a[k]["relevance"]["1"].update(
        {RELEVANCE_Q: {"Yes, it responds to it directly.": {}, "No, it ignores what "
                       "SPEAKER_Y said.": {}}}), "only one answer"),
    (lambda a, k: a[k]["relevance"]["1"].update({RELEVANCE_Q: []}), "expected an object"),
])
def test_invalid_submissions_are_rejected_with_the_item(client_for, mutate, message):
    served, client = client_for(
        [{"data": [dialogue("d1", "g1", ["relevance", "overall_quality"])]}], {"g1": 1})
    unit_id, headers, unit = _open_unit(client)
    key = unit["dialogues"][0]["key"]
    answers = {key: {"relevance": _relevance_answer([1, 3]),
                     "overall_quality": {"dialogue": {"Overall": 3}}}}
    mutate(answers, key)
    reply = client.post(f"/api/units/{unit_id}/submit", headers=headers,
                        json={"answers": answers})
    assert reply.status_code == 422, reply.json()
    body = reply.json()
    assert message in body["error"] + json.dumps(body["problems"])
    assert body["problems"][0]["dialogue"] == key
    with served.db.session() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 0


def test_multiselect_speaker_filter_and_nested_tree(client_for):
    _, client = client_for([{"data": [dialogue("d1", "g1", ["issues", "relevance"])]}],
                           {"g1": 1})
    unit_id, headers, unit = _open_unit(client)
    key = unit["dialogues"][0]["key"]
    relevance = _relevance_answer([1, 3])
    relevance["3"][RELEVANCE_Q] = {"Partly, it responds but drifts away.": {}}
    answers = {key: {"issues": {"1": ["asks_question", "off_topic"]}, "relevance": relevance}}
    reply = client.post(f"/api/units/{unit_id}/submit", headers=headers, json={"answers": answers})
    assert reply.status_code == 422
    assert "Where does it drift?" not in reply.json()["error"]  # counted as incomplete
    relevance["3"][RELEVANCE_Q] = {"Partly, it responds but drifts away.": {
        "Where does it drift?": {"To something unrelated.": {}}}}
    reply = client.post(f"/api/units/{unit_id}/submit", headers=headers, json={"answers": answers})
    assert reply.status_code == 200, reply.json()


def test_signed_links_when_listening_beyond_loopback(tmp_path, open_conf, database_url):
    conf = write_task(tmp_path, [{"data": [dialogue("d1", "g1", ["relevance"])]}], {"g1": 1})
    served = open_conf(str(conf), database_url, "mephisto.architect.hostname=0.0.0.0")
    client = app_client(create_app(served))
    assert served.provider.require_signature
    assert _claim(client).status_code == 403
    assert _claim(client, sig="0" * 32).status_code == 403
    assert _claim(client, sig=12345).status_code == 403
    link = served.provider.link("w1", "a1")
    signature = link.split("sig=")[1]
    assert _claim(client, sig=signature).status_code == 200
    assert _claim(client, worker="w2", sig=signature).status_code == 403


def test_worker_token_is_checked(client_for):
    _, client = client_for([{"data": [dialogue("d1", "g1", ["relevance"])]}], {"g1": 2})
    unit_id, _, _ = _open_unit(client)
    assert client.get(f"/api/units/{unit_id}").status_code == 401
    forged = {"Authorization": "Bearer 1.deadbeef"}
    assert client.get(f"/api/units/{unit_id}", headers=forged).status_code == 401
    _, other, _ = _open_unit(client, worker="w2", assignment="x")
    assert client.get(f"/api/units/{unit_id}", headers=other).status_code == 404


def test_requester_api_needs_token_and_exports(client_for):
    served, client = client_for([{"data": [dialogue("d1", "g1", ["overall_quality"])]}],
                                {"g1": 1})
    unit_id, headers, unit = _open_unit(client)
    key = unit["dialogues"][0]["key"]
    client.post(f"/api/units/{unit_id}/submit", headers=headers,
                json={"answers": {key: {"overall_quality": {"dialogue": {"Overall": 5}}}}})
    assert client.get("/api/requester/progress").status_code == 401
    auth = {"Authorization": f"Bearer {requester_token(served.secret)}"}
    progress = client.get("/api/requester/progress", headers=auth).json()
    assert progress["runs"][-1]["units"] == {"completed": 1}
    csv_text = client.get("/api/requester/submissions?format=csv", headers=auth).text
    header, row = csv_text.strip().splitlines()
    assert "dialogue_id" in header and ",d1,g1," in row and ",5," in row
    whole = client.get("/api/requester/submissions", headers=auth).json()
    assert whole["submissions"][0]["dialogues"][0]["dialogue_id"] == "d1"


def _submit_relevance(client, worker, assignment):
    unit_id, headers, unit = _open_unit(client, worker, assignment)
    key = unit["dialogues"][0]["key"]
    submitted = client.post(f"/api/units/{unit_id}/submit", headers=headers,
                            json={"answers": {key: {"relevance": _relevance_answer([1, 3])}}})
    assert submitted.status_code == 200, submitted.json()
    return unit_id, headers


@pytest.mark.parametrize("maximum, offers", [(0, [True, False]), (1, [False])])
def test_completion_offers_the_next_unit_only_when_the_worker_may_take_one(
    client_for, maximum, offers
):
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", ["relevance"])]} for i in (1, 2)]
    served, client = client_for(lines, {"g1": 1, "g2": 1},
                                task={"maximum_units_per_worker": maximum})
    assignment, done = "a1", []
    for offered in offers:
        unit_id, headers = _submit_relevance(client, "w1", assignment)
        done.append(unit_id)
        with served.db.read() as session:
            before = session.execute(select(Unit.status, func.count()).group_by(Unit.status)
                                     ).all()
        answer = client.get("/api/next", headers=headers).json()
        with served.db.read() as session:  # asking claims nothing
            assert session.execute(select(Unit.status, func.count()).group_by(Unit.status)
                                   ).all() == before
        if not offered:
            assert answer["next_url"] is None
            assert ("maximum of 1 units" if maximum else "no more work") in answer["reason"]
            continue
        query = parse_qs(urlsplit(answer["next_url"]).query)
        assert query["worker_id"] == ["w1"] and query["assignment_id"] != [assignment]
        assignment = query["assignment_id"][0]
    assert len(set(done)) == len(offers)
    assert client.get("/api/next").status_code == 401

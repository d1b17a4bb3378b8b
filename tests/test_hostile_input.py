"""One worker's hostile input never breaks the server or the requester's data, over real HTTP on
SQLite and PostgreSQL: huge integers are refused on every JSON body (and a row stored before
never breaks an export), NUL in ids, queries and paths is a 4xx, names past 200 characters a
422."""

from __future__ import annotations

import csv
import io
import json

import httpx
import pytest
from api_fuzz import valid_answers
from chat_helpers import ChatServer, ScriptedBot, auth, write_chat_conf
from helpers import dialogue, http_client, live_server, write_task
from sqlalchemy import func, select, text
from test_export import _export

from collection_and_annotations.server.auth import requester_token
from collection_and_annotations.storage.models import GrantedQualification, Submission, Unit

BUCKETS = ["relevance", "issues", "overall_quality"]
HUGE = "9" * 5001  # past Python's 4,300-digit limit for reading an integer
LARGE = "1" + "0" * 400
JUST_PAST = str(2**53)
LARGEST = 2**53 - 1
MALFORMED = (b"[1, 2]", b'"reason"', b"5", b"null", b"true", b"{", b"\xff",
             b'{"a": ' * 40 + b"1" + b"}" * 40, b"[" * 5000 + b"]" * 5000)


@pytest.fixture
def task(tmp_path, database_url, open_conf):
    """A static task (3 groups, 2 annotators each) on `database_url`, served over HTTP."""
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", BUCKETS)]} for i in range(3)]
    conf = write_task(tmp_path, lines, {f"g{i}": 2 for i in range(3)})
    served = open_conf(str(conf), database_url)
    with live_server(served) as base, http_client(base_url=base, timeout=20) as client:
        yield served, client


def _requester(served) -> dict[str, str]:
    return {"Authorization": f"Bearer {requester_token(served.secret)}"}


def _open_unit(client: httpx.Client, worker: str) -> tuple[str, dict[str, str], str]:
    """A claimed unit: its id, the worker's headers, its dialogue's key."""
    claimed = client.post("/api/claim", json={"worker_id": worker, "assignment_id": "a1"})
    assert claimed.status_code == 200, claimed.text
    unit_id, headers = claimed.json()["unit_id"], auth(claimed.json()["token"])
    key = client.get(f"/api/units/{unit_id}", headers=headers).json()["dialogues"][0]["key"]
    return unit_id, headers, key


def _answers(key: str) -> dict:
    return {key: valid_answers()}


def _submitted(client: httpx.Client, worker: str, timings: dict | None = None) -> str:
    unit_id, headers, key = _open_unit(client, worker)
    reply = client.post(f"/api/units/{unit_id}/submit", headers=headers,
                        json={"answers": _answers(key), "timings": timings or {}})
    assert reply.status_code == 200, reply.text
    return unit_id


def _json_bodies(client: httpx.Client, served) -> list[tuple[str, str, dict, str]]:
    """Every request of a static task that reads a JSON body: (method, path, headers, body
    with N where a number goes)."""
    unit_id, headers, key = _open_unit(client, "w1")
    done = _submitted(client, "w2")
    pseudonym = client.get("/api/requester/workers", headers=_requester(served)) \
        .json()["workers"][0]["pseudonym"]
    requester = _requester(served)
    return [
        ("POST", "/api/claim", {}, '{"worker_id": "w9", "assignment_id": "a9", "n": N}'),
        ("POST", "/api/requester/session", {}, '{"token": "guess", "n": N}'),
        ("PUT", f"/api/units/{unit_id}/draft", headers, '{"answers": {}, "position": [N]}'),
        ("POST", f"/api/units/{unit_id}/submit", headers,
         json.dumps({"answers": _answers(key)})[:-1] + ', "timings": {"ms": N}}'),
        ("POST", f"/api/units/{unit_id}/dialogues/{key}/check", headers,
         '{"answers": {"overall_quality": {"dialogue": {"Overall": N}}}}'),
        ("POST", f"/api/requester/units/{done}/review", requester,
         '{"decision": "reject", "reason": "r", "n": N}'),
        ("POST", f"/api/requester/units/{done}/bonus", requester,
         '{"amount": N, "reason": "r"}'),
        ("POST", "/api/requester/units/bulk-review", requester,
         f'{{"unit_ids": ["{done}"], "decision": "reject", "n": N}}'),
        ("POST", f"/api/requester/workers/{pseudonym}/block", requester, '{"reason": N}'),
        ("POST", f"/api/requester/workers/{pseudonym}/qualifications/grant", requester,
         '{"name": "q", "value": N}'),
        ("POST", "/api/requester/bonuses/1/resolve", requester, '{"paid": N}'),
        ("POST", "/api/requester/qualifications/grant", requester,
         '{"worker": "w1", "name": "q", "value": N}'),
        ("POST", "/api/requester/qualifications/block", requester,
         '{"worker": "w1", "n": N}'),
    ]


def test_huge_integers_are_refused_on_every_json_body(task):
    served, client = task
    requests = _json_bodies(client, served)
    for number in (HUGE, "-" + HUGE, LARGE, JUST_PAST, "-" + JUST_PAST):
        for method, path, headers, body in requests:
            reply = client.request(method, path, content=body.replace("N", number),
                                   headers={**headers, "Content-Type": "application/json"})
            assert reply.status_code == 422, (number[:20], path, reply.text)
            assert f"between -{LARGEST} and {LARGEST}" in reply.json()["error"], reply.text
    with served.db.session() as session:  # nothing of it was stored
        assert session.scalar(select(func.count()).select_from(Submission)) == 1
        assert session.scalar(select(func.count()).select_from(GrantedQualification)) == 0
        assert session.scalar(select(func.count()).where(Unit.status == "rejected")) == 0
    place = client.request("PUT", requests[2][1], headers=requests[2][2],
                           json={"answers": {}, "position": {"steps": [1, 2**53]}})
    assert place.status_code == 422 and place.json()["error"].startswith("position.steps[1]:")


def test_the_largest_safe_integer_is_stored(task):
    served, client = task
    _submitted(client, "w1", {"ms": LARGEST, "negative": -LARGEST})
    with served.db.session() as session:
        timings = session.scalars(select(Submission.timings)).one()
    assert timings["client"] == {"ms": LARGEST, "negative": -LARGEST}


def test_chat_bodies_refuse_huge_integers_and_malformed_bodies(tmp_path, database_url):
    conf = write_chat_conf(tmp_path, "alpha:1", ["alpha"], num_turns=1)
    server = ChatServer(tmp_path, conf, {"alpha": ScriptedBot("alpha")}, database_url)
    try:
        unit, token = server.claim("w1")
        for action in ("start", "messages", "end", "retry"):
            for number in (HUGE, JUST_PAST):
                reply = server.client.post(
                    f"/api/chat/{unit}/{action}", headers={**auth(token), "Content-Type":
                                                           "application/json"},
                    content=f'{{"text": "hello", "client_message_id": {number}}}')
                assert reply.status_code == 422, (action, reply.text)
                assert f"between -{LARGEST} and {LARGEST}" in reply.json()["error"]
            for body in MALFORMED:
                reply = server.client.post(f"/api/chat/{unit}/{action}", content=body,
                                           headers=auth(token))
                assert reply.status_code in (400, 422), (action, body[:20], reply.text)
    finally:
        server.stop()


def test_a_stored_huge_integer_never_breaks_an_export(task, database_url, tmp_path):
    """A row stored before integers were bounded (in its timings and its answers): every
    export and the Results tab still answer, and the row is in them."""
    served, client = task
    _submitted(client, "w1")
    unit_id, headers, key = _open_unit(client, "w2")
    timings = {"steps": [{"dialogue": key, "bucket": "relevance", "intervals": [[1, 2]]}]}
    assert client.post(f"/api/units/{unit_id}/submit", headers=headers, json={
        "answers": _answers(key), "timings": timings}).status_code == 200
    huge = (f'{{"client": {{"ms": {LARGE}, "steps": [{{"dialogue": "{key}", "bucket": '
            f'"relevance", "intervals": [[1, {LARGE}], [-{LARGE}, 5], [1, 3001]]}}]}}, '
            '"server": {}}')
    answers = json.dumps(_answers(key)).replace('"Overall": 2', f'"Overall": {LARGE}')
    with served.db.engine.begin() as connection:
        connection.execute(text("UPDATE submissions SET timings = :t, answers = :a WHERE id = "
                                "(SELECT max(id) FROM submissions)"), {"t": huge, "a": answers})

    requester = _requester(served)
    for fmt in ("json", "jsonl", "items-jsonl", "csv"):
        reply = client.get(f"/api/requester/submissions?format={fmt}", headers=requester)
        assert reply.status_code == 200, (fmt, reply.text)
        assert unit_id in reply.text
    rows = list(csv.DictReader(io.StringIO(client.get(
        "/api/requester/submissions?format=csv", headers=requester).text)))
    assert {row["step_seconds"] for row in rows
            if row["unit_id"] == unit_id and row["bucket"] == "relevance"} == {"3.0"}
    for path in ("/api/requester/results", "/api/requester/review", "/api/requester/overview",
                 f"/api/requester/units/{unit_id}", "/api/requester/workers"):
        reply = client.get(path, headers=requester)
        assert reply.status_code == 200, (path, reply.text)
    for fmt in ("csv", "jsonl", "submissions"):
        _export(database_url, "--format", fmt, "-o", str(tmp_path / fmt))
        assert unit_id in (tmp_path / fmt).read_text()


def test_nul_in_an_id_a_query_or_a_path_is_refused(task):
    served, client = task
    unit_id, headers, key = _open_unit(client, "w1")
    requester = _requester(served)
    for method, path, credentials in (
            ("GET", "/api/units/%00", headers), ("GET", "/api/units/u_1%00", headers),
            ("PUT", "/api/units/a%00b/draft", headers),
            ("POST", "/api/units/%00/submit", headers),
            ("POST", f"/api/units/{unit_id}/dialogues/{key}%00/check", headers),
            ("GET", "/api/requester/units/%00", requester),
            ("GET", "/api/requester/review?worker=%00", requester),
            ("GET", "/api/requester/review?bucket=a%00", requester),
            ("GET", "/api/requester/qualifications?name=%00&worker=w1", requester),
            ("GET", "/api/requester/links?worker_id=%00&n=1", requester),
            ("POST", "/api/requester/workers/%00/block", requester),
            ("GET", "/api/enter?PROLIFIC_PID=%00", {}),
            ("GET", "/assets/%00", {}), ("GET", "/assets/index%00.js", {}),
            ("GET", "/%00", {}), ("POST", "/api/chat/%00/start", headers)):
        reply = client.request(method, path, headers=credentials, json={"answers": {}})
        assert reply.status_code == 400, (path, reply.text)
        assert "NUL" in reply.json()["error"]
    assert client.get(f"/api/units/{unit_id}", headers=headers).status_code == 200


def test_names_over_200_characters_are_refused_with_422(task):
    served, client = task
    requester = _requester(served)
    long, most = "n" * 201, "m" * 200
    for body in ({"worker_id": long, "assignment_id": "a"},
                 {"worker_id": "w", "assignment_id": long}):
        reply = client.post("/api/claim", json=body)
        assert reply.status_code == 422 and "at most 200" in reply.json()["error"], reply.text
    assert client.post("/api/claim", json={"worker_id": most, "assignment_id": most}) \
        .status_code == 200
    for body in ({"worker": long, "name": "q"}, {"worker": "w", "name": long},
                 {"worker": "w", "name": "q", "provider": "p" * 33},
                 {"worker": "w", "name": "q", "value": 2**31}):
        for action in ("grant", "block") if "value" not in body else ("grant",):
            reply = client.post(f"/api/requester/qualifications/{action}", headers=requester,
                                json=body)
            assert reply.status_code == 422, (action, body, reply.text)
    pseudonym = client.get("/api/requester/workers", headers=requester) \
        .json()["workers"][0]["pseudonym"]
    reply = client.post(f"/api/requester/workers/{pseudonym}/qualifications/grant",
                        headers=requester, json={"name": long})
    assert reply.status_code == 422, reply.text
    assert client.post("/api/requester/qualifications/grant", headers=requester,
                       json={"worker": most, "name": most, "value": 2**31 - 1}).status_code == 200
    done = _submitted(client, "w2")
    reply = client.post(f"/api/requester/units/{done}/review", headers=requester, json={
        "decision": "reject", "reason": "r", "rejection_category": "c" * 33})
    assert reply.status_code == 400 and "at most 32" in reply.json()["error"], reply.text


def test_a_draft_whose_position_is_a_bare_number_reads_back(task):
    """SQLite keeps a JSON document that is a bare number as a number."""
    _, client = task
    unit_id, headers, _ = _open_unit(client, "w1")
    for position in (5, 2.5, "5", None, [1]):
        assert client.put(f"/api/units/{unit_id}/draft", headers=headers,
                          json={"answers": {}, "position": position}).status_code == 200
        reply = client.get(f"/api/units/{unit_id}", headers=headers)
        assert reply.status_code == 200, reply.text
        assert reply.json()["draft"]["position"] == position


def test_credentials_that_are_not_ascii_are_refused_not_a_500(task):
    served, client = task
    unit_id, _, _ = _open_unit(client, "w1")
    wrong = {"Authorization": "Bearer 1.\u00e9t\u00e9".encode()}
    for method, path in (("GET", f"/api/units/{unit_id}"), ("GET", "/api/next"),
                         ("POST", f"/api/chat/{unit_id}/start"),
                         ("GET", "/api/requester/overview")):
        assert client.request(method, path, headers=wrong).status_code in (401, 404), path
    session = client.post("/api/requester/session", json={"token": "\u00e9" * 40})
    assert session.status_code == 401
    forged = {"Cookie": "cep_requester=9999999999.\u00e9.\u00e9".encode()}
    assert client.get("/api/requester/overview", headers=forged).status_code == 401
    signed_in = client.post("/api/requester/session",
                            json={"token": requester_token(served.secret)})
    cookie = {"Cookie": f"cep_requester={signed_in.cookies['cep_requester']}",
              "X-CSRF-Token": "\u00e9".encode()}
    assert client.post("/api/requester/sync-failures/retry", headers=cookie,
                       json={}).status_code == 403


def test_malformed_bodies_are_refused_on_every_endpoint(task):
    """A list, string, number, deep or broken body where an object is expected: 400 or 422
    everywhere (the block endpoint answered 500), and nothing stored."""
    served, client = task
    for method, path, headers, _ in _json_bodies(client, served):
        for body in MALFORMED:
            reply = client.request(method, path, content=body,
                                   headers={**headers, "Content-Type": "application/json"})
            assert reply.status_code in (400, 422), (path, body[:20], reply.text)
            assert reply.json()["error"], path
    with served.db.session() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 1
        assert session.scalar(select(func.count()).select_from(GrantedQualification)) == 0

"""Worker JSON bodies are checked before they reach the database: 400/422 naming the place."""

from __future__ import annotations

import json

import pytest
from helpers import app_client, dialogue, write_task

from collection_and_annotations.server.app import create_app
from collection_and_annotations.server.json_input import MAX_DEPTH

JSON = {"Content-Type": "application/json"}
DEEP = b'{"answers": {}, "position": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"
# (raw body, status, words the error must hold)
BAD_BODIES = [
    (b'{"answers": {}, "timings": {"x": NaN}}', 400, "timings.x: numbers must be finite"),
    (b'{"answers": {}, "timings": {"x": Infinity}}', 400, "timings.x: numbers must be finite"),
    (b'{"answers": {}, "timings": {"x": -Infinity}}', 400, "timings.x: numbers must be finite"),
    (b'{"answers": {}, "timings": {"x": 1e999}}', 400, "timings.x: numbers must be finite"),
    (b'{"answers": {"d1": ["\\ud800"]}}', 422, "answers.d1[0]: text holds a lone surrogate"),
    (b'{"answers": {"\\udfff": 1}}', 422, "answers: key: text holds a lone surrogate"),
    (b'{"answers": {"d1": "a\\u0000b"}}', 422, "answers.d1: text must not contain NUL"),
    (b'{"answers": {}, "timings": {"\\u0000": 1}}', 422, "timings: key: text must not contain NUL"),
    (DEEP, 422, "nests deeper than"),
    (b'{"answers": {}, "position": ' + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b"}",
     422, f"nested deeper than {MAX_DEPTH} levels"),
    (b'{"answers": {}, "x": "\xff"}', 400, "not UTF-8"),
    (b'{"answers": {}', 400, "not valid JSON at line 1"),
    (b'["answers"]', 400, "must be a JSON object"),
]


def _open_unit(tmp_path, open_conf, database_url):
    """A test client and a claimed unit: (client, unit id, headers)."""
    conf = write_task(tmp_path, [{"data": [dialogue("d1", "g1", ["relevance"])]}], {"g1": 1})
    client = app_client(create_app(open_conf(str(conf), database_url)))
    claimed = client.post("/api/claim", json={"worker_id": "w1", "assignment_id": "a1"})
    token = claimed.json()["token"]
    return client, claimed.json()["unit_id"], {"Authorization": f"Bearer {token}", **JSON}


@pytest.fixture
def unit(tmp_path, sqlite_url, open_conf):
    return _open_unit(tmp_path, open_conf, sqlite_url)


def _send_everywhere(client, unit_id, headers, body):
    """The body to claim, draft and submit: every endpoint that reads one."""
    yield client.post("/api/claim", content=body, headers=JSON)
    yield client.put(f"/api/units/{unit_id}/draft", content=body, headers=headers)
    yield client.post(f"/api/units/{unit_id}/submit", content=body, headers=headers)


@pytest.mark.parametrize(("body", "status", "words"), BAD_BODIES,
                         ids=[str(i) for i in range(len(BAD_BODIES))])
def test_bad_bodies_are_refused_with_the_place(unit, body, status, words):
    client, unit_id, headers = unit
    for reply in _send_everywhere(client, unit_id, headers, body):
        assert reply.status_code == status, (reply.request.path, reply.text)
        assert words in reply.json()["error"]
    # nothing was stored: the unit still has no draft and is still open
    view = client.get(f"/api/units/{unit_id}", headers=headers)
    assert view.status_code == 200 and view.json()["status"] == "assigned"


def test_every_bad_body_on_every_database(tmp_path, open_conf, database_url):
    """PostgreSQL refuses NUL and lone surrogates itself: they must not get that far."""
    client, unit_id, headers = _open_unit(tmp_path, open_conf, database_url)
    for body, status, _ in BAD_BODIES:
        for reply in _send_everywhere(client, unit_id, headers, body):
            assert reply.status_code == status, reply.text


def test_a_draft_with_nan_is_not_stored_or_echoed(unit):
    client, unit_id, headers = unit
    client.put(f"/api/units/{unit_id}/draft", headers=headers,
               content=b'{"answers": {"d1": {"x": NaN}}, "position": 1}')
    raw = client.get(f"/api/units/{unit_id}", headers=headers).text
    json.loads(raw, parse_constant=lambda name: pytest.fail(f"{name} echoed back: {raw}"))


def test_a_sound_draft_still_saves(unit):
    client, unit_id, headers = unit
    body = json.dumps({"answers": {"d1": {"t": ["é", 1.5, None]}}, "position": 2})
    reply = client.put(f"/api/units/{unit_id}/draft", content=body, headers=headers)
    assert reply.status_code == 200, reply.json()


def test_not_json_content_type(unit):
    client, unit_id, headers = unit
    reply = client.put(f"/api/units/{unit_id}/draft", content=b"{}",
                       headers={"Authorization": headers["Authorization"]})
    assert reply.status_code == 400 and "Content-Type: application/json" in reply.json()[
        "error"]


def test_oversized_body_is_413(unit):
    client, unit_id, headers = unit
    body = b'{"answers": {"x": "' + b"a" * 2_100_000 + b'"}}'
    reply = client.put(f"/api/units/{unit_id}/draft", content=body, headers=headers)
    assert reply.status_code == 413 and "error" in reply.json()

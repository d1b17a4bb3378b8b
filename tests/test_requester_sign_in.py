"""The requester's sign-in over the real server, on SQLite and PostgreSQL: wrong tokens are
limited without ever refusing the right one, a signed-out session stays closed wherever its
cookie is sent, and the identities CSV never holds a formula."""

from __future__ import annotations

import csv
import io

import httpx
import pytest
from helpers import dialogue, http_client, live_server, write_task

from collection_and_annotations.server.auth import requester_token

SESSION = "/api/requester/session"


@pytest.fixture
def served(tmp_path, database_url, open_conf):
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", ["overall_quality"])]} for i in range(8)]
    return open_conf(str(write_task(tmp_path, lines, {f"g{i}": 1 for i in range(8)})),
                     database_url)


def _signed_in(client: httpx.Client, token: str) -> dict[str, str]:
    """A new session: its cookie and CSRF headers."""
    reply = client.post(SESSION, json={"token": token})
    assert reply.status_code == 200, reply.text
    cookie = reply.cookies["cep_requester"]
    client.cookies.clear()
    return {"Cookie": f"cep_requester={cookie}", "X-CSRF-Token": reply.json()["csrf_token"]}


def test_wrong_tokens_are_limited_and_the_right_one_always_let_in(served):
    token = requester_token(served.secret)
    with live_server(served) as base, http_client(base_url=base) as client:
        assert [client.post(SESSION, json={"token": f"guess{i}"}).status_code
                for i in range(22)] == [401] * 20 + [429] * 2
        assert "wait a minute" in client.post(SESSION, json={"token": "x"}).json()["error"]
        assert client.post(SESSION, json={"token": token}).status_code == 200
        assert client.post(SESSION, json={"token": "guess"}).status_code == 429


def test_a_signed_out_session_is_refused_everywhere(served):
    token = requester_token(served.secret)
    with live_server(served) as base, live_server(served) as other, \
            http_client(base_url=base) as client, http_client(base_url=other) as second:
        kept = _signed_in(client, token)
        leaving = _signed_in(client, token)
        for headers in (kept, leaving):
            assert client.get("/api/requester/overview", headers=headers).status_code == 200
        assert client.delete(SESSION, headers=leaving).status_code == 200
        for server in (client, second):  # the same cookie, sent again (a copy, another tab)
            reply = server.get("/api/requester/overview", headers=leaving)
            assert reply.status_code == 401 and "no longer valid" in reply.json()["error"]
            assert server.get(SESSION, headers=leaving).status_code == 401
            assert server.post("/api/requester/sync-failures/retry", headers=leaving,
                               json={}).status_code == 401
            assert server.get("/api/requester/overview", headers=kept).status_code == 200
        assert client.delete(SESSION, headers=leaving).status_code == 401
        assert client.delete(SESSION, headers=kept).status_code == 200
        assert second.get(SESSION, headers=kept).status_code == 401
        assert client.get(SESSION, headers=_signed_in(second, token)).status_code == 200


def test_the_identities_csv_never_holds_a_formula(served):
    ids = ["=HYPERLINK(\"http://x\")", "+1+2", "-2+3", "@SUM(A1:A2)", "\t=1", "\r=1",
           "plain", "a=b"]
    with live_server(served) as base, http_client(base_url=base) as client:
        for worker in ids:
            assert client.post("/api/claim", json={"worker_id": worker, "assignment_id": "a"}) \
                .status_code == 200
        headers = {"Authorization": f"Bearer {requester_token(served.secret)}"}
        reply = client.get("/api/requester/workers/identities?format=csv", headers=headers)
        listed = client.get("/api/requester/workers/identities", headers=headers).json()
    cells = [row["worker_id"] for row in csv.DictReader(io.StringIO(reply.text, newline=""))]
    assert sorted(cells) == sorted(w if w in ("plain", "a=b") else f"'{w}" for w in ids)
    assert sorted(w["worker_id"] for w in listed["workers"]) == sorted(ids)

"""The dashboard's sign-in: the token exchanged once for an HTTP-only cookie, CSRF on cookie
requests that change state, bearer tokens for scripts unchanged, expiry, and the page itself."""

from __future__ import annotations

import time

import pytest
from helpers import app_client, dialogue, write_task

from collection_and_annotations.providers.local import link_signature
from collection_and_annotations.server import requester_session
from collection_and_annotations.server.app import create_app
from collection_and_annotations.server.auth import requester_token
from collection_and_annotations.server.requester_session import (
    COOKIE,
    SESSION_SECONDS,
    new_session,
)

SESSION = "/api/requester/session"


@pytest.fixture
def served(tmp_path, sqlite_url, open_conf):
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", ["overall_quality"])]} for i in range(2)]
    conf = write_task(tmp_path / "task", lines, {"g0": 1, "g1": 1})
    return open_conf(str(conf), sqlite_url)


@pytest.fixture
def client(served, tmp_path):
    static = tmp_path / "static"
    static.mkdir()
    (static / "index.html").write_text("<p>worker page</p>")
    (static / "dashboard.html").write_text("<p>dashboard</p>")
    return app_client(create_app(served, static_dir=static))


def _sign_in(served, client) -> str:
    reply = client.post(SESSION, json={"token": requester_token(served.secret)})
    assert reply.status_code == 200, reply.json()
    return reply.json()["csrf_token"]


def _submitted_unit(served, client) -> str:
    claimed = client.post("/api/claim", json={
        "worker_id": "w1", "assignment_id": "a1",
        "sig": link_signature(served.secret, "w1", "a1")}).json()
    headers = {"Authorization": f"Bearer {claimed['token']}"}
    unit = client.get(f"/api/units/{claimed['unit_id']}", headers=headers).json()
    key = unit["dialogues"][0]["key"]
    assert client.post(f"/api/units/{claimed['unit_id']}/submit", headers=headers, json={
        "answers": {key: {"overall_quality": {"dialogue": {"Overall": 4}}}}}).status_code == 200
    return claimed["unit_id"]


def test_sign_in_sets_an_http_only_strict_cookie_and_never_puts_the_token_in_a_url(
        served, client):
    wrong = client.post(SESSION, json={"token": "nope"})
    assert wrong.status_code == 401 and "wrong requester token" in wrong.json()["error"]
    reply = client.post(SESSION, json={"token": requester_token(served.secret)})
    assert reply.status_code == 200
    body = reply.json()
    assert body["task"] == "t" and len(body["csrf_token"]) == 40
    [cookie] = reply.headers.get_list("Set-Cookie")
    assert cookie.startswith(f"{COOKIE}=")
    parts = {p.strip().split("=")[0].lower() for p in cookie.split(";")}
    assert {"httponly", "path", "samesite"} <= parts and "secure" not in parts
    assert "SameSite=Strict" in cookie and "Path=/" in cookie
    assert requester_token(served.secret) not in cookie
    assert f"Max-Age={SESSION_SECONDS}" in cookie
    assert client.get(SESSION).json() == body
    assert client.get("/api/requester/overview").status_code == 200
    assert "Location" not in reply.headers


def test_cookie_requests_that_change_state_need_the_csrf_token(served, client):
    unit = _submitted_unit(served, client)
    csrf = _sign_in(served, client)
    path = f"/api/requester/units/{unit}/review"
    body = {"decision": "approve", "reason": ""}
    missing = client.post(path, json=body)
    assert missing.status_code == 403 and "X-CSRF-Token" in missing.json()["error"]
    wrong = client.post(path, json=body, headers={"X-CSRF-Token": "0" * 40})
    assert wrong.status_code == 403
    right = client.post(path, json=body, headers={"X-CSRF-Token": csrf})
    assert right.status_code == 200 and right.json()["decision"] == "approve"
    assert client.delete(SESSION).status_code == 403  # signing out changes state too
    closed = client.delete(SESSION, headers={"X-CSRF-Token": csrf})
    assert closed.status_code == 200 and closed.json() == {"ok": True}
    assert client.cookies.get(COOKIE) is None
    assert client.get("/api/requester/overview").status_code == 401


def test_bearer_token_needs_no_csrf_and_query_tokens_stay_refused(served, client):
    unit = _submitted_unit(served, client)
    bearer = {"Authorization": f"Bearer {requester_token(served.secret)}"}
    reply = client.post(f"/api/requester/units/{unit}/review",
                        json={"decision": "approve", "reason": ""}, headers=bearer)
    assert reply.status_code == 200
    wrong = client.get("/api/requester/overview", headers={"Authorization": "Bearer x"})
    assert wrong.status_code == 401
    query = client.get(f"/api/requester/overview?token={requester_token(served.secret)}")
    assert query.status_code == 401 and "not as ?token=" in query.json()["error"]
    assert client.post(SESSION, content=f"token={requester_token(served.secret)}").status_code \
        == 400  # a form post (which another site could make) is not accepted


def test_an_expired_or_forged_session_is_refused(served, client):
    old = new_session(served.secret, now=time.time() - SESSION_SECONDS - 1)
    client.cookies.set(COOKIE, old)
    expired = client.get("/api/requester/overview")
    assert expired.status_code == 401 and "expired" in expired.json()["error"]
    assert client.get(SESSION).status_code == 401
    client.cookies.set(COOKIE, new_session("another secret"))
    assert client.get("/api/requester/overview").status_code == 401
    client.cookies.set(COOKIE, new_session(served.secret))
    assert client.get("/api/requester/overview").status_code == 200




def test_secure_cookie_when_the_public_url_is_https(served, client):
    served.provider.public_url = "https://study.example.org"
    cookie = client.post(SESSION, json={"token": requester_token(served.secret)}) \
        .headers["Set-Cookie"]
    assert "Secure" in cookie


def test_the_dashboard_page_and_an_old_build_without_it(served, client, tmp_path):
    page = client.get("/dashboard")
    assert page.status_code == 200 and page.text == "<p>dashboard</p>"
    assert page.headers["Cache-Control"] == "no-cache" and page.headers["ETag"]
    (tmp_path / "static" / "dashboard.html").unlink()
    missing = client.get("/dashboard")
    assert missing.status_code == 404
    assert "cd frontend && npm run build" in missing.json()["error"]


def test_the_failure_limit_forgets_quiet_addresses(monkeypatch):
    monkeypatch.setattr(requester_session, "MAX_CLIENTS", 3)
    clock = [1000.0]
    limit = requester_session.FailureLimit(limit=2, window=60, clock=lambda: clock[0])
    for client in ("a", "b", "c"):
        limit.failed(client)
    clock[0] += 61  # a, b and c are quiet now
    limit.failed("d")
    limit.failed("e")  # past the cap: the quiet ones are dropped
    assert set(limit._failures) == {"d", "e"}
    limit.failed("e")
    assert limit.blocked("e") and not limit.blocked("d")

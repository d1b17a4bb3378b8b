"""Qualification endpoints of the requester API (the `quals` CLI over HTTP), on SQLite and
PostgreSQL: token required, list, grant, revoke, block and unblock honoured at the next claim."""

from __future__ import annotations

import pytest
from helpers import app_client

from collection_and_annotations.providers.local import link_signature
from collection_and_annotations.server.app import create_app
from collection_and_annotations.server.auth import requester_token

API = "/api/requester/qualifications"


@pytest.fixture
def served_client(cep_fixtures, open_conf, database_url):
    conf = cep_fixtures / "hydra_configs" / "conf" / "consistency.yaml"
    served = open_conf(str(conf), database_url, f"task_dir={cep_fixtures}")
    client = app_client(create_app(served))
    headers = {"Authorization": f"Bearer {requester_token(served.secret)}"}
    return served, client, headers


def _claim(served, client, worker, assignment):
    return client.post("/api/claim", json={
        "worker_id": worker, "assignment_id": assignment,
        "sig": link_signature(served.secret, worker, assignment)})


def test_token_required(served_client):
    _, client, _ = served_client
    assert client.get(API).status_code == 401
    assert client.post(f"{API}/block", json={"worker": "w"}).status_code == 401


def test_grant_list_revoke(served_client):
    _, client, headers = served_client
    granted = client.post(f"{API}/grant", json={"name": "skilled", "worker": "w1", "value": 3},
                          headers=headers)
    assert granted.status_code == 200 and granted.json()["value"] == 3
    client.post(f"{API}/grant", json={"name": "other", "worker": "w2"}, headers=headers)
    listed = client.get(f"{API}?name=skilled", headers=headers).json()["grants"]
    assert [(g["qualification"], g["provider"], g["worker"], g["value"]) for g in listed] == [
        ("skilled", "local", "w1", 3)]
    assert listed[0]["granted_at"].endswith("Z")
    by_worker = client.get(f"{API}?worker=w2", headers=headers).json()["grants"]
    assert [g["qualification"] for g in by_worker] == ["other"]
    assert client.post(f"{API}/revoke", json={"name": "skilled", "worker": "w1"},
                       headers=headers).status_code == 200
    again = client.post(f"{API}/revoke", json={"name": "skilled", "worker": "w1"},
                        headers=headers)
    assert again.status_code == 404 and "does not hold" in again.json()["error"]
    nobody = client.post(f"{API}/revoke", json={"name": "skilled", "worker": "ghost"},
                         headers=headers)
    assert nobody.status_code == 404 and "no worker" in nobody.json()["error"]


@pytest.mark.parametrize("body", [{"name": "x"}, {"worker": "w"}, {"name": "x", "worker": ""},
                                  {"name": "x", "worker": "w", "value": "3"}])
def test_bad_requests(served_client, body):
    _, client, headers = served_client
    assert client.post(f"{API}/grant", json=body, headers=headers).status_code == 400
    assert client.post(f"{API}/grant", content="name=x", headers=headers).status_code == 400


def test_block_and_unblock_at_claim(served_client):
    served, client, headers = served_client
    blocked = client.post(f"{API}/block", json={"worker": "mallory"}, headers=headers)
    assert blocked.status_code == 200  # before they ever came; the task's block by default
    assert blocked.json()["qualification"] == "consistency_block"
    refused = _claim(served, client, "mallory", "a1")
    assert refused.status_code == 403 and "not eligible" in refused.json()["error"]
    listed = client.get(f"{API}?worker=mallory", headers=headers).json()["grants"]
    assert [g["qualification"] for g in listed] == ["consistency_block"]
    assert client.post(f"{API}/unblock", json={"worker": "mallory"},
                       headers=headers).status_code == 200
    assert _claim(served, client, "mallory", "a2").status_code == 200
    named = client.post(f"{API}/block", json={"worker": "eve", "name": "shared_block"},
                        headers=headers)
    assert named.json()["qualification"] == "shared_block"

"""A served task per provider (SQLite), and a worker who submits a unit through the API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from helpers import app_client, dialogue, write_task

from collection_and_annotations.server.app import create_app
from collection_and_annotations.server.auth import requester_token

from .fake_prolific import FakeProlific


@pytest.fixture
def fake_prolific(monkeypatch):
    fake = FakeProlific()
    monkeypatch.setenv("PROLIFIC_TOKEN", "test-token")
    monkeypatch.setenv("PROLIFIC_URL", fake.url)
    yield fake
    fake.stop()


@dataclass
class Task:
    served: Any
    client: Any
    auth: dict[str, str]

    def submit(self, claim: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Claim with this body, answer the unit, submit; (unit id, submit response)."""
        claimed = self.client.post("/api/claim", json=claim)
        assert claimed.status_code == 200, claimed.json()
        body = claimed.json()
        headers = {"Authorization": f"Bearer {body['token']}"}
        unit = self.client.get(f"/api/units/{body['unit_id']}", headers=headers).json()
        key = unit["dialogues"][0]["key"]
        reply = self.client.post(f"/api/units/{body['unit_id']}/submit", headers=headers, json={
            "answers": {key: {"overall_quality": {"dialogue": {"Overall": 5}}}}})
        assert reply.status_code == 200, reply.json()
        return body["unit_id"], reply.json()

    def post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        return self.client.post(f"/api/requester/{path}", json=body or {}, headers=self.auth)


@pytest.fixture
def task_for(tmp_path, sqlite_url, open_conf):
    def _make(*overrides: str, groups: int = 3) -> Task:
        lines = [{"data": [dialogue(f"d{i}", f"g{i}", ["overall_quality"])]}
                 for i in range(groups)]
        conf = write_task(tmp_path, lines, {f"g{i}": 1 for i in range(groups)},
                          task={"task_description": "Rate dialogues", "task_reward": 1.5})
        served = open_conf(str(conf), sqlite_url, *overrides)
        return Task(served, app_client(create_app(served)),
                    {"Authorization": f"Bearer {requester_token(served.secret)}"})
    return _make

"""The dashboard's time per unit (median, 90th percentile) for every count of submitted units
from 1 to 20, over the task and per worker, against numpy: through the requester API of the
real server, on SQLite and PostgreSQL."""

from __future__ import annotations

import random
from datetime import timedelta

import numpy
import pytest
from chat_helpers import auth
from helpers import dialogue, http_client, live_server, write_task
from sqlalchemy import select, update

from collection_and_annotations.server.auth import requester_token
from collection_and_annotations.storage.models import Submission, Unit

UNITS = 20


def test_time_per_unit_quantiles_for_1_to_20_units(tmp_path, database_url, open_conf):
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", ["overall_quality"])]} for i in range(UNITS)]
    served = open_conf(str(write_task(tmp_path, lines, {f"g{i}": 1 for i in range(UNITS)})),
                       database_url)
    rng = random.Random(3)
    durations: list[float] = []
    requester = {"Authorization": f"Bearer {requester_token(served.secret)}"}
    with live_server(served) as base, http_client(base_url=base, timeout=20) as client:
        for n in range(1, UNITS + 1):
            claimed = client.post("/api/claim", json={"worker_id": "w1",
                                                      "assignment_id": f"a{n}"}).json()
            unit_id, headers = claimed["unit_id"], auth(claimed["token"])
            key = client.get(f"/api/units/{unit_id}", headers=headers) \
                .json()["dialogues"][0]["key"]
            assert client.post(f"/api/units/{unit_id}/submit", headers=headers, json={
                "answers": {key: {"overall_quality": {"dialogue": {"Overall": 3}}}}}
                               ).status_code == 200
            durations.append(rng.choice((5, 12, 30, 61, 95, 180, 240, 600)) + n / 4)
            with served.db.session() as session:  # the time it took
                submitted = session.scalar(select(Submission.created_at)
                                           .join(Unit, Unit.id == Submission.unit_id)
                                           .where(Unit.public_id == unit_id))
                session.execute(update(Unit).where(Unit.public_id == unit_id).values(
                    assigned_at=submitted - timedelta(seconds=durations[-1])))

            overview = client.get("/api/requester/overview", headers=requester)
            assert overview.status_code == 200, (n, overview.text)
            shown = overview.json()["time_per_unit"]
            assert shown["count"] == n
            assert shown["median_s"] == pytest.approx(numpy.median(durations), abs=0.01), n
            assert shown["p90_s"] == pytest.approx(numpy.quantile(durations, 0.9), abs=0.01), n
            workers = client.get("/api/requester/workers", headers=requester)
            assert workers.status_code == 200, (n, workers.text)
            (worker,) = workers.json()["workers"]
            assert worker["median_s"] == pytest.approx(numpy.median(durations), abs=0.01), n

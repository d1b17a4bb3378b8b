"""Balanced pair quotas: every pair of bots gets `battles_per_pair` battles, persisted as units,
never more under concurrent claims from several processes, and no worker meets a pair twice."""

from __future__ import annotations

from collections import Counter

import pytest
from arena_helpers import write_arena_conf
from helpers import app_client, claims_from_processes
from sqlalchemy import select

from collection_and_annotations.server.app import create_app
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Unit, Worker

BOTS = ["a", "b", "c", "d"]  # six pairs
QUOTA = 5


def _battles(db: Database) -> list[tuple[str, str]]:
    with db.snapshot() as connection:
        return [tuple(row) for row in connection.execute(
            select(Unit.pool, Worker.provider_worker_id)
            .join(Worker, Worker.id == Unit.worker_id).where(Unit.status == "assigned"))]


@pytest.mark.postgres
def test_pairs_fill_evenly_and_never_past_their_quota_under_concurrent_claims(
        tmp_path, postgres_url, open_conf):
    conf = write_arena_conf(tmp_path, BOTS, battles_per_pair=QUOTA,
                            task="    allowed_concurrent: 0\n")
    served = open_conf(str(conf), postgres_url)
    first = app_client(create_app(served))
    for n in range(12):  # one at a time: two battles of each pair
        assert first.post("/api/claim", json={"worker_id": f"early{n}",
                                              "assignment_id": "1"}).status_code == 200
    assert sorted(Counter(pool for pool, _w in _battles(served.db)).values()) == [2] * 6

    # 3 processes of 8 workers, each asking for a battle 7 times at once
    codes = claims_from_processes(served, postgres_url, [
        [(f"p{process}w{n % 8}", f"visit{n}") for n in range(56)] for process in range(3)])
    assert set(codes) <= {200, 409}, sorted(set(codes))
    battles = _battles(Database(postgres_url))
    assert codes.count(200) + 12 == len(battles) == 6 * QUOTA
    assert sorted(Counter(pool for pool, _w in battles).values()) == [QUOTA] * 6
    assert max(Counter(battles).values()) == 1  # no worker meets a pair twice


def test_a_worker_meets_each_pair_once_then_gets_no_more_work(tmp_path, sqlite_url, open_conf):
    conf = write_arena_conf(tmp_path, ["a", "b", "c"], battles_per_pair=3,
                            task="    allowed_concurrent: 0\n")
    served = open_conf(str(conf), sqlite_url)
    client = app_client(create_app(served))
    codes = [client.post("/api/claim", json={"worker_id": "w", "assignment_id": str(n)})
             .status_code for n in range(4)]
    assert codes == [200, 200, 200, 409]
    assert len({pool for pool, _w in _battles(served.db)}) == 3

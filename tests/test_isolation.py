"""The platform runs at READ COMMITTED whatever the database's default: concurrent claims,
drafts and submits from several processes on a PostgreSQL database whose default is
REPEATABLE READ never fail."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from helpers import app_client, dialogue, write_task
from sqlalchemy.engine import make_url

from collection_and_annotations.server.app import create_app
from collection_and_annotations.storage.database import Database

GROUPS = 40


def _claims(served, url: str, process: int, statuses) -> None:
    """50 workers of this process, each on two visits at once, claim through the API; each
    unit given is read, drafted and submitted (every status is recorded)."""
    served.db = Database(url)
    client = app_client(create_app(served))

    def claim(n: int) -> int:
        reply = client.post("/api/claim", json={"worker_id": f"w{process}_{n // 2}",
                                                 "assignment_id": f"visit{n}"})
        if reply.status_code != 200:
            return reply.status_code
        unit_id = reply.json()["unit_id"]
        headers = {"Authorization": f"Bearer {reply.json()['token']}"}
        page = client.get(f"/api/units/{unit_id}", headers=headers)
        key = page.json()["dialogues"][0]["key"]
        answers = {key: {"overall_quality": {"dialogue": {"Overall": 3}}}}
        draft = client.put(f"/api/units/{unit_id}/draft", headers=headers,
                           json={"answers": answers})
        submitted = client.post(f"/api/units/{unit_id}/submit", headers=headers,
                                json={"answers": answers})
        statuses.extend([page.status_code, draft.status_code, submitted.status_code])
        return reply.status_code

    with ThreadPoolExecutor(8) as pool:
        statuses.extend(list(pool.map(claim, range(100))))
    served.db.dispose()


@pytest.mark.postgres
def test_claims_and_submits_never_fail_under_a_repeatable_read_default(tmp_path, postgres_url,
                                                                     open_conf):
    url = make_url(postgres_url)
    with psycopg.connect(host=url.host, port=url.port or 5432, user=url.username,
                         dbname=url.database, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{url.database}" SET default_transaction_isolation '
                      "= 'repeatable read'")
    conf = write_task(tmp_path, [{"data": [dialogue(f"d{i}", f"g{i}", ["overall_quality"])]}
                                 for i in range(GROUPS)], {f"g{i}": 3 for i in range(GROUPS)},
                      task={"allowed_concurrent": 0})
    served = open_conf(str(conf), postgres_url)
    served.db.dispose()
    context = multiprocessing.get_context("fork")
    statuses = context.Manager().list()
    processes = [context.Process(target=_claims, args=(served, postgres_url, p, statuses))
                 for p in range(3)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0
    codes = list(statuses)
    units = GROUPS * 3
    assert len(codes) == 300 + 3 * units and set(codes) <= {200, 409}, sorted(set(codes))
    # every unit given once and read, drafted and submitted; the rest told "no more"
    assert codes.count(200) == 4 * units
    with psycopg.connect(host=url.host, port=url.port or 5432, user=url.username,
                         dbname=url.database) as reader:
        assert reader.execute("SELECT count(*) FROM submissions").fetchone()[0] == units

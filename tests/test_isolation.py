"""The platform runs at READ COMMITTED whatever the database's default: concurrent claims from
several processes on a PostgreSQL database whose default is REPEATABLE READ never fail."""

from __future__ import annotations

import multiprocessing

import psycopg
import pytest
from helpers import claims_in_process, dialogue, write_task
from sqlalchemy.engine import make_url

GROUPS = 40


def _claims(served, url: str, process: int, statuses) -> None:
    """50 workers of this process, each on two visits at once, claim through the API."""
    claims_in_process(served, url, [(f"w{process}_{n // 2}", f"visit{n}") for n in range(100)],
                      statuses)


@pytest.mark.postgres
def test_claims_never_fail_under_a_repeatable_read_default(tmp_path, postgres_url, open_conf):
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
    assert len(codes) == 300 and set(codes) <= {200, 409}, sorted(set(codes))
    assert codes.count(200) == GROUPS * 3  # every unit given once, the rest told "no more"

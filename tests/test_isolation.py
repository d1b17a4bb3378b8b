"""The platform runs at READ COMMITTED whatever the database's default: concurrent claims from
several processes on a PostgreSQL database whose default is REPEATABLE READ never fail."""

from __future__ import annotations

import psycopg
import pytest
from helpers import claims_from_processes, dialogue, write_task
from sqlalchemy.engine import make_url

GROUPS = 40


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
    # 3 processes of 50 workers, each worker on two visits at once
    codes = claims_from_processes(served, postgres_url, [
        [(f"w{process}_{n // 2}", f"visit{n}") for n in range(100)] for process in range(3)])
    assert len(codes) == 300 and set(codes) <= {200, 409}, sorted(set(codes))
    assert codes.count(200) == GROUPS * 3  # every unit given once, the rest told "no more"

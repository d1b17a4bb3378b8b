"""Several server processes sharing PostgreSQL: one port, no double assignment, clean stop."""

from __future__ import annotations

import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from helpers import Running, dialogue, free_port, write_task


@pytest.mark.postgres
def test_two_processes_share_the_work_and_stop_together(tmp_path, postgres_url):
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", ["overall_quality"])]} for i in range(20)]
    conf = write_task(tmp_path, lines, {f"g{i}": 2 for i in range(20)},
                      task={"allowed_concurrent": 0})
    port = free_port()
    run = Running(tmp_path, port, str(conf), f"database_url={postgres_url}",
                  "mephisto.architect.server_processes=2")
    try:
        run.wait_for(r"progress: 0/40 units completed")

        def claim(n: int) -> str | None:
            reply = httpx.post(f"http://127.0.0.1:{port}/api/claim",
                               json={"worker_id": f"w{n % 25}", "assignment_id": f"a{n}"},
                               timeout=30)
            return reply.json()["unit_id"] if reply.status_code == 200 else None

        with ThreadPoolExecutor(max_workers=16) as pool:
            claimed = [u for u in pool.map(claim, range(60)) if u]
        assert len(claimed) == len(set(claimed)) == 40
        servers = subprocess.run(["pgrep", "-f", f"mephisto.architect.port={port}"],
                                 capture_output=True, text=True).stdout.split()
        assert len(servers) == 2
        run.process.send_signal(signal.SIGTERM)
        assert run.process.wait(timeout=30) == 0
        left = subprocess.run(["pgrep", "-f", f"mephisto.architect.port={port}"],
                              capture_output=True, text=True).stdout.split()
        assert left == []
    finally:
        run.process.kill()

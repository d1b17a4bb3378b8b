"""`python -m collection_and_annotations serve --task T`: the dashboard of a stored task after
its run ended, with review working and no new work handed out. The stored task is opened and
worked on in this process; `serve` runs as a user runs it."""

from __future__ import annotations

import signal
from pathlib import Path

from helpers import Running, cli, free_port, http_get, http_post, served_run
from test_welcome_run import _work

from collection_and_annotations.storage.database import default_url


def _stored_demo(open_conf, tmp_path: Path, workers: tuple[str, ...] = ()) -> list[str]:
    """The demo's run in `tmp_path / "data"` as `welcome.py conf=demo` leaves it once
    stopped, each of `workers` having done a unit (their ids)."""
    served = open_conf("demo", default_url(tmp_path / "data"))
    with served_run(served) as base:
        return [_work(base, worker, "1") for worker in workers]


def test_serve_opens_a_stored_task_for_review_without_new_work(tmp_path, open_conf):
    unit, = _stored_demo(open_conf, tmp_path, ("alice",))

    review_port = free_port()
    served = Running(tmp_path, review_port, argv=[
        "-m", "collection_and_annotations", "serve", "--task", "demo",
        "--data-dir", str(tmp_path / "data"), "--port", str(review_port)])
    try:
        served.wait_for(r"task 'demo', run 1: 1/8 units completed \(not complete\); open for "
                        "review only")
        served.wait_for(rf"dashboard: http://localhost:{review_port}/dashboard")
        token = served.wait_for(r"token: ([0-9a-f]+)").group(1)
        base = f"http://127.0.0.1:{review_port}"
        auth = {"Authorization": f"Bearer {token}"}
        progress = http_get(f"{base}/api/requester/progress", headers=auth).json()
        assert [r["units"] for r in progress["runs"]] == [{"completed": 1, "launched": 7}]
        refused = http_post(f"{base}/api/claim", json={"worker_id": "bob",
                                                         "assignment_id": "1"})
        assert refused.status_code == 503 and "review only" in refused.json()["error"]
        decided = http_post(f"{base}/api/requester/units/{unit}/review", headers=auth,
                            json={"decision": "approve"})
        assert decided.status_code == 200, decided.text
        progress = http_get(f"{base}/api/requester/progress", headers=auth).json()
        assert progress["runs"][0]["units"] == {"accepted": 1, "launched": 7}
        assert len(progress["runs"]) == 1  # no new run was opened
        overview = http_get(f"{base}/api/requester/overview", headers=auth).json()
        assert overview["state"] == "review_only" and overview["progress"]["done"] == 1
        assert http_get(f"{base}/dashboard").status_code == 200
        served.process.send_signal(signal.SIGINT)
        assert served.process.wait(timeout=20) == 0
    finally:
        served.process.kill()


def test_serve_names_the_tasks_it_knows(tmp_path, open_conf):
    _stored_demo(open_conf, tmp_path)
    result = cli("serve", "--task", "other", "--data-dir", str(tmp_path / "data"))
    assert result.returncode == 1
    assert "no task named 'other' in this database (tasks here: demo)" in result.stderr
    missing = cli("serve", "--task", "demo", "--data-dir", str(tmp_path / "nowhere"))
    assert missing.returncode == 1 and "no database in" in missing.stderr
    bad_url = cli("serve", "--task", "demo", "--data-dir", str(tmp_path / "data"), "--public-url",
                  "ftp://x")
    assert bad_url.returncode == 1
    assert "--public-url='ftp://x' is not a web address" in bad_url.stderr

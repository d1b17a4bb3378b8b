"""`python welcome.py conf=demo` as a user runs it: links, answers over HTTP, progress, Ctrl-C,
and a second run that continues the first."""

from __future__ import annotations

import signal
import time

from helpers import Running, free_port, http_get, http_post
from sqlalchemy import create_engine, text

from collection_and_annotations.server.app import STATIC_DIR


def _answer_everything(unit: dict) -> dict:
    answers: dict = {}
    for d in unit["dialogues"]:
        for name in d["annotation_tasks"]:
            bucket = unit["buckets"][name]
            if bucket["config"] == "comparative":
                value = {"dialogue": bucket["options"][0]}
            elif bucket["config"] == "likert-5-dialogue":
                value = {"dialogue": {o["label"]: 4 for o in bucket["options"]}}
            elif bucket["config"] == "multiselect":
                value = {str(t): [] for t in bucket["targets"][d["key"]]}
            else:
                value = {str(t): {q: ({} if "_type_" in a else {next(iter(a)): {}})
                                  for q, a in bucket["options"].items()}
                         for t in bucket["targets"][d["key"]]}
            answers.setdefault(d["key"], {})[name] = value
    return answers


def _work(base: str, worker: str, assignment: str) -> str:
    claim = http_post(f"{base}/api/claim", json={"worker_id": worker,
                                                  "assignment_id": assignment}).json()
    headers = {"Authorization": f"Bearer {claim['token']}"}
    unit = http_get(f"{base}/api/units/{claim['unit_id']}", headers=headers).json()
    reply = http_post(f"{base}/api/units/{claim['unit_id']}/submit", headers=headers,
                      json={"answers": _answer_everything(unit)})
    assert reply.status_code == 200, reply.text
    return claim["unit_id"]


def test_demo_run_serves_links_records_progress_and_continues(tmp_path):
    assert (STATIC_DIR / "index.html").is_file(), "build the frontend first (./setup.sh)"
    port = free_port()
    run = Running(tmp_path, port, fresh=True)  # a first start: the database is made
    try:
        link = run.wait_for(r"(http://127\.0\.0\.1:\d+/\?worker_id=worker_1&assignment_id=1)")
        run.wait_for(r"data: SQLite file /.*/data/\S+\.sqlite3")
        run.wait_for(rf"dashboard: http://\S+:{port}/dashboard")
        token = run.wait_for(r"token: ([0-9a-f]+)").group(1)
        run.wait_for(r"progress: 0/8 units completed")
        base = f"http://127.0.0.1:{port}"
        page = http_get(link.group(1))
        assert page.status_code == 200 and '<div id="root">' in page.text
        done = [_work(base, "alice", "1"), _work(base, "alice", "2")]
        run.wait_for(r"progress: 2/8 units completed")
        progress = http_get(f"{base}/api/requester/progress",
                            headers={"Authorization": f"Bearer {token}"}).json()
        assert progress["runs"][0]["units"]["completed"] == 2
        run.process.send_signal(signal.SIGINT)
        assert run.process.wait(timeout=20) == 0
        run.wait_for("stopping: completed work is saved")
    finally:
        run.process.kill()

    again = Running(tmp_path, port)
    try:
        again.wait_for(r"run 2: 8 units \(2 already completed\)")
        again.wait_for(r"progress: 2/8 units completed")
        base = f"http://127.0.0.1:{port}"
        done_again = [_work(base, w, "1") for w in ("bob", "carol", "dave")]
        assert not set(done_again) & set(done)
        for worker in ("erin", "frank", "gina"):  # a worker never gets a group twice
            _work(base, worker, "1")
        again.wait_for("all units are completed; the run is complete")
        again.wait_for(r"the server stays up for the dashboard .*/dashboard\); press Ctrl-C")
        time.sleep(1.5)  # a few more monitor rounds: the server must not exit on its own
        assert again.process.poll() is None
        assert http_get(f"{base}/api/health").status_code == 200
        again.process.send_signal(signal.SIGINT)
        assert again.process.wait(timeout=20) == 0
        again.wait_for(r"stopping: the run is complete; the data is in SQLite file .*cep")
    finally:
        again.process.kill()

    finished = Running(tmp_path, port, "demo", "exit_when_complete=true")
    try:
        finished.wait_for(r"task 'demo' is finished: all 8 units were completed in earlier runs")
        finished.wait_for(r"mephisto.task.task_name=<new name>")
        assert finished.process.wait(timeout=20) == 0  # nothing to serve, and told to exit
        assert not any("worker links" in line for line in finished.lines)
    finally:
        finished.process.kill()


def test_the_serving_process_collects_garbage_in_larger_young_collections(tmp_path):
    """What the launcher loads is frozen out of collections, and serving uses the larger
    thresholds (with the defaults, 2,000 open chats stopped the event loop for up to 280 ms
    per collection: bench/RESULTS.md, "Live chat load")."""
    import gc

    from collection_and_annotations.cli import run
    from collection_and_annotations.config.loader import load_run_config

    loaded = load_run_config("demo", [f"data_dir={tmp_path}",
                                      f"mephisto.architect.port={free_port()}"])
    defaults = gc.get_threshold()
    try:
        served = run._load(loaded.config, str(loaded.path))
        assert gc.get_threshold() == run.SERVING_GC_THRESHOLDS != defaults
        assert gc.get_freeze_count() > 0
        served.db.dispose()
    finally:
        gc.set_threshold(*defaults)
        gc.unfreeze()


def test_ctrl_c_while_the_links_print_stops_cleanly_and_closes_the_run(tmp_path):
    """Ctrl-C the moment the first link shows (the links are still printing): the same clean
    stop as later, no traceback, and the run is closed, not left running."""
    run = Running(tmp_path, free_port())
    try:
        run.wait_for(r"http://127\.0\.0\.1:\d+/\?worker_id=worker_1")
        run.process.send_signal(signal.SIGINT)
        assert run.process.wait(timeout=20) == 0, "".join(run.lines)
        run.wait_for("stopping: completed work is saved")
        assert not any("Traceback" in line for line in run.lines), "".join(run.lines)
    finally:
        run.process.kill()
    engine = create_engine(f"sqlite:///{next((tmp_path / 'data').glob('*.sqlite3'))}")
    with engine.connect() as connection:
        statuses = connection.execute(text("SELECT status FROM task_runs")).scalars().all()
    engine.dispose()
    assert statuses == ["stopped"]

"""Several launchers serve one run (mephisto.architect.join=true) on one PostgreSQL: two
`welcome.py` on two ports share the work without giving a unit twice, a chat whose requests go
to one launcher streams from the other, progress agrees, and the run ends with the last
launcher. Without the flag a second launcher is still refused; SQLite refuses the flag."""

from __future__ import annotations

import signal
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from chat_helpers import EventStream, auth, write_chat_conf
from helpers import (
    Running,
    dialogue,
    free_port,
    http_client,
    http_get,
    http_post,
    welcome,
    write_task,
)
from sqlalchemy import create_engine, select

from collection_and_annotations.storage.models import Message, TaskRun

JOIN = "mephisto.architect.join=true"
UNITS = 30


def _launcher(folder: Path, conf: Path, database_url: str, *overrides: str) -> tuple[Running,
                                                                                       str]:
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    run = Running(folder, port, str(conf), f"database_url={database_url}", *overrides)
    return run, f"http://127.0.0.1:{port}"


def _stop(run: Running) -> int:
    run.process.send_signal(signal.SIGINT)
    return run.process.wait(timeout=30)


def _annotate(base: str, worker: str) -> str | None:
    """Claim, read and submit one unit at `base`; the unit's id (None when no work is left)."""
    with http_client(base_url=base, timeout=30) as client:
        claim = client.post("/api/claim", json={"worker_id": worker, "assignment_id": "a"})
        if claim.status_code != 200:
            return None
        unit_id, headers = claim.json()["unit_id"], auth(claim.json()["token"])
        unit = client.get(f"/api/units/{unit_id}", headers=headers).json()
        answers = {unit["dialogues"][0]["key"]: {"overall_quality": {"dialogue": {"Overall": 4}}}}
        done = client.post(f"/api/units/{unit_id}/submit", headers=headers,
                           json={"answers": answers})
        assert done.status_code == 200, done.text
        return unit_id


@pytest.mark.postgres
def test_two_launchers_share_one_run(tmp_path, postgres_url):
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", ["overall_quality"])]} for i in range(UNITS)]
    conf = write_task(tmp_path / "task", lines, {f"g{i}": 1 for i in range(UNITS)})
    first, here = _launcher(tmp_path / "one", conf, postgres_url, JOIN)
    second = None
    try:
        first.wait_for(r"press Ctrl-C to stop")
        second, there = _launcher(tmp_path / "two", conf, postgres_url, JOIN)
        second.wait_for(r"joining run (\d+) of task 't'")
        second.wait_for(r"press Ctrl-C to stop")
        bases = [here, there]
        with ThreadPoolExecutor(8) as pool:
            units = list(pool.map(lambda n: _annotate(bases[n % 2], f"w{n}"),
                                  range(UNITS + 6)))
        done = [unit for unit in units if unit is not None]
        assert len(done) == len(set(done)) == UNITS  # every unit once, the rest refused
        assert any(units[0::2]) and any(units[1::2])  # both launchers served units
        token = first.wait_for(r"  token: (\S+)").group(1)
        counts = [http_get(f"{base}/api/requester/progress", headers=auth(token)).json()
                  for base in bases]
        assert counts[0] == counts[1]
        assert counts[0]["runs"][-1]["units"] == {"completed": UNITS}
        assert _stop(first) == 0  # the other launcher still serves: the run goes on
        assert http_get(f"{there}/api/health").status_code == 200
        assert _run_status(postgres_url) == "running"
        second.wait_for(r"all units are completed")
        assert _stop(second) == 0
        assert _run_status(postgres_url) == "completed"
    finally:
        for run in (first, second):
            if run is not None:
                run.process.kill()


def _run_status(database_url: str) -> str:
    engine = create_engine(database_url)
    with engine.connect() as connection:
        status = connection.scalar(select(TaskRun.status).order_by(TaskRun.id.desc()))
    engine.dispose()
    return status


@pytest.mark.postgres
def test_a_chat_streams_from_one_launcher_while_its_messages_go_to_the_other(tmp_path,
                                                                            postgres_url):
    conf = write_chat_conf(tmp_path / "task", "parrot:2",
                           "parrot: {type: demo, name: parrot, delay: 0.01}\n", num_turns=2)
    first, here = _launcher(tmp_path / "one", conf, postgres_url, JOIN)
    second = None
    try:
        first.wait_for(r"press Ctrl-C to stop", timeout=60)
        second, there = _launcher(tmp_path / "two", conf, postgres_url, JOIN)
        second.wait_for(r"press Ctrl-C to stop", timeout=60)
        claimed = http_post(f"{here}/api/claim", json={"worker_id": "w1", "assignment_id": "1"})
        unit, token = claimed.json()["unit_id"], claimed.json()["token"]
        stream = EventStream(there, unit, token)
        try:
            stream.next("state")
            assert http_post(f"{here}/api/chat/{unit}/start", json={},
                             headers=auth(token)).status_code == 200
            while stream.next("message", timeout=20)[1]["role"] != "bot":
                pass
            for turn in range(2):
                assert http_post(f"{here}/api/chat/{unit}/messages", headers=auth(token),
                                 json={"text": f"turn {turn}"}).status_code == 202
                pieces = []
                while True:
                    event, data = stream.next("piece", "message", timeout=20)
                    if event == "piece":
                        pieces.append(data["text"])
                    elif data["role"] == "bot":
                        break
                assert pieces and "".join(pieces) == data["text"]
        finally:
            stream.close()
        engine = create_engine(postgres_url)
        with engine.connect() as connection:
            roles = connection.scalars(select(Message.role).order_by(Message.id)).all()
        engine.dispose()
        assert roles.count("bot") == 3 and roles.count("worker") == 3
    finally:
        for run in (first, second):
            if run is not None:
                run.process.kill()


@pytest.mark.postgres
def test_without_join_a_second_launcher_is_refused(tmp_path, postgres_url):
    conf = write_task(tmp_path / "task", [{"data": [dialogue("d1", "g1", ["overall_quality"])]}],
                      {"g1": 1})
    first, _ = _launcher(tmp_path / "one", conf, postgres_url)
    try:
        first.wait_for(r"press Ctrl-C to stop")
        second, _ = _launcher(tmp_path / "two", conf, postgres_url, JOIN)
        second.wait_for(r"was started without mephisto.architect.join=true")
        assert second.process.wait(timeout=30) == 2
        third, _ = _launcher(tmp_path / "three", conf, postgres_url)
        third.wait_for(r"a server for task 't' is already running")
        assert third.process.wait(timeout=30) == 2
    finally:
        first.process.kill()


def test_sqlite_refuses_join(tmp_path):
    conf = write_task(tmp_path, [{"data": [dialogue("d1", "g1", ["overall_quality"])]}],
                      {"g1": 1})
    done = welcome(f"conf={conf}", JOIN, f"data_dir={tmp_path / 'data'}", cwd=tmp_path)
    assert done.returncode == 2
    assert "mephisto.architect.join=true" in done.stderr and "PostgreSQL" in done.stderr
    assert not (tmp_path / "data").exists()

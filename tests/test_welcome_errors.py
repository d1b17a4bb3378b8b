"""`python welcome.py` refuses bad input with file, line and reason, exit 2, and writes nothing."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, dialogue, free_port, write_task

LINES = [{"data": [dialogue("d1", "g1", ["relevance"])]},
         {"data": [dialogue("d2", "g2", ["overall_quality"])]}]


def welcome(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "welcome.py"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def _fails(conf: Path, tmp_path: Path, *extra: str) -> str:
    result = welcome(f"conf={conf}", f"data_dir={tmp_path / 'data'}",
                     f"mephisto.architect.port={free_port()}", *extra, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert not (tmp_path / "data" / "cep.sqlite3").exists() or "database" in result.stderr
    return result.stderr


def test_malformed_json_line_names_its_line(tmp_path):
    raw = [json.dumps(LINES[0]), json.dumps(LINES[1]), '{"data": [ {"dialogue_id": "x",']
    conf = write_task(tmp_path, [], {"g1": 1, "g2": 1}, raw_lines=raw)
    error = _fails(conf, tmp_path)
    assert f"{tmp_path / 't.jsonl'}:3: malformed JSON" in error


def test_unknown_bucket(tmp_path):
    conf = write_task(tmp_path, [{"data": [dialogue("d1", "g1", ["relevanse"])]}], {"g1": 1})
    assert f"{tmp_path / 't.jsonl'}:1: dialogue 'd1': unknown bucket 'relevanse'" in _fails(
        conf, tmp_path)


def test_group_missing_from_units_file(tmp_path):
    conf = write_task(tmp_path, LINES, {"g1": 1})
    error = _fails(conf, tmp_path)
    assert "t_units.json" in error and "group 'g2' (line 2 of t.jsonl) is missing" in error


def test_missing_data_file(tmp_path):
    conf = write_task(tmp_path, LINES, {"g1": 1, "g2": 1})
    (tmp_path / "t.jsonl").unlink()
    assert "t.jsonl: task data file (mephisto.blueprint.data_jsonl) not found" in _fails(
        conf, tmp_path)


def test_unknown_conf_key_is_named(tmp_path):
    conf = write_task(tmp_path, LINES, {"g1": 1, "g2": 1}, task={"task_nmae": "x"})
    assert "unknown key 'mephisto.task.task_nmae'" in _fails(conf, tmp_path)


def test_port_in_use(tmp_path):
    conf = write_task(tmp_path, LINES, {"g1": 1, "g2": 1})
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        error = _fails(conf, tmp_path, f"mephisto.architect.port={port}")
    assert f"port {port} on 127.0.0.1 is not free" in error


def test_unreachable_database(tmp_path):
    conf = write_task(tmp_path, LINES, {"g1": 1, "g2": 1})
    error = _fails(conf, tmp_path,
                   "database_url=postgresql+psycopg://nobody@127.0.0.1:1/none")
    assert "cannot reach the database" in error


def test_screening_not_supported_yet(cep_fixtures, tmp_path):
    conf = cep_fixtures / "hydra_configs" / "conf" / "consistency.yaml"
    error = _fails(conf, tmp_path, f"task_dir={cep_fixtures}")
    assert "screening (onboarding) tasks (mephisto.blueprint.use_screening_task=true) is not " \
           "supported yet" in error


@pytest.mark.parametrize("argv", [[], ["conf=a", "conf=b"]])
def test_usage(tmp_path, argv):
    result = welcome(*argv, cwd=tmp_path)
    assert result.returncode == 2 and "usage: python welcome.py conf=" in result.stderr


def test_server_refuses_to_start_without_the_built_page(tmp_path):
    from collection_and_annotations.errors import UserError
    from collection_and_annotations.server.app import check_frontend_built

    with pytest.raises(UserError, match="the worker page is not built .* run ./setup.sh"):
        check_frontend_built(tmp_path)


def test_several_server_processes_need_postgres(tmp_path):
    conf = write_task(tmp_path, LINES, {"g1": 1, "g2": 1})
    error = _fails(conf, tmp_path, "mephisto.architect.server_processes=2")
    assert "several server processes" in error and "need PostgreSQL" in error

"""A data file's problems come all at once, each with its file, line and the column of the
value at fault; a conf run without its `task_dir` is told which one it needs; a relative
`--data-dir` is shown as the folder it resolved to."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import PACKAGE_DIR, cli, dialogue, free_port, welcome, write_task


def _refused(conf: Path, tmp_path: Path) -> str:
    result = welcome(f"conf={conf}", f"data_dir={tmp_path / 'data'}",
                     f"mephisto.architect.port={free_port()}", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "data").exists()
    return result.stderr


def test_every_bad_line_is_reported_with_the_column_of_its_fault(tmp_path):
    long_note = "n" * 480  # the faults sit far into their lines
    wrong_speaker = dialogue("d1", "g1", ["relevance"])
    wrong_speaker["note"] = long_note
    wrong_speaker["turns"][3][0] = "bot"
    lines = [json.dumps({"data": [wrong_speaker]}),
             json.dumps({"data": [dialogue("d2", "g2", ["relevance"])]}),
             json.dumps({"data": [dialogue("d3", "g3", ["relevanse"])]}),
             json.dumps({"data": [dialogue("d4", "g4", ["relevance"])]})[:-3],
             json.dumps({"data": [dialogue("d5", "g5", ["relevance"])]}) + " x"]
    conf = write_task(tmp_path, [], {f"g{i}": 1 for i in range(1, 6)}, raw_lines=lines)
    error = _refused(conf, tmp_path)
    data = tmp_path / "t.jsonl"
    assert "4 problems:" in error, error
    assert (f'{data}:1: column {lines[0].index(chr(34) + "bot")+ 1}: dialogue \'d1\': '
            'turns[3] has the speaker "bot"') in error
    assert (f"{data}:3: column {lines[2].index(chr(34) + 'relevanse') + 1}: dialogue 'd3': "
            "unknown bucket 'relevanse'") in error
    # a record cut short: the column where the line ends, not "column 1" of a next line
    assert (f"{data}:4: malformed JSON at column {len(lines[3]) + 1}: the line ends before "
            "its JSON value does") in error
    assert f"{data}:5: malformed JSON at column {len(lines[4])}: Extra data" in error
    assert f"{data}:2:" not in error


def test_a_conf_of_ones_own_folder_without_task_dir_gets_a_hint(tmp_path):
    study = tmp_path / "study"
    (study / "hydra_configs" / "conf").mkdir(parents=True)
    shutil.copytree(PACKAGE_DIR / "task_config", study / "task_config")
    data = study / "task_config" / "task_data"
    (data / "demo.jsonl").rename(data / "mine.jsonl")
    (data / "demo_units.json").rename(data / "mine_units.json")
    demo = (PACKAGE_DIR / "hydra_configs" / "conf" / "demo.yaml").read_text()
    conf = study / "hydra_configs" / "conf" / "mine.yaml"
    conf.write_text(demo.replace("demo.jsonl", "mine.jsonl"))
    error = _refused(conf, tmp_path)
    assert "task_data/mine.jsonl: task data file (mephisto.blueprint.data_jsonl) not found; " \
           f"did you mean task_dir={study}?" in error, error


def test_a_relative_data_dir_is_named_by_its_absolute_path(tmp_path):
    result = cli("export", "--task", "demo", "--data-dir", "./elsewhere", cwd=tmp_path)
    assert result.returncode == 1
    assert f"no database in {tmp_path.resolve() / 'elsewhere'} (--data-dir ./elsewhere)" \
        in result.stderr, result.stderr


@pytest.mark.parametrize("command", ["export", "analyze", "quals"])
def test_a_database_url_without_runs_is_refused_and_nothing_is_created(tmp_path, postgres_url,
                                                                       command):
    """A missing SQLite file is not created empty, an empty database is named, a bad URL is
    told apart, and no output file is left behind."""
    sub = ["list"] if command == "quals" else []
    out = {"export": ["-o", str(tmp_path / "out.jsonl")],
           "analyze": ["--json", str(tmp_path / "results.json")]}.get(command, [])
    task = [] if command == "quals" else ["--task", "demo"]
    missing = tmp_path / "none.sqlite3"
    for url, said in ((f"sqlite:///{missing}", f"no SQLite database at {missing}"),
                      (postgres_url, "holds no runs of this platform"),
                      ("::nope", "is not a database URL")):
        result = cli(command, *sub, *task, "--database-url", url, *out, cwd=tmp_path)
        assert result.returncode != 0 and said in result.stderr, result.stderr
        assert "Traceback" not in result.stderr, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []

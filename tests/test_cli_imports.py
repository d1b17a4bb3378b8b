"""Commands answer at once: a conf error, `--help` and `export` do not load the statistics and
plotting libraries (they cost seconds of start-up; only `analyze` and `evaluate` need them), and
`export` of a stored task does not load Hydra (only composing a conf needs it). Checked by the
modules each command left loaded, not by a clock."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from demo_study import submit_demo
from helpers import REPO, free_port, migrated_sqlite

HEAVY = ("scipy", "pandas", "matplotlib", "statsmodels", "sacrebleu")
SERVER = ("sqlalchemy", "alembic", "starlette", "uvicorn")  # what a conf error needs neither
CONF = ("hydra", "omegaconf")  # composing a conf: a stored task's export needs neither
# what a served task loads only when its conf asks for them: LLM judges, Prolific's API client
ON_DEMAND = ("collection_and_annotations.judges.served", "httpx")
# Runs commands (separated by THEN) one after the other in this interpreter, printing after
# each its exit code, then which of those modules they loaded.
THEN = "--then--"
WRAPPER = """
import json, runpy, sys
commands, codes = sys.argv[1:], []
while commands:
    end = commands.index(THEN) if THEN in commands else len(commands)
    sys.argv, commands = commands[:end], commands[end + 1:]
    try:
        if sys.argv[0] == "-m":
            sys.argv = sys.argv[1:]
            runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as exc:
        codes.append(exc.code)
    else:
        codes.append(0)
    print(f"ENDED {codes[-1]}", file=sys.stderr, flush=True)
loaded = sorted(name for name in json.loads(NAMES) if name in sys.modules)
print("LOADED " + json.dumps({"code": codes[-1], "loaded": loaded}), file=sys.stderr)
""".replace("NAMES", repr(json.dumps(HEAVY + SERVER + CONF + ON_DEMAND))).replace(
    "THEN", repr(THEN))


def loaded_by(*argv: str, cwd) -> tuple[int, list[str], str]:
    """Exit code, the heavy libraries loaded and stderr of `python <argv>`."""
    result = subprocess.run([sys.executable, "-c", WRAPPER, *argv], cwd=cwd,
                            capture_output=True, text=True, timeout=120)
    return _report(result.stderr, result.stderr + result.stdout)


def loaded_by_each(*commands: list[str], cwd) -> tuple[list[tuple[int, str]], list[str]]:
    """Each of `commands` (`python` arguments) run in turn in one process: each one's exit
    code and output, and the heavy libraries they loaded between them."""
    argv = [arg for command in commands for arg in (THEN, *command)][1:]
    result = subprocess.run([sys.executable, "-u", "-c", WRAPPER, *argv], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=120)
    answers, output = [], ""
    for line in result.stdout.splitlines(keepends=True):
        if line.startswith("ENDED "):
            answers.append((int(line.split()[1]), output))
            output = ""
        else:
            output += line
    _, loaded, _ = _report(result.stdout, result.stdout)
    return answers, loaded


def _report(stderr: str, output: str) -> tuple[int, list[str], str]:
    report = json.loads(stderr.rsplit("LOADED ", 1)[1])
    return report["code"], report["loaded"], output


def test_a_conf_error_loads_no_statistics_or_plotting_library(tmp_path):
    code, loaded, output = loaded_by(str(REPO / "welcome.py"), "conf=nope", cwd=tmp_path)
    assert code == 2 and "conf 'nope' not found" in output, output
    assert not set(loaded) & set(HEAVY + SERVER), output  # neither statistics nor server


def test_help_lists_every_command_without_loading_them(tmp_path):
    code, loaded, output = loaded_by("-m", "collection_and_annotations", "--help", cwd=REPO)
    assert code == 0, output
    assert not set(loaded) & set(HEAVY), output
    for command in ("analyze", "evaluate", "export", "judge", "prolific", "quals", "serve"):
        assert f"  {command} " in output, output


def test_export_loads_no_statistics_or_plotting_library(tmp_path):
    code, loaded, output = loaded_by(
        "-m", "collection_and_annotations", "export", "--task", "demo", "--format", "csv",
        "--data-dir", str(tmp_path / "none"), cwd=REPO)
    assert code != 0 and "no database in" in output, output
    assert not set(loaded) & set(HEAVY), output


@pytest.mark.parametrize(("conf", "exports"), [
    ("demo", [("jsonl", "exported 34 rows"), ("csv", "exported 34 rows"),
              ("submissions", "exported 4 submissions"), ("identities", "exported 1 workers")]),
    ("demo_chat", [("dialogues", "exported 0 dialogues"), ("jsonl", "exported 0 rows")]),
    ("demo_arena", [("battles", "exported 0 battles"), ("jsonl", "exported 0 rows")]),
])
def test_export_of_a_stored_task_loads_no_conf_or_statistics_library(tmp_path, open_conf, conf,
                                                                     exports):
    """Every format, on each kind of task (its kind's module is loaded to read its answers),
    one after the other in one process: none of them loads those libraries."""
    database_url = f"sqlite:///{tmp_path / 'cep.sqlite3'}"
    served = open_conf(conf, database_url)
    if conf == "demo":
        submit_demo(served, workers=1)
    commands = [["-m", "collection_and_annotations", "export", "--task", conf, "--format", fmt,
                 "--database-url", database_url, "-o", str(tmp_path / f"{fmt}.jsonl"),
                 "--annotation-tasks", "relevance"] for fmt, _ in exports]
    answers, loaded = loaded_by_each(*commands, cwd=REPO)
    for (fmt, exported), (code, output) in zip(exports, answers, strict=True):
        assert code == 0 and exported in output, (fmt, output)
        assert (tmp_path / f"{fmt}.jsonl").is_file(), fmt
    assert not set(loaded) & set(HEAVY + CONF), answers


def test_a_served_task_loads_no_judge_or_analysis_code_it_does_not_use(tmp_path):
    """The demo names no judges and pays through no platform: from its start to Ctrl-C once it
    serves, neither the judges' code nor an HTTP client is loaded, nor the analysis's
    statistics and plotting libraries; and on a database already at the newest schema (most
    starts), not Alembic either."""
    migrated_sqlite(tmp_path / "data" / "cep.sqlite3")
    server = subprocess.Popen(
        [sys.executable, "-u", "-c", WRAPPER, str(REPO / "welcome.py"), "conf=demo",
         f"data_dir={tmp_path / 'data'}", f"mephisto.architect.port={free_port()}"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    printed = []
    try:
        for line in server.stdout:  # links, then the monitor's first progress line: serving
            printed.append(line)
            if "] progress: " in line:
                break
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=60)
    finally:
        server.kill()
    code, loaded, output = _report(err, "".join(printed) + out + err)
    assert code == 0 and "stopping" in output, output
    assert not set(loaded) & {"scipy", "pandas", "matplotlib", "statsmodels", "alembic",
                              *ON_DEMAND}, output


def test_every_listed_command_exists():
    """The commands `--help` lists without importing them are the modules' commands."""
    import importlib

    import click

    from collection_and_annotations.cli import COMMANDS

    for name in COMMANDS:
        module = importlib.import_module(f"collection_and_annotations.cli.{name}")
        assert isinstance(getattr(module, name), click.Command)

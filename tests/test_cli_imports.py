"""Commands answer at once: a conf error, `--help` and `export` do not load the statistics and
plotting libraries (they cost seconds of start-up; only `analyze` and `evaluate` need them).
Checked by the modules each command left loaded, not by a clock."""

from __future__ import annotations

import json
import subprocess
import sys

from helpers import REPO

HEAVY = ("scipy", "pandas", "matplotlib", "statsmodels", "sacrebleu")
SERVER = ("sqlalchemy", "alembic", "starlette", "uvicorn")  # what a conf error needs neither
# Runs a command in this interpreter, then prints which heavy libraries it loaded.
WRAPPER = """
import json, runpy, sys
sys.argv = sys.argv[1:]
try:
    if sys.argv[0] == "-m":
        sys.argv = sys.argv[1:]
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
loaded = sorted({name.split(".")[0] for name in sys.modules} & set(json.loads(NAMES)))
print("LOADED " + json.dumps({"code": code, "loaded": loaded}), file=sys.stderr)
""".replace("NAMES", repr(json.dumps(HEAVY + SERVER)))


def loaded_by(*argv: str, cwd) -> tuple[int, list[str], str]:
    """Exit code, the heavy libraries loaded and stderr of `python <argv>`."""
    result = subprocess.run([sys.executable, "-c", WRAPPER, *argv], cwd=cwd,
                            capture_output=True, text=True, timeout=120)
    report = json.loads(result.stderr.rsplit("LOADED ", 1)[1])
    return report["code"], report["loaded"], result.stderr + result.stdout


def test_a_conf_error_loads_no_statistics_or_plotting_library(tmp_path):
    code, loaded, output = loaded_by(str(REPO / "welcome.py"), "conf=nope", cwd=tmp_path)
    assert code == 2 and "conf 'nope' not found" in output, output
    assert loaded == [], output  # neither the statistics nor the server's libraries


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


def test_every_listed_command_exists():
    """The commands `--help` lists without importing them are the modules' commands."""
    import importlib

    import click

    from collection_and_annotations.cli import COMMANDS

    for name in COMMANDS:
        module = importlib.import_module(f"collection_and_annotations.cli.{name}")
        assert isinstance(getattr(module, name), click.Command)

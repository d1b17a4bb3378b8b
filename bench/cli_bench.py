"""Commands answer at once (issue 27 point 8): CPU and wall time of `--help`, a conf error,
`export` of a small stored task in each format, and `welcome.py conf=demo` from its start to
its first worker link (on a fresh data_dir), for this checkout and `--before REV`.

The two revisions run in turn, command by command (before, after, before, ...), with this
interpreter and its libraries: only the code differs. Each export reads the same databases,
made once by this checkout: the demo with 8 submissions, and the chat and arena demos as they
start (their export still loads the task kind's code). Prints the median and the range of each.

    .venv/bin/python bench/cli_bench.py [--runs 7] [--before REV]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))
from baseline import checkout  # noqa: E402
from demo_study import submit_demo  # noqa: E402
from helpers import free_port  # noqa: E402
from procstats import cpu_seconds, interrupt  # noqa: E402

from collection_and_annotations.blueprints import build_blueprint  # noqa: E402
from collection_and_annotations.cli.run import open_task  # noqa: E402
from collection_and_annotations.config.loader import load_run_config  # noqa: E402
from collection_and_annotations.storage.database import Database, default_url  # noqa: E402

DEMOS = ("demo", "demo_chat", "demo_arena")


def make_databases(folder: Path) -> None:
    """One SQLite database per demo under `folder/<demo>`; the demo's with 8 submissions."""
    for conf in DEMOS:
        loaded = load_run_config(conf, [f"data_dir={folder / conf}"])
        db = Database(default_url(folder / conf))
        try:
            served = open_task(loaded.config, str(loaded.path), db,
                               build_blueprint(loaded.config))
            if conf == "demo":
                submit_demo(served)
        finally:
            db.dispose()


def commands(folder: Path, out: Path) -> dict[str, list[str]]:
    """The commands timed, by name (run from the checkout's folder)."""
    def export(task: str, fmt: str, *extra: str) -> list[str]:
        return ["-m", "collection_and_annotations", "export", "--task", task, "--format", fmt,
                "--data-dir", str(folder / task), "-o", str(out), *extra]

    return {
        "--help": ["-m", "collection_and_annotations", "--help"],
        "welcome.py conf=nope": ["welcome.py", "conf=nope"],
        "export jsonl": export("demo", "jsonl"),
        "export csv": export("demo", "csv"),
        "export submissions": export("demo", "submissions"),
        "export dialogues (chat)": export("demo_chat", "dialogues", "--annotation-tasks",
                                          "relevance"),
        "export battles (arena)": export("demo_arena", "battles"),
    }


def run_once(code: Path, argv: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of `python <argv>` run in `code`."""
    env = {**os.environ, "PYTHONPATH": str(code)}  # this checkout's code before the installed
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, *argv], cwd=code, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 2):  # 2: the conf error, as expected
        raise SystemExit(f"{code}: python {' '.join(argv)} exited {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def first_link(code: Path, data_dir: Path) -> tuple[float, float]:
    """Wall and CPU seconds of `welcome.py conf=demo` from its start to its first worker link."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-u", "welcome.py", "conf=demo", f"data_dir={data_dir}",
         f"mephisto.architect.port={free_port()}"],
        cwd=code, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for line in server.stdout:
            if "worker_id=" in line:
                return time.perf_counter() - started, cpu_seconds(server.pid)
        raise SystemExit(f"{code}: welcome.py conf=demo ended before printing a link")
    finally:
        interrupt(server)


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):5.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs of each command and revision")
    parser.add_argument("--before", default="",
                        help="revision to compare with (empty: only this checkout)")
    args = parser.parse_args()
    print(f"{platform.node()} ({os.cpu_count()} cores, python {platform.python_version()}), "
          f"load average {os.getloadavg()[0]:.1f}, {args.runs} runs each: "
          "median (min-max) seconds")
    revisions = [("after", REPO)]
    if args.before:
        revisions.insert(0, (f"before ({args.before})", checkout(args.before)))
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        make_databases(folder)
        timed = {**{name: (lambda code, argv=argv: run_once(code, argv)) for name, argv in
                    commands(folder, folder / "out").items()},
                 "welcome.py conf=demo to its first link": (
                     lambda code: first_link(code, Path(tempfile.mkdtemp(dir=folder))))}
        for name, measure in timed.items():
            results: dict[str, tuple[list[float], list[float]]] = {
                label: ([], []) for label, _ in revisions}
            for _ in range(args.runs):
                for label, code in revisions:
                    wall, cpu = measure(code)
                    results[label][0].append(wall)
                    results[label][1].append(cpu)
            print(name)
            for label, (walls, cpus) in results.items():
                print(f"  {label:>18}: CPU {summary(cpus)}, wall {summary(walls)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

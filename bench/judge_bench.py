"""LLM judge throughput (issue 28): `judge` over D dialogues x 4 buckets (a question tree, a
multiselect and a 1-5 rating per bot turn, a 1-5 rating of the dialogue) against the fake
OpenAI-compatible judge of the tests (tests/judges/fake_judge.py) in a process of its own,
answering each call after a fixed latency.

Prints calls/s and dialogues/min of the run, and the platform's CPU per call: the `judge`
process's CPU (user + system, from /proc) less that of the same command run again when there
is nothing left to ask (start-up, reading the task), over the calls made. The capacity of one
core is 1 / (CPU per call): the platform is the bottleneck only when calls/s at this
concurrency and latency comes near it. The fake endpoint's CPU is not counted.

    .venv/bin/python bench/judge_bench.py [--dialogues 1000] [--latency 0.05]
        [--concurrency 16] [--db sqlite|postgres] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))
from helpers import free_port, write_task  # noqa: E402
from procstats import cpu_seconds  # noqa: E402
from sqlalchemy import func, select  # noqa: E402
from worker_api_load import drop_postgres, postgres_database  # noqa: E402

from collection_and_annotations.blueprints import build_blueprint  # noqa: E402
from collection_and_annotations.cli.run import open_task  # noqa: E402
from collection_and_annotations.config.loader import load_run_config  # noqa: E402
from collection_and_annotations.storage.database import Database  # noqa: E402
from collection_and_annotations.storage.models import JudgeCall  # noqa: E402

BUCKETS = ["relevance", "issues", "turn_quality", "overall_quality"]
KEY_ENV = "JUDGE_BENCH_KEY"


def _study(folder: Path, dialogues: int, base_url: str) -> Path:
    lines = [{"data": [{"dialogue_id": f"d{i}", "group_id": f"g{i}", "bot": f"bot{i % 4}",
                        "annotation_tasks": BUCKETS,
                        "turns": [["user" if t % 2 == 0 else "system",
                                   f"Turn {t} of dialogue {i}: some words about the weather."
                                   + (" #off_topic" if (i + t) % 7 == 0 else "")]
                                  for t in range(6)]}]} for i in range(dialogues)]
    conf = write_task(folder, lines, {f"g{i}": 1 for i in range(dialogues)},
                      task_name="bench", port=free_port())
    opts = folder / "model_opts.yaml"
    opts.write_text(f"gpt:\n  type: openai\n  base_url: {base_url}\n  model: bench-judge\n"
                    f"  api_key_env: {KEY_ENV}\n  retries: 3\n")
    conf.write_text(conf.read_text().replace("  blueprint:\n",
                                             f"  blueprint:\n    model_opt_path: {opts}\n", 1))
    return conf


def _judge(url: str, folder: Path, concurrency: int) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, output) of one `judge` run."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "collection_and_annotations", "judge", "--task", "bench",
         "--bot", "gpt", "--concurrency", str(concurrency), "--database-url", url],
        cwd=folder, env={**os.environ, KEY_ENV: "bench-key"}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    own = cpu_seconds(os.getpid(), children=True)
    output, _ = process.communicate(timeout=3600)
    wall = time.monotonic() - started
    cpu = cpu_seconds(os.getpid(), children=True) - own  # the child's, once it is reaped
    if process.returncode != 0:
        raise SystemExit(f"judge failed ({process.returncode}):\n{output}")
    return wall, cpu, output


def run(args: argparse.Namespace) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(prefix="judge-bench-"))
    port = free_port()
    fake = subprocess.Popen([sys.executable, str(REPO / "tests" / "judges" / "fake_judge.py"),
                             "--port", str(port), "--latency", str(args.latency)])
    name = None
    if args.db == "postgres":
        url, name = postgres_database()
    else:
        url = f"sqlite:///{folder / 'cep.sqlite3'}"
    try:
        time.sleep(1.5)  # the fake endpoint starts
        conf = _study(folder, args.dialogues, f"http://127.0.0.1:{port}/v1")
        loaded = load_run_config(str(conf), [f"database_url={url}",
                                             f"data_dir={folder / 'data'}"])
        db = Database(url)
        open_task(loaded.config, str(loaded.path), db, build_blueprint(loaded.config))
        wall, cpu, output = _judge(url, folder, args.concurrency)
        _, idle_cpu, _ = _judge(url, folder, args.concurrency)  # nothing left to ask
        with db.read() as session:
            calls = session.scalar(select(func.count()).select_from(JudgeCall))
        db.dispose()
    finally:
        fake.terminate()
        fake.wait(10)
        if name:
            drop_postgres(name)
    per_call = (cpu - idle_cpu) / calls
    return {"calls": calls, "wall_s": wall, "calls_per_s": calls / wall,
            "dialogues_per_min": args.dialogues / wall * 60, "cpu_s": cpu,
            "fixed_cpu_s": idle_cpu, "cpu_ms_per_call": per_call * 1000,
            "capacity_calls_per_s_one_core": 1 / per_call, "summary": output.strip()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(f"# {platform.python_version()} on {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}; {args.dialogues} dialogues x {len(BUCKETS)} buckets, "
          f"{args.latency * 1000:g} ms per call, concurrency {args.concurrency}, {args.db}")
    for _ in range(args.repeat):
        found = run(args)
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v
                          for k, v in found.items()}))


if __name__ == "__main__":
    main()

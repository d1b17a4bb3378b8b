"""Start-up of a large task: time and peak memory until `welcome.py` prints its first link.

Writes a task of D dialogues with three annotators each (3*D units), then starts the server
from this checkout and from an earlier revision (`--before`, default: the last one before
issue 8) in the same run, on a fresh SQLite database each time, and once more on the filled
database (a rerun of the same task).

    .venv/bin/python bench/startup_bench.py --dialogues 50000
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

from baseline import DEFAULT_BEFORE, REPO, checkout, python_for
from procstats import interrupt

BUCKETS = REPO / "collection_and_annotations" / "task_config" / "annotation_buckets.json"


def write_task(folder: Path, dialogues: int) -> Path:
    with (folder / "big.jsonl").open("w") as data:
        for i in range(dialogues):
            turns = [["user", f"Hello number {i}, how are you today?"],
                     ["system", "Hi! I am fine, thank you. What would you like to talk about?"],
                     ["user", "Let us talk about the weather and the news of the week."],
                     ["system", "Sure. It has been sunny here; the news was mostly sports."]]
            data.write(json.dumps({"data": [{
                "dialogue_id": f"big-{i}", "group_id": f"g{i}",
                "annotation_tasks": ["relevance", "overall_quality"], "turns": turns,
            }]}) + "\n")
    (folder / "big_units.json").write_text(json.dumps({f"g{i}": 3 for i in range(dialogues)}))
    conf = folder / "big.yaml"
    conf.write_text(
        "#@package _global_\n"
        "mephisto:\n  architect:\n    hostname: 127.0.0.1\n"
        f"  blueprint:\n    data_jsonl: {folder / 'big.jsonl'}\n"
        f"    annotations_config_path: {BUCKETS}\n"
        "  task:\n    task_name: big\n"
    )
    return conf


def start_until_first_link(checkout_dir: Path, conf: Path, data_dir: Path,
                           port: int) -> tuple[float, float]:
    """Seconds until the first worker link is printed, and the peak RSS in MB by then."""
    started = time.perf_counter()
    server = subprocess.Popen(
        [str(python_for(checkout_dir)), "-u", str(checkout_dir / "welcome.py"), f"conf={conf}",
         f"mephisto.architect.port={port}", f"data_dir={data_dir}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=data_dir.parent,
    )
    peak_kb = 0
    try:
        for line in server.stdout:
            with open(f"/proc/{server.pid}/status") as status:
                for field in status:
                    if field.startswith("VmHWM:"):
                        peak_kb = max(peak_kb, int(field.split()[1]))
            if "worker_id=" in line:
                return time.perf_counter() - started, peak_kb / 1024
        raise SystemExit(f"{checkout_dir}: the server ended before printing a link")
    finally:
        interrupt(server)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=50_000)
    parser.add_argument("--before", default=DEFAULT_BEFORE,
                        help="revision to compare with (empty: only this checkout)")
    args = parser.parse_args()
    print(f"start-up of a task of {args.dialogues} dialogues x 3 annotators "
          f"({3 * args.dialogues} units) on {platform.node()} "
          f"({os.cpu_count()} cores, python {platform.python_version()})")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        conf = write_task(folder, args.dialogues)
        checkouts = [("after", REPO)]
        if args.before:
            checkouts.insert(0, (f"before ({args.before})", checkout(args.before)))
        for port, (name, directory) in enumerate(checkouts, start=38_500):
            data_dir = folder / f"data-{port}"
            first = start_until_first_link(directory, conf, data_dir, port)
            again = start_until_first_link(directory, conf, data_dir, port)
            print(f"  {name:>18}: first start {first[0]:6.1f} s, peak {first[1]:5.0f} MB; "
                  f"rerun {again[0]:6.1f} s, peak {again[1]:5.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

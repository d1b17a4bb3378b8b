"""`analyze` over 1,000,000 generated answers with 1,000 bootstrap resamples (issue 13).

Writes a whole-submissions export file (the shape `export --format submissions` writes) of
generated answers - 4 bots, 12,500 dialogues each, 2 annotators, 3 bot turns x 3 label buckets
+ 1 dialogue rating per unit, plus comparisons - then times `analyze --from` on it in a child
process and reports wall time and the child's peak resident memory.

    .venv/bin/python bench/analysis_bench.py [--answers 1000000] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from analysis.synthetic import BUCKETS, study  # noqa: E402

ROWS_PER_UNIT = 10  # 3 turns x (multiselect, grammar, empathy) + 1 rating


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=1_000_000)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    bots = {"bot_a": 0.05, "bot_b": 0.1, "bot_c": 0.2, "bot_d": 0.3}
    comparisons = args.answers // 50
    dialogues = (args.answers - comparisons) // (ROWS_PER_UNIT * 2 * len(bots))
    with tempfile.TemporaryDirectory() as folder:
        export, buckets = Path(folder) / "subs.jsonl", Path(folder) / "buckets.json"
        start = time.perf_counter()
        records = study(np.random.default_rng(0), bots, dialogues=dialogues,
                        strengths={b: -i * 0.3 for i, b in enumerate(bots)},
                        comparisons=comparisons, spread=0.5)
        with export.open("w") as out:
            for record in records:
                out.write(json.dumps(record) + "\n")
        del records
        buckets.write_text(json.dumps({"config": BUCKETS}))
        print(f"generated in {time.perf_counter() - start:.1f} s", flush=True)
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "collection_and_annotations", "analyze", "--from",
             str(export), "--buckets", str(buckets), "--resamples", str(args.resamples),
             "--json", str(Path(folder) / "results.json"),
             "--output", str(Path(folder) / "report.html")],
            capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(done.stderr.strip())
        if done.returncode:
            raise SystemExit(done.returncode)
        print(f"analyze: {seconds:.1f} s, peak memory {peak:.0f} MiB, "
              f"{args.resamples} resamples")


if __name__ == "__main__":
    main()

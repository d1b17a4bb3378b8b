"""`analyze` over 1,000,000 generated answers with 1,000 resamples, this checkout against an
earlier revision in the same run (issues 13 and 24).

Writes a whole-submissions export file (the shape `export --format submissions` writes) of
generated answers - 4 bots, 12,250 dialogues each, 2 annotators, 3 bot turns x 3 label buckets
+ 1 dialogue rating per unit, plus comparisons; 1 % of the units rejected and 1 % flagged for
review, so every pass of the figures runs - then times `analyze --from` on it in a child
process per revision (the earlier one extracted with `git archive`, run by this interpreter)
and reports each child's wall time and peak resident memory. The two alternate `--rounds`
times, so both see the same machine.

    .venv/bin/python bench/analysis_bench.py [--answers 1000000] [--resamples 1000]
        [--before f783c93] [--rounds 1] [--decided 0.01]
"""

from __future__ import annotations

import argparse
import json
import os
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
# The last revision before issue 24's analysis changes.
DEFAULT_BEFORE = "f783c93"


def write_study(folder: Path, answers: int, decided: float) -> tuple[Path, Path]:
    """The generated export file and its buckets file; a share `decided` of the units is
    rejected and as many are flagged for review, so every pass of the figures runs."""
    bots = {"bot_a": 0.05, "bot_b": 0.1, "bot_c": 0.2, "bot_d": 0.3}
    comparisons = answers // 50
    dialogues = (answers - comparisons) // (ROWS_PER_UNIT * 2 * len(bots))
    export, buckets = folder / "subs.jsonl", folder / "buckets.json"
    records = study(np.random.default_rng(0), bots, dialogues=dialogues,
                    strengths={b: -i * 0.3 for i, b in enumerate(bots)},
                    comparisons=comparisons, spread=0.5)
    rng = np.random.default_rng(1)
    with export.open("w") as out:
        for record in records:
            draw = rng.random()
            if draw < decided:
                record["review"] = {"decision": "reject", "reason": "", "sync_state": "done"}
            elif draw < 2 * decided:
                record["flagged_for_review"] = True
            out.write(json.dumps(record) + "\n")
    buckets.write_text(json.dumps({"config": BUCKETS}))
    return export, buckets


def extract(revision: str, folder: Path) -> Path:
    """The package of `revision`, extracted (no worktree: the repository is left as it is)."""
    target = folder / f"rev-{revision}"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision,
                              "collection_and_annotations"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def run(checkout: Path, export: Path, buckets: Path, resamples: int,
        out: Path) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds, peak resident MiB and the last line of stderr of one
    `analyze` (CPU time tells the work apart from a busy machine's waiting)."""
    errors = out / "stderr.txt"
    start = time.perf_counter()
    with errors.open("w") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-m", "collection_and_annotations", "analyze", "--from",
             str(export), "--buckets", str(buckets), "--resamples", str(resamples),
             "--json", str(out / "results.json"), "--output", str(out / "report.html")],
            cwd=checkout, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    text = errors.read_text().strip()
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"analyze failed in {checkout}:\n{text}")
    return (seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
            text.splitlines()[-1] if text else "")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=1_000_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--before", default=DEFAULT_BEFORE,
                        help="revision to compare with (empty: this checkout only)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--decided", type=float, default=0.01,
                        help="share of units rejected, and share flagged for review")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        start = time.perf_counter()
        export, buckets = write_study(folder, args.answers, args.decided)
        print(f"generated {export.stat().st_size / 2**20:.0f} MiB in "
              f"{time.perf_counter() - start:.1f} s", flush=True)
        checkouts = {"after": ROOT}
        if args.before:
            checkouts = {f"before ({args.before})": extract(args.before, folder), **checkouts}
        for round_number in range(1, args.rounds + 1):
            for label, checkout in checkouts.items():
                out = folder / f"out-{round_number}-{len(label)}"
                out.mkdir()
                seconds, cpu, peak, line = run(checkout, export, buckets, args.resamples, out)
                print(f"round {round_number} {label}: {seconds:.1f} s ({cpu:.1f} s CPU), "
                      f"peak {peak:.0f} MiB ({args.resamples} resamples; {line})", flush=True)
        print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()

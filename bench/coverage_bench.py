"""How often the analysis's 95 % intervals cover the truth in simulated studies (issue 24):
behaviour rates at several rates, correlations and numbers of dialogues per bot, turn-level
Likert means, and the worker-aware interval when 4 biased workers did all the work; beside the
dialogue bootstrap the analysis used before. Seeded; prints one line per condition.

    .venv/bin/python bench/coverage_bench.py [--studies 2000]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from analysis import synthetic  # noqa: E402

from collection_and_annotations.analysis.intervals import clustered_means  # noqa: E402


def _report(name: str, hits: list[tuple[bool, float]], old: list[bool]) -> None:
    covered = np.mean([h for h, _ in hits])
    width = np.mean([w for _, w in hits])
    error = math.sqrt(covered * (1 - covered) / len(hits))
    before = f"; dialogue bootstrap {np.mean(old):.1%}" if old else ""
    print(f"{name}: {covered:.1%} (± {error:.1%}), mean width {width:.3f}{before}",
          flush=True)


def rates(studies: int, rng: np.random.Generator) -> None:
    for spread in (1.0, 1.5, 2.5):
        for rate in (0.05, 0.2, 0.5):
            truth = synthetic.true_rate(rate, spread)
            for dialogues in (8, 25):
                hits, old = [], []
                for _ in range(studies):
                    values, groups, _ = synthetic.clustered_answers(rng, dialogues, rate, spread)
                    [mean], _ = clustered_means(values, [groups], 0.95)
                    hits.append((mean.ci_low <= truth <= mean.ci_high,
                                 mean.ci_high - mean.ci_low))
                    low, high = synthetic.dialogue_bootstrap(values, groups, rng)
                    old.append(low <= truth <= high)
                _report(f"rate {rate} (truth {truth:.3f}), logit sd {spread}, "
                        f"{dialogues} dialogues", hits, old)


def ratings(studies: int, rng: np.random.Generator) -> None:
    for spread in (0.5, 1.0, 2.0):
        truth = synthetic.true_rating(spread)
        for dialogues in (8, 25):
            hits, old = [], []
            for _ in range(studies):
                values, groups = synthetic.clustered_ratings(rng, dialogues, spread)
                [mean], _ = clustered_means(values, [groups], 0.95, (1.0, 5.0))
                hits.append((mean.ci_low <= truth <= mean.ci_high, mean.ci_high - mean.ci_low))
                low, high = synthetic.dialogue_bootstrap(values, groups, rng)
                old.append(low <= truth <= high)
            _report(f"turn-level Likert mean (truth {truth:.2f}), dialogue sd {spread}, "
                    f"{dialogues} dialogues", hits, old)


def few_workers(studies: int, rng: np.random.Generator) -> None:
    for bias in (0.5, 1.0):
        truth = synthetic.few_workers_truth(bias)
        alone, aware = [], []
        for _ in range(studies):
            values, dialogues, workers = synthetic.few_workers_answers(rng, bias)
            [one], _ = clustered_means(values, [dialogues], 0.95)
            [two], _ = clustered_means(values, [dialogues, workers], 0.95)
            alone.append((one.ci_low <= truth <= one.ci_high, one.ci_high - one.ci_low))
            aware.append((two.ci_low <= truth <= two.ci_high, two.ci_high - two.ci_low))
        _report(f"4 workers (logit bias sd {bias}) did all the work, 25 dialogues: dialogues "
                "only", alone, [])
        _report("  the same, dialogues and workers as clusters", aware, [])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(24)
    start = time.perf_counter()
    rates(args.studies, rng)
    ratings(args.studies, rng)
    few_workers(args.studies, rng)
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()

"""Benchmark: BLEU + chrF + richness through the `evaluate` CLI vs sacrebleu called directly.

    python bench/metrics_bench.py            # 100,000 responses (about a minute and a half)
    python bench/metrics_bench.py --n 20000  # quicker

Builds a synthetic corpus of responses with one reference each and four bots, writes it as a
predictions JSONL, then times in the same run (1) sacrebleu's BLEU and chrF corpus scores on the
in-memory lists and (2) `python -m collection_and_annotations evaluate --metrics
bleu,chrf,richness --by bot` on the file (process start, reading, per-bot breakdown included).
The CLI's BLEU and chrF must equal sacrebleu's. Target: CLI / sacrebleu <= 1.2.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sacrebleu.metrics import BLEU, CHRF

REPO = Path(__file__).resolve().parents[1]
BOTS = ("alpha", "beta", "gamma", "delta")
TARGET_RATIO = 1.2


def corpus(size: int, seed: int) -> list[dict]:
    """Prediction records: Zipf-distributed words, references edited from the hypothesis."""
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(5000)] + ["the", "a", "is", "you", "I"]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    records = []
    for index in range(size):
        words = rng.choices(vocabulary, weights, k=rng.randint(4, 24))
        reference = [rng.choice(vocabulary) if rng.random() < 0.3 else w for w in words]
        end = rng.choice([".", "?", "!", ""])
        records.append(
            {
                "id": index,
                "hypothesis": " ".join(words).capitalize() + end,
                "references": [" ".join(reference).capitalize() + end],
                "tags": {"bot": BOTS[index % len(BOTS)]},
            }
        )
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="number of responses")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    records = corpus(args.n, args.seed)
    hypotheses = [r["hypothesis"] for r in records]
    references = [[r["references"][0] for r in records]]
    with tempfile.TemporaryDirectory() as tmp:
        data, results = Path(tmp) / "predictions.jsonl", Path(tmp) / "results.json"
        with data.open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(r) + "\n" for r in records)
        del records  # sacrebleu then runs with only its inputs in memory
        gc.collect()

        start = time.perf_counter()
        bleu = BLEU().corpus_score(hypotheses, references).score
        chrf = CHRF().corpus_score(hypotheses, references).score
        direct = time.perf_counter() - start

        command = [sys.executable, "-m", "collection_and_annotations", "evaluate"]
        command += ["--input", str(data), "--metrics", "bleu,chrf,richness", "--by", "bot"]
        command += ["--output", str(results), "--no-progress"]
        start = time.perf_counter()
        subprocess.run(command, cwd=REPO, check=True, capture_output=True)
        cli = time.perf_counter() - start
        metrics = json.loads(results.read_text(encoding="utf-8"))["metrics"]

    assert abs(metrics["bleu"]["value"] - bleu) < 1e-9, (metrics["bleu"]["value"], bleu)
    assert abs(metrics["chrf"]["value"] - chrf) < 1e-9, (metrics["chrf"]["value"], chrf)
    ratio = cli / direct
    print(f"responses:                {args.n}")
    print(f"BLEU / chrF:              {bleu:.2f} / {chrf:.2f} (CLI and sacrebleu agree)")
    print(f"sacrebleu BLEU + chrF:    {direct:.2f} s")
    print(f"CLI bleu,chrf,richness:   {cli:.2f} s (with --by bot)")
    print(f"ratio CLI / sacrebleu:    {ratio:.3f} (target <= {TARGET_RATIO})")
    sys.exit(0 if ratio <= TARGET_RATIO else 1)


if __name__ == "__main__":
    main()

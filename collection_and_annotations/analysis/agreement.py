"""Inter-annotator agreement per bucket and label: Krippendorff's alpha (from
`metrics.agreement`) with an item-bootstrap interval, on the items rated by >= 2 annotators.

Levels: nominal for turn labels (presence/absence of a multiselect value or a derived
behaviour, all bots pooled) and for comparisons (which dialogue was chosen, or none); ordinal
for 1-5 ratings."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from collection_and_annotations.analysis.answers import LabelAnswers, RatingAnswers
from collection_and_annotations.analysis.load import Tables
from collection_and_annotations.analysis.stats import alpha_bootstrap

MIN_ITEMS = 10  # fewer pairable items than this: the interval says little, and a note says so
CHOICES = ("turns", "turns2", None)


def _clean(x: float) -> float | None:
    return None if x is None or np.isnan(x) else float(x)


def _row(bucket: str, label: str, level: str, items: Any, workers: Any, values: np.ndarray,
         domain: list, resamples: int, rng: np.random.Generator,
         confidence: float) -> dict[str, Any]:
    """`values`: one column index into `domain` per (item, worker) answer; `items` and
    `workers` name (or code) each answer's item and worker."""
    names, codes = np.unique(np.asarray(items), return_inverse=True)
    counts = np.zeros((len(names), len(domain)))
    np.add.at(counts, (codes, values), 1)
    pairable = counts.sum(axis=1) >= 2
    raters = {w for w, c in zip(workers, codes, strict=True) if pairable[c]}
    alpha, low, high = alpha_bootstrap(counts, level, domain, resamples, rng, confidence)
    note = None
    if not pairable.any():
        note = "no item has two annotators: the design gives no overlap to estimate agreement"
    elif pairable.sum() < MIN_ITEMS:
        note = f"only {int(pairable.sum())} items with >= 2 annotators: too little overlap"
    elif np.isnan(alpha):
        note = "no variation in the answers: alpha is undefined"
    return {"bucket": bucket, "label": label, "level": level, "alpha": _clean(alpha),
            "ci_low": _clean(low), "ci_high": _clean(high), "n_items": int(pairable.sum()),
            "n_raters": len(raters), "n_answers": int(counts[pairable].sum()), "note": note}


def agreement(tables: Tables, labels: list[LabelAnswers], ratings: list[RatingAnswers],
              resamples: int, rng: np.random.Generator, confidence: float
              ) -> list[dict[str, Any]]:
    rows = []
    for table in labels:
        answers = table.answers
        for j, (label, _, _) in enumerate(table.columns):
            rows.append(_row(table.bucket, label, "nominal", answers.items, answers.workers,
                             answers.values[:, j].astype(int), [0, 1], resamples, rng,
                             confidence))
    for table in ratings:  # a bucket has one level: (bucket, dimension) names the scale
        answers = table.answers
        rows.append(_row(table.bucket, table.dimension, "ordinal", answers.items,
                         answers.workers, answers.values.astype(int) - 1, [1, 2, 3, 4, 5],
                         resamples, rng, confidence))
    choices: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    for bucket, item, worker, _bot, _bot2, chosen, _left, _ in tables.comparisons:
        choices[bucket].append((item, worker, CHOICES.index(chosen) if chosen in CHOICES else 2))
    for bucket, answers in sorted(choices.items()):
        rows.append(_row(bucket, "chosen dialogue", "nominal", [a[0] for a in answers],
                         [a[1] for a in answers], np.array([a[2] for a in answers]),
                         ["turns", "turns2", "none"], resamples, rng, confidence))
    return rows

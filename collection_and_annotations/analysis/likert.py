"""Likert and per-option 1-5 ratings: mean (dialogue-cluster bootstrap interval), median and
distribution per bucket, dimension and bot."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from collection_and_annotations.analysis.load import Tables
from collection_and_annotations.analysis.stats import cluster_ratio_bootstrap

SCALE = (1, 2, 3, 4, 5)


def likert_summaries(tables: Tables, resamples: int, rng: np.random.Generator,
                     confidence: float) -> list[dict[str, Any]]:
    groups: dict[tuple, tuple[list, list]] = defaultdict(lambda: ([], []))
    for bucket, dimension, level, bot, cluster, _item, _worker, rating, _ in tables.ratings:
        clusters, ratings = groups[(bucket, dimension, level, bot)]
        clusters.append(cluster)
        ratings.append(rating)
    rows = []
    for (bucket, dimension, level, bot), (clusters, ratings) in sorted(groups.items()):
        values = np.asarray(ratings, dtype=np.float64)
        names, codes = np.unique(np.asarray(clusters), return_inverse=True)
        mean, low, high = cluster_ratio_bootstrap(
            np.bincount(codes, weights=values, minlength=len(names)),
            np.bincount(codes, minlength=len(names)), resamples, rng, confidence)
        rows.append({
            "bucket": bucket, "dimension": dimension, "level": level, "bot": bot,
            "mean": float(mean[0]), "ci_low": float(low[0]), "ci_high": float(high[0]),
            "median": float(np.median(values)), "sd": float(values.std(ddof=1))
            if len(values) > 1 else None,
            "distribution": {str(s): int((values == s).sum()) for s in SCALE},
            "n": len(values), "n_dialogues": len(names),
        })
    return rows

"""The comparisons a paper reports: for each behaviour rate and Likert dimension, the difference
between every pair of bots with its interval (paired through the units where one worker saw both
bots, as in paired chats), an effect size (Cohen's h for rates, Cliff's delta for ratings) and
a p-value, adjusted later across the report's family of tests (`analysis.multiplicity`)."""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np

from collection_and_annotations.analysis.answers import Answers, LabelAnswers, RatingAnswers
from collection_and_annotations.analysis.intervals import (
    Mean,
    clustered_means,
    correlations,
    difference,
)
from collection_and_annotations.analysis.likert import BOUNDS, SCALE

RATE_SCALE = (0.0, 1.0)


def cohen_h(a: float, b: float) -> float:
    """Cohen's h of two proportions: the difference of their arcsine square roots, doubled."""
    return 2 * math.asin(math.sqrt(a)) - 2 * math.asin(math.sqrt(b))


def cliffs_delta(a: np.ndarray, b: np.ndarray) -> float:
    """P(a rating of A > one of B) - P(<), over all pairs, from the two distributions."""
    counts_a = np.array([(a == s).sum() for s in SCALE], dtype=np.float64)
    counts_b = np.array([(b == s).sum() for s in SCALE], dtype=np.float64)
    below_b = np.concatenate([[0.0], np.cumsum(counts_b)[:-1]])  # B's ratings below each score
    above_b = counts_b.sum() - np.cumsum(counts_b)
    return float((counts_a * (below_b - above_b)).sum() / (counts_a.sum() * counts_b.sum()))


def _by_bot(answers: Answers, confidence: float, scale: tuple[float, float]
            ) -> dict[str, tuple[Answers, list[Mean], np.ndarray]]:
    """Each bot's answers, means (dialogue-clustered) and their variances."""
    by_bot = {}
    for bot in sorted(set(answers.bots.tolist())):
        mine = answers.where(answers.bots == bot)
        means, variances = clustered_means(mine.values, [mine.dialogues], confidence, scale)
        by_bot[bot] = (mine, means, variances)
    return by_bot


def _pairs(answers: Answers, confidence: float, scale: tuple[float, float]):
    """(bot a, bot b, each one's (answers, means, variances), paired?, correlations)."""
    by_bot = _by_bot(answers, confidence, scale)
    for bot_a, bot_b in combinations(by_bot, 2):
        a, b = by_bot[bot_a], by_bot[bot_b]
        paired = bool(np.intersect1d(a[0].units, b[0].units).size)
        # answers in no common unit (and so no common dialogue) are not correlated
        rho = correlations(a[0].values, b[0].values, [a[0].dialogues, a[0].units],
                           [b[0].dialogues, b[0].units]) if paired else np.zeros(
                               a[0].values.reshape(len(a[0].values), -1).shape[1])
        yield bot_a, bot_b, a, b, paired, rho


def _row(section: str, bucket: str, label: str, level: str | None, bot_a: str, bot_b: str,
         a: Mean, b: Mean, variances: tuple[float, float], rho: float, paired: bool,
         confidence: float, scale: tuple[float, float], effect: tuple[str, float]
         ) -> dict[str, Any]:
    found = difference(a, b, variances[0], variances[1], rho, confidence, scale)
    return {"section": section, "bucket": bucket, "label": label, "level": level,
            "bot_a": bot_a, "bot_b": bot_b, "value_a": a.value, "value_b": b.value,
            "difference": found.value, "ci_low": found.ci_low, "ci_high": found.ci_high,
            "effect_size": effect[1], "effect_size_name": effect[0],
            "p_value": found.p_value, "paired": paired, "correlation": float(rho),
            "n_a": a.n, "n_b": b.n}


def differences(labels: list[LabelAnswers], ratings: list[RatingAnswers],
                confidence: float) -> list[dict[str, Any]]:
    rows = []
    for table in labels:
        for bot_a, bot_b, a, b, paired, rho in _pairs(table.answers, confidence, RATE_SCALE):
            for j, (label, _, _) in enumerate(table.columns):
                mean_a, mean_b = a[1][j], b[1][j]
                rows.append(_row("behaviour_rates", table.bucket, label, None, bot_a, bot_b,
                                 mean_a, mean_b, (a[2][j], b[2][j]), rho[j], paired,
                                 confidence, RATE_SCALE,
                                 ("cohen_h", cohen_h(mean_a.value, mean_b.value))))
    for table in ratings:
        for bot_a, bot_b, a, b, paired, rho in _pairs(table.answers, confidence, BOUNDS):
            rows.append(_row("likert", table.bucket, table.dimension, table.level, bot_a, bot_b,
                             a[1][0], b[1][0], (a[2][0], b[2][0]), rho[0], paired, confidence,
                             BOUNDS, ("cliffs_delta",
                                      cliffs_delta(a[0].values, b[0].values))))
    return rows

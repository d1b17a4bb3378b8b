"""Intervals of means over clustered answers, and of differences between two such means.

A behaviour rate is the mean of 0/1 answers (one per annotated bot turn and annotator), a
Likert mean that of 1-5 ratings; answers of one dialogue (or one worker, or one unit) are
correlated, so the variance of the mean is the cluster-robust one (the sandwich of an
intercept-only regression, Liang & Zeger 1986) with the small-sample factor G / (G - 1), and
for several ways of clustering at once (dialogue and worker, dialogue and unit) the multiway
one of Cameron, Gelbach & Miller (2011): the sum over the ways and their intersections with
alternating signs (an interval never uses less than the largest one-way variance).

The interval is a Wilson score interval on the effective sample size (Korn & Graubard 1998):
the mean rescaled to [0, 1] is p, n_eff = p (1 - p) / variance, and the quantile is Student's
t with G - 1 degrees of freedom (G: the fewest clusters of a way). Where the variance cannot be
estimated (a mean at 0 or 1 of the scale, no variation between clusters) n_eff is G, the most
cautious count: every cluster counts once. With a single cluster there is no interval.
Measured coverage: docs/analysis.md.

A difference between two means takes their two intervals and their correlation (two bots
seen in one unit, as in paired chats, are correlated) by the MOVER method (Zou & Donner 2008;
Newcombe 1998 for two proportions); its p-value is the smallest 1 - confidence whose interval
leaves out 0, so the p-value and the interval never disagree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

# Fewer clusters than this: the interval rests on little, and the rows say so.
FEW_CLUSTERS = 20
# A correlation this small is the rounding of a sum that is 0 (no cluster shared).
ROUNDING = 1e-9
# The p-value of a difference is found between these confidence levels: below 1e-12 it is
# given as 1e-12.
LEVELS = (1e-12, 1 - 1e-12)


@dataclass(frozen=True)
class Mean:
    """A mean on the scale [low, high] with its interval (None without one)."""

    value: float
    ci_low: float | None
    ci_high: float | None
    clusters: int  # the fewest clusters of a way (G)
    n: int  # answers

    def at(self, confidence: float, scale: tuple[float, float], variance: float) -> Mean:
        """The same mean with its interval at another confidence."""
        low, high = wilson_interval(self.value, variance, self.n, self.clusters, confidence,
                                    scale)
        return Mean(self.value, low, high, self.clusters, self.n)


def group_codes(*codes: np.ndarray) -> np.ndarray:
    """One code per row for the combination of its codes (non-negative integers)."""
    combined = np.zeros(len(codes[0]), dtype=np.int64)
    for column in codes:
        compact = np.unique(column, return_inverse=True)[1].ravel()
        combined = combined * (int(compact.max(initial=0)) + 1) + compact
    return np.unique(combined, return_inverse=True)[1].ravel()


def _groups(codes: np.ndarray) -> int:
    """The clusters that have answers (codes: non-negative integers)."""
    return int(np.count_nonzero(np.bincount(codes))) if len(codes) else 0


def _one_way(scores: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """G / (G - 1) * sum over clusters of the squared score sums, per column (G: the clusters
    that have answers)."""
    groups = _groups(codes)
    if groups < 2:
        return np.zeros(scores.shape[1])
    sums = np.stack([np.bincount(codes, weights=scores[:, j])
                     for j in range(scores.shape[1])], axis=1)
    return groups / (groups - 1) * (sums ** 2).sum(axis=0)


def robust_variance(scores: np.ndarray, ways: Sequence[np.ndarray],
                    cautious: bool = False) -> np.ndarray:
    """Variance of `scores.sum(axis=0)` (rows: answers, columns: figures) clustered along every
    way of `ways` (one code array each) at once; where the sum is not positive, the largest
    one-way variance. `cautious`: never below the largest one-way variance."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 1:
        scores = scores[:, None]
    one_way = [_one_way(scores, codes) for codes in ways]
    total = np.zeros(scores.shape[1])
    for size in range(1, len(ways) + 1):
        for subset in combinations(range(len(ways)), size):
            codes = ways[subset[0]] if size == 1 else group_codes(*(ways[i] for i in subset))
            term = one_way[subset[0]] if size == 1 else _one_way(scores, codes)
            total += term if size % 2 else -term
    largest = np.max(one_way, axis=0)
    return np.maximum(total, largest) if cautious else np.where(total > 0, total, largest)


def clusters(ways: Sequence[np.ndarray]) -> int:
    """G: the fewest clusters of a way."""
    return min(_groups(codes) for codes in ways) if ways else 0


def wilson_interval(value: float, variance: float, n: int, groups: int, confidence: float,
                    scale: tuple[float, float] = (0.0, 1.0)) -> tuple[float | None,
                                                                   float | None]:
    """The Wilson interval on the effective sample size of a mean on `scale` whose variance
    (on that scale) is `variance`, with the t quantile on `groups` - 1 degrees of freedom."""
    if groups < 2 or n < 1 or not math.isfinite(value):
        return None, None
    low, high = scale
    p = min(max((value - low) / (high - low), 0.0), 1.0)
    spread = variance / (high - low) ** 2
    effective = p * (1 - p) / spread if 0 < p < 1 and spread > 0 else groups
    from scipy.stats import t as student_t  # slow to import: loaded when used

    q = float(student_t.ppf((1 + confidence) / 2, groups - 1))
    denominator = 1 + q * q / effective
    centre = (p + q * q / (2 * effective)) / denominator
    half = q * math.sqrt(p * (1 - p) / effective + q * q / (4 * effective ** 2)) / denominator
    return (low + (high - low) * max(centre - half, 0.0),
            low + (high - low) * min(centre + half, 1.0))


def clustered_means(values: np.ndarray, ways: Sequence[np.ndarray], confidence: float,
                    scale: tuple[float, float] = (0.0, 1.0)) -> tuple[list[Mean], np.ndarray]:
    """The mean of each column of `values` (rows: answers) with its interval, and the
    variances of the means (on the values' scale)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    n = values.shape[0]
    means = values.mean(axis=0)
    variances = robust_variance((values - means) / n, ways, cautious=True)
    groups = clusters(ways)
    rows = []
    for mean, variance in zip(means, variances, strict=True):
        low, high = wilson_interval(float(mean), float(variance), n, groups, confidence, scale)
        rows.append(Mean(float(mean), low, high, groups, n))
    return rows, variances


@dataclass(frozen=True)
class Difference:
    value: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None


def correlations(values_a: np.ndarray, values_b: np.ndarray, ways_a: Sequence[np.ndarray],
                 ways_b: Sequence[np.ndarray]) -> np.ndarray:
    """Per column, the correlation of two clustered means whose answers may share clusters (0
    where none do): `ways_a` / `ways_b` hold the same ways' codes of each side's answers."""
    values_a = np.asarray(values_a, dtype=np.float64).reshape(len(values_a), -1)
    values_b = np.asarray(values_b, dtype=np.float64).reshape(len(values_b), -1)
    size_a, size_b = len(values_a), len(values_b)
    scores_a = np.zeros((size_a + size_b, values_a.shape[1]))
    scores_b = np.zeros_like(scores_a)
    scores_a[:size_a] = (values_a - values_a.mean(axis=0)) / size_a
    scores_b[size_a:] = (values_b - values_b.mean(axis=0)) / size_b
    ways = [np.concatenate([a, b]) for a, b in zip(ways_a, ways_b, strict=True)]
    var_a, var_b = robust_variance(scores_a, ways), robust_variance(scores_b, ways)
    var_diff = robust_variance(scores_a - scores_b, ways)
    with np.errstate(all="ignore"):
        rho = (var_a + var_b - var_diff) / (2 * np.sqrt(var_a * var_b))
    rho = np.where((var_a > 0) & (var_b > 0) & (np.abs(rho) > ROUNDING), rho, 0.0)
    return np.clip(rho, -1.0, 1.0)


def mover(a: Mean, b: Mean, rho: float) -> tuple[float | None, float | None]:
    """The interval of a - b from the two means' intervals and their correlation."""
    if None in (a.ci_low, a.ci_high, b.ci_low, b.ci_high):
        return None, None
    below_a, above_a = a.value - a.ci_low, a.ci_high - a.value
    below_b, above_b = b.value - b.ci_low, b.ci_high - b.value
    diff = a.value - b.value
    low = diff - math.sqrt(max(below_a ** 2 + above_b ** 2 - 2 * rho * below_a * above_b, 0))
    high = diff + math.sqrt(max(above_a ** 2 + below_b ** 2 - 2 * rho * above_a * below_b, 0))
    return low, high


def difference(a: Mean, b: Mean, variance_a: float, variance_b: float, rho: float,
               confidence: float, scale: tuple[float, float]) -> Difference:
    """a - b with its MOVER interval and the p-value of "no difference" that inverts it."""
    low, high = mover(a, b, rho)
    if low is None:
        return Difference(a.value - b.value, None, None, None)

    def gap(level: float) -> float:
        """How far the interval at `level` stays from 0 (negative: it holds 0)."""
        lo, hi = mover(a.at(level, scale, variance_a), b.at(level, scale, variance_b), rho)
        return max(lo, -hi)

    lowest, highest = LEVELS
    if gap(lowest) <= 0:
        p_value = 1.0
    elif gap(highest) > 0:
        p_value = 1 - highest
    else:
        from scipy.optimize import brentq

        p_value = 1 - brentq(gap, lowest, highest, xtol=1e-12)
    return Difference(a.value - b.value, low, high, p_value)


def few_clusters_note(dialogues: int) -> str | None:
    """What a row says when its interval rests on few dialogues."""
    if dialogues < 2:
        return "a single dialogue: no interval (the variation between dialogues is unknown)"
    if dialogues < FEW_CLUSTERS:
        return (f"{dialogues} dialogues (fewer than {FEW_CLUSTERS}): the interval rests on few "
                "dialogues")
    return None

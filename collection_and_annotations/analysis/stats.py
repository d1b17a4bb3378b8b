"""The resampled statistics of the analysis, vectorised with numpy: percentile bootstraps with
a seeded generator, so a report is reproducible given its seed (the rates' and ratings'
intervals are analytic: `analysis.intervals`).

- `bradley_terry` / `bradley_terry_bootstrap`: the Bradley–Terry strengths of a win matrix
  (ties counted as half a win for each side) with a small prior that keeps every score finite,
  fitted by the MM algorithm (Hunter 2004), their bootstrap over comparisons and the range of
  ranks each bot takes over it.
- `alpha_bootstrap`: Krippendorff's alpha (the point estimate from
  `metrics.agreement.krippendorff_alpha_from_counts`) with its items resampled;
  `paired_alpha_bootstrap` two alphas of the same items (humans alone, humans and a judge)
  with the interval of their difference.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from collection_and_annotations.metrics.agreement import (
    Level,
    _distances,
    krippendorff_alpha_from_counts,
)

# The prior of the Bradley-Terry scores: every bot plays this many virtual games against a
# reference player of score 0, all ties. Without it a bot that never wins (or never loses) has
# no finite maximum-likelihood score; with it every score is finite and a real comparison
# weighs as much as a virtual one.
PRIOR_GAMES = 1.0
# Scores closer than this are equal: equal scores share a rank.
SAME_SCORE = 1e-6


def percentile_interval(
    samples: np.ndarray, confidence: float, axis: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The (1 - confidence) / 2 and (1 + confidence) / 2 percentiles (nan resamples skipped)."""
    tail = (1.0 - confidence) / 2 * 100
    with np.errstate(all="ignore"):
        if np.all(np.isnan(samples)):
            shape = np.delete(np.asarray(samples.shape), axis)
            nan = np.full(tuple(shape), np.nan)
            return nan, nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            low = np.nanpercentile(samples, tail, axis=axis)
            high = np.nanpercentile(samples, 100 - tail, axis=axis)
    return low, high


def bradley_terry(wins: np.ndarray, iterations: int = 10_000, tol: float = 1e-12) -> np.ndarray:
    """Log-strengths (mean 0) of a players x players win matrix, or of a stack of them
    (resamples x players x players). `wins[i, j]` counts i's wins over j (a tie adds 0.5 to
    both). The maximum a posteriori under PRIOR_GAMES virtual ties of each player against a
    reference of strength 1, by the MM algorithm: finite for every player."""
    w = np.asarray(wins, dtype=np.float64)
    single = w.ndim == 2
    if single:
        w = w[None]
    games = w + np.swapaxes(w, 1, 2)
    won = w.sum(axis=2) + PRIOR_GAMES / 2
    strength = np.ones(w.shape[:2])
    for _ in range(iterations):
        pair = strength[:, :, None] + strength[:, None, :]
        denominator = (games / pair).sum(axis=2) + PRIOR_GAMES / (strength + 1)
        new = won / denominator
        done = np.max(np.abs(np.log(new) - np.log(strength))) < tol
        strength = new
        if done:
            break
    scores = np.log(strength)
    scores -= scores.mean(axis=1, keepdims=True)
    return scores[0] if single else scores


def competition_ranks(scores: np.ndarray) -> np.ndarray:
    """1 + the number of players with a higher score (equal scores share a rank), along the
    last axis."""
    scores = np.asarray(scores)
    higher = scores[..., None, :] > scores[..., :, None] + SAME_SCORE
    return 1 + higher.sum(axis=-1)


def bradley_terry_bootstrap(
    first: np.ndarray, second: np.ndarray, outcome: np.ndarray, players: int,
    resamples: int, rng: np.random.Generator, confidence: float = 0.95,
) -> dict[str, np.ndarray]:
    """BT scores of comparisons (`first[k]` vs `second[k]`, `outcome[k]` 1 = first won, 0 =
    second won, 0.5 = tie), their ranks, and percentile intervals of both from resampling
    comparisons with replacement (keys score, low, high, rank, rank_low, rank_high). The
    comparisons are grouped into their distinct (first, second, outcome) cells, so a resample
    is one multinomial draw whatever the number of comparisons."""
    first, second = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
    outcome = np.asarray(outcome, dtype=np.float64)
    cells, counts = np.unique(
        np.stack([first, second, (outcome * 2).astype(np.int64)]), axis=1, return_counts=True)
    scores = bradley_terry(_win_matrix(cells, counts[None].astype(np.float64), players)[0])
    fitted = {"score": scores, "rank": competition_ranks(scores)}
    nan = np.full(players, np.nan)
    if resamples <= 0 or not len(outcome):
        return {**fitted, "low": nan, "high": nan, "rank_low": nan, "rank_high": nan}
    draws = rng.multinomial(len(outcome), counts / counts.sum(), size=resamples)
    boot = bradley_terry(_win_matrix(cells, draws.astype(np.float64), players), iterations=2000,
                         tol=1e-9)
    low, high = percentile_interval(boot, confidence)
    ranks = competition_ranks(boot)
    tail = (1.0 - confidence) / 2 * 100
    return {**fitted, "low": low, "high": high,
            "rank_low": np.percentile(ranks, tail, axis=0, method="lower"),
            "rank_high": np.percentile(ranks, 100 - tail, axis=0, method="higher")}


def _win_matrix(cells: np.ndarray, counts: np.ndarray, players: int) -> np.ndarray:
    """resamples x players x players wins from (first, second, 2 * outcome) cells."""
    a, b, twice = cells
    wins = np.zeros((counts.shape[0], players, players))
    for index in range(cells.shape[1]):
        share = twice[index] / 2
        wins[:, a[index], b[index]] += counts[:, index] * share
        wins[:, b[index], a[index]] += counts[:, index] * (1 - share)
    return wins


def alpha_bootstrap(
    value_counts: np.ndarray, level: Level, domain: list, resamples: int,
    rng: np.random.Generator, confidence: float = 0.95,
) -> tuple[float, float, float]:
    """Krippendorff's alpha of an items x values count table (items rated once are left out,
    as alpha does) and a percentile interval from resampling the pairable items.

    The point estimate is `krippendorff_alpha_from_counts`; a resample's alpha is computed from
    the same coincidence matrix, summed from the items' distinct count patterns (a resample is
    one multinomial draw over them), with the same distance function."""
    counts = np.asarray(value_counts, dtype=np.float64)
    pairable = counts[counts.sum(axis=1) >= 2]
    if not len(pairable):
        return math.nan, math.nan, math.nan
    point = krippendorff_alpha_from_counts(pairable, level, domain)
    if resamples <= 0:
        return point, math.nan, math.nan
    patterns, multiplicity = np.unique(pairable, axis=0, return_counts=True)
    draws = rng.multinomial(len(pairable), multiplicity / multiplicity.sum(), size=resamples)
    low, high = percentile_interval(_resampled_alphas(patterns, draws, level, domain),
                                    confidence)
    return point, float(low), float(high)


def paired_alpha_bootstrap(
    counts_a: np.ndarray, counts_b: np.ndarray, level: Level, domain: list, resamples: int,
    rng: np.random.Generator, confidence: float = 0.95,
) -> dict[str, float]:
    """Alpha of two count tables of the same items (e.g. the humans' answers, and the same
    with a judge's added), each with its percentile interval, and the interval of their
    difference (b - a): every resample draws the same items for both. Items rated fewer than
    twice in `counts_a` are left out of both."""
    a, b = np.asarray(counts_a, dtype=np.float64), np.asarray(counts_b, dtype=np.float64)
    keep = a.sum(axis=1) >= 2
    a, b = a[keep], b[keep]
    nan = {key: math.nan for key in ("alpha_a", "low_a", "high_a", "alpha_b", "low_b",
                                     "high_b", "diff_low", "diff_high")}
    if not len(a):
        return nan
    found = {**nan, "alpha_a": krippendorff_alpha_from_counts(a, level, domain),
             "alpha_b": krippendorff_alpha_from_counts(b, level, domain)}
    if resamples <= 0:
        return found
    size = a.shape[1]
    patterns, multiplicity = np.unique(np.hstack([a, b]), axis=0, return_counts=True)
    draws = rng.multinomial(len(a), multiplicity / multiplicity.sum(), size=resamples)
    alphas_a = _resampled_alphas(patterns[:, :size], draws, level, domain)
    alphas_b = _resampled_alphas(patterns[:, size:], draws, level, domain)
    for key, values in (("a", alphas_a), ("b", alphas_b), ("diff", alphas_b - alphas_a)):
        low, high = percentile_interval(values, confidence)
        found[f"{key}_low"], found[f"{key}_high"] = float(low), float(high)
    return found


def _resampled_alphas(patterns: np.ndarray, draws: np.ndarray, level: Level,
                      domain: list) -> np.ndarray:
    """Alpha of each resample: `draws[b, p]` items of count pattern `patterns[p]`."""
    raters = patterns.sum(axis=1)
    size = patterns.shape[1]
    contributions = (patterns[:, :, None] * patterns[:, None, :]
                     - patterns[:, :, None] * np.eye(size)[None]) / (raters - 1)[:, None, None]
    coincidence = np.einsum("bp,pij->bij", draws.astype(np.float64), contributions)
    values = np.empty(len(draws))
    fixed = None if level == "ordinal" else _distances(level, domain, np.zeros(size))
    for b in range(len(draws)):
        o = coincidence[b]
        marginals = o.sum(axis=0)
        distance = fixed if fixed is not None else _distances(level, domain, marginals)
        expected = (np.outer(marginals, marginals) * distance).sum() / (marginals.sum() - 1)
        values[b] = 1.0 - (o * distance).sum() / expected if expected > 0 else np.nan
    return values

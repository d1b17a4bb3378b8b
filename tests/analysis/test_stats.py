"""The statistics against independent implementations (statsmodels, scipy, the formulas written
out here) on generated data with known answers, and the intervals' coverage by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from collection_and_annotations.analysis.intervals import (
    clustered_means,
    correlations,
    difference,
    robust_variance,
)
from collection_and_annotations.analysis.multiplicity import adjust_rows
from collection_and_annotations.analysis.stats import (
    PRIOR_GAMES,
    alpha_bootstrap,
    bradley_terry,
    bradley_terry_bootstrap,
)
from collection_and_annotations.metrics.agreement import krippendorff_alpha_from_counts

from .synthetic import (
    clustered_answers,
    clustered_ratings,
    dialogue_bootstrap,
    few_workers_answers,
    few_workers_truth,
    true_rate,
    true_rating,
)


def _clustered(rng, dialogues, rate=0.2, annotators=2):
    """Clustered 0/1 answers with their dialogue, worker and unit codes."""
    values, dialogue, workers = clustered_answers(rng, dialogues, rate, annotators=annotators)
    return values, dialogue, workers, dialogue * annotators + workers


def _statsmodels_variance(values, *groups):
    # statsmodels loads pandas: only the worker that runs these tests pays for it
    import statsmodels.api as sm
    from statsmodels.stats.sandwich_covariance import cov_cluster, cov_cluster_2groups

    fit = sm.OLS(values, np.ones(len(values))).fit()
    if len(groups) == 1:
        return float(cov_cluster(fit, groups[0])[0, 0])
    return float(cov_cluster_2groups(fit, groups[0], groups[1])[0][0, 0])


def test_variance_is_statsmodels_cluster_robust_one_and_two_way():
    rng = np.random.default_rng(4)
    values, dialogues, workers, _ = _clustered(rng, 40, annotators=3)
    workers = rng.integers(0, 6, len(values))  # workers cut across dialogues
    n = len(values)
    scores = (values - values.mean()) / n
    one = robust_variance(scores, [dialogues])[0]
    assert one == pytest.approx(_statsmodels_variance(values, dialogues), rel=1e-9)
    two = robust_variance(scores, [dialogues, workers])[0]
    reference = _statsmodels_variance(values, dialogues, workers)
    assert reference > max(one, robust_variance(scores, [workers])[0])  # the sum counts
    assert two == pytest.approx(reference, rel=1e-9)


def _wilson(p, n, q):
    centre = (p + q * q / (2 * n)) / (1 + q * q / n)
    half = q / (1 + q * q / n) * math.sqrt(p * (1 - p) / n + q * q / (4 * n * n))
    return centre - half, centre + half


def test_interval_is_wilson_on_the_effective_sample_size():
    from scipy.stats import t as student_t  # slow to import: loaded by the tests that use it

    rng = np.random.default_rng(8)
    values, dialogues, _, _ = _clustered(rng, 12)
    [mean], [variance] = clustered_means(values, [dialogues], 0.9)
    p = values.mean()
    reference = _statsmodels_variance(values, dialogues)
    assert mean.value == pytest.approx(p) and variance == pytest.approx(reference)
    low, high = _wilson(p, p * (1 - p) / reference, student_t.ppf(0.95, 11))
    assert (mean.ci_low, mean.ci_high) == (pytest.approx(low), pytest.approx(high))
    # a 1-5 scale: the same interval on the mean rescaled to [0, 1]
    ratings = np.clip(np.round(3 + 2 * values + rng.normal(0, 0.8, len(values))), 1, 5)
    [rated], _ = clustered_means(ratings, [dialogues], 0.95, (1.0, 5.0))
    scaled = (ratings - 1) / 4
    p = scaled.mean()
    low, high = _wilson(p, p * (1 - p) / _statsmodels_variance(scaled, dialogues),
                        student_t.ppf(0.975, 11))
    assert (rated.ci_low, rated.ci_high) == (pytest.approx(1 + 4 * low),
                                             pytest.approx(1 + 4 * high))


def test_a_rate_of_zero_or_one_and_a_single_dialogue():
    from scipy.stats import t as student_t

    dialogues = np.repeat(np.arange(8), 3)
    [zero], _ = clustered_means(np.zeros(24), [dialogues], 0.95)
    [one], _ = clustered_means(np.ones(24), [dialogues], 0.95)
    # no variance to estimate: Wilson with every dialogue counted once (n = 8, t on 7 df)
    low, high = _wilson(0.0, 8, student_t.ppf(0.975, 7))
    assert zero.ci_low == 0.0 and zero.ci_high == pytest.approx(high) and high > 0.3
    assert one.ci_high == 1.0 and one.ci_low == pytest.approx(1 - high)
    [single], _ = clustered_means(np.array([0.0, 1.0, 1.0]), [np.zeros(3, int)], 0.95)
    assert single.value == pytest.approx(2 / 3) and single.ci_low is None


def _coverage(draw, truth, studies, scale=(0.0, 1.0), old=None):
    covered = old_covered = 0
    for _ in range(studies):
        values, dialogues = draw()
        [mean], _ = clustered_means(values, [dialogues], 0.95, scale)
        covered += mean.ci_low <= truth <= mean.ci_high
        if old is not None:
            low, high = old(values, dialogues)
            old_covered += low <= truth <= high
    return covered / studies, old_covered / studies


@pytest.mark.timeout(60)
def test_intervals_cover_the_truth_in_simulated_studies():
    """Strong within-dialogue correlation (dialogue logit sd 1.5, 2-6 bot turns, 2 annotators
    with 5 % noise): the 95 % intervals of a rate at 8 and 25 dialogues per bot, and of a turn
    level Likert mean at 8, cover the truth 93-97 % of the time (SE about 0.35 points at 4,000
    studies), where the dialogue bootstrap covered 85-90 % at 8 dialogues."""
    rng = np.random.default_rng(2024)
    truth = true_rate()
    for dialogues, studies in ((8, 4000), (25, 2000)):
        covered, old = _coverage(lambda d=dialogues: clustered_answers(rng, d)[:2], truth,
                                 studies, old=(lambda v, g: dialogue_bootstrap(v, g, rng))
                                 if dialogues == 8 else None)
        assert 0.93 <= covered <= 0.97, (dialogues, covered)
        if dialogues == 8:
            assert old < 0.91, old  # the simulation tells such a method apart
    covered, _ = _coverage(lambda: clustered_ratings(rng, 8), true_rating(), 3000, (1.0, 5.0))
    assert 0.93 <= covered <= 0.97, covered


def test_worker_aware_interval_covers_when_few_biased_workers_did_the_work():
    """4 workers, each with their own bias, did all the work on 25 dialogues: the dialogue
    clusters alone cover far too rarely, dialogues and workers together about 95 %."""
    rng = np.random.default_rng(16)
    truth = few_workers_truth(0.5)
    alone = aware = 0
    studies = 1000
    for _ in range(studies):
        values, dialogues, workers = few_workers_answers(rng, 0.5)
        [one], _ = clustered_means(values, [dialogues], 0.95)
        [two], _ = clustered_means(values, [dialogues, workers], 0.95)
        alone += one.ci_low <= truth <= one.ci_high
        aware += two.ci_low <= truth <= two.ci_high
    assert alone / studies < 0.9 and aware / studies >= 0.93, (alone, aware)


def test_difference_is_mover_of_the_two_intervals():
    rng = np.random.default_rng(3)
    a_values, a_dialogues, _, _ = _clustered(rng, 20, rate=0.15)
    b_values, b_dialogues, _, _ = _clustered(rng, 30, rate=0.35)
    [a], [va] = clustered_means(a_values, [a_dialogues], 0.95)
    [b], [vb] = clustered_means(b_values, [b_dialogues + 100], 0.95)
    # unpaired (no unit shared): no correlation, and Newcombe's hybrid score interval
    [rho] = correlations(a_values, b_values, [a_dialogues, a_dialogues],
                         [b_dialogues + 100, b_dialogues + 100])
    assert rho == 0.0
    found = difference(a, b, va, vb, rho, 0.95, (0.0, 1.0))
    d = a.value - b.value
    assert found.ci_low == pytest.approx(d - math.hypot(a.value - a.ci_low, b.ci_high - b.value))
    assert found.ci_high == pytest.approx(d + math.hypot(a.ci_high - a.value, b.value - b.ci_low))
    # the p-value is where the interval touches 0
    [a_at], _ = clustered_means(a_values, [a_dialogues], 1 - found.p_value)
    [b_at], _ = clustered_means(b_values, [b_dialogues], 1 - found.p_value)
    touching = difference(a_at, b_at, va, vb, 0.0, 1 - found.p_value, (0.0, 1.0))
    assert touching.ci_high == pytest.approx(0.0, abs=1e-7)
    assert 0 < found.p_value < 0.05 and found.ci_high < 0
    same = difference(a, a, va, va, 0.0, 0.95, (0.0, 1.0))
    assert same.p_value == 1.0 and same.value == 0.0


def test_paired_answers_are_correlated_through_their_units():
    """Each unit holds one dialogue of each bot (paired chats), the worker's own leniency
    shared by both: the correlation is positive and the paired interval narrower."""
    rng = np.random.default_rng(6)
    units = np.arange(60)
    lenient = rng.normal(0, 1.5, 60)
    a = (rng.random((60, 4)) < 1 / (1 + np.exp(-(-1.0 + lenient[:, None])))).astype(float)
    b = (rng.random((60, 4)) < 1 / (1 + np.exp(-(-0.3 + lenient[:, None])))).astype(float)
    a_units, b_units = np.repeat(units, 4), np.repeat(units, 4)
    a_dialogues, b_dialogues = a_units, b_units + 1000
    [rho] = correlations(a.ravel(), b.ravel(), [a_dialogues, a_units], [b_dialogues, b_units])
    assert rho > 0.3
    [ma], [va] = clustered_means(a.ravel(), [a_dialogues], 0.95)
    [mb], [vb] = clustered_means(b.ravel(), [b_dialogues], 0.95)
    paired = difference(ma, mb, va, vb, rho, 0.95, (0.0, 1.0))
    unpaired = difference(ma, mb, va, vb, 0.0, 0.95, (0.0, 1.0))
    assert paired.ci_high - paired.ci_low < unpaired.ci_high - unpaired.ci_low
    assert paired.p_value < unpaired.p_value


@pytest.mark.parametrize("method,reference", [("holm", "holm"), ("bh", "fdr_bh")])
def test_adjusted_p_values_are_statsmodels(method, reference):
    from statsmodels.stats.multitest import multipletests

    pvalues = np.random.default_rng(1).uniform(0, 0.2, 25) ** 2
    rows = [{"p_value": float(p)} for p in pvalues] + [{"p_value": None}]
    adjust_rows(rows, method)
    expected = multipletests(pvalues, method=reference)[1]
    assert [r["p_adjusted"] for r in rows[:-1]] == pytest.approx(list(expected), rel=1e-12)
    assert rows[-1]["p_adjusted"] is None


def _reference_bt(first, second, outcome, players):
    """Penalized logistic regression: +1/-1 indicators, ties as two half-weighted rows, and
    PRIOR_GAMES virtual ties of each player against a reference of score 0."""
    from scipy import optimize

    x = np.zeros((len(first) + players, players))
    x[np.arange(len(first)), first] = 1
    x[np.arange(len(first)), second] = -1
    x[len(first) + np.arange(players), np.arange(players)] = 1
    y = np.concatenate([outcome, np.full(players, 0.5)])
    weight = np.concatenate([np.ones(len(first)), np.full(players, PRIOR_GAMES)])

    def loss(theta):
        z = x @ theta
        return -(weight * (y * -np.logaddexp(0, -z) + (1 - y) * -np.logaddexp(0, z))).sum()

    fit = optimize.minimize(loss, np.zeros(players), method="BFGS", options={"gtol": 1e-10})
    return fit.x - fit.x.mean()


def test_bradley_terry_matches_penalized_logistic_regression_and_recovers_order():
    rng = np.random.default_rng(3)
    true = np.array([1.0, 0.4, 0.0, -0.7])
    first = rng.integers(0, 4, 3000)
    second = (first + rng.integers(1, 4, 3000)) % 4
    won = rng.random(3000) < 1 / (1 + np.exp(true[second] - true[first]))
    outcome = np.where(rng.random(3000) < 0.1, 0.5, won.astype(float))
    fitted = bradley_terry_bootstrap(first, second, outcome, 4, 300, np.random.default_rng(0))
    scores, low, high = fitted["score"], fitted["low"], fitted["high"]
    assert np.allclose(scores, _reference_bt(first, second, outcome, 4), atol=1e-5)
    assert list(np.argsort(-scores)) == [0, 1, 2, 3]
    assert list(fitted["rank"]) == [1, 2, 3, 4]
    assert np.all(low <= scores) and np.all(scores <= high)
    assert np.all((low <= true - true.mean() + 0.25) & (true - true.mean() - 0.25 <= high))
    assert np.all(fitted["rank_low"] <= fitted["rank"])
    assert np.all(fitted["rank"] <= fitted["rank_high"])


def test_bradley_terry_scores_are_finite_without_wins_or_losses():
    # 0 "ties" only plays 1 and ties every time; 2 beats 1 every time; 3 loses every game
    first = np.array([0] * 10 + [2] * 10 + [3] * 10)
    second = np.array([1] * 10 + [1] * 10 + [1] * 10)
    outcome = np.array([0.5] * 10 + [1.0] * 10 + [0.0] * 10)
    fitted = bradley_terry_bootstrap(first, second, outcome, 4, 200, np.random.default_rng(0))
    scores = fitted["score"]
    assert np.all(np.isfinite(scores)) and np.all(np.abs(scores) < 10)
    assert np.allclose(scores, _reference_bt(first, second, outcome, 4), atol=1e-5)
    # the bot that won everything is first; the one with only ties shares its partner's
    # score (1 won and lost as often), so they share a rank
    assert list(fitted["rank"]) == [2, 2, 1, 4]
    # the same data for two bots: the same score, one shared rank
    twins = bradley_terry(np.array([[0, 3, 3], [3, 0, 3], [1, 1, 0]], dtype=float))
    assert twins[0] == pytest.approx(twins[1], abs=1e-9) and twins[0] > twins[2]


def test_bradley_terry_stack_equals_single_fits():
    wins = np.array([[[0, 3, 2], [1, 0, 4], [2, 1, 0]], [[0, 5, 1], [2, 0, 2], [3, 3, 0]]])
    stacked = bradley_terry(wins)
    assert np.allclose(stacked[1], bradley_terry(wins[1]), atol=1e-9)


@pytest.mark.parametrize("level,values", [("nominal", 2), ("ordinal", 5), ("interval", 5)])
def test_alpha_point_is_the_verified_function_and_resamples_agree(level, values):
    rng = np.random.default_rng(5)
    truth = rng.integers(0, values, 150)
    counts = np.zeros((150, values))
    for _ in range(3):
        noisy = np.where(rng.random(150) < 0.3, rng.integers(0, values, 150), truth)
        counts[np.arange(150), noisy] += rng.random(150) < 0.85
    domain = list(range(1, values + 1))
    alpha, low, high = alpha_bootstrap(counts, level, domain, 200, np.random.default_rng(1))
    assert abs(alpha - krippendorff_alpha_from_counts(
        counts[counts.sum(1) >= 2], level, domain)) < 1e-9
    assert low < alpha < high
    # one resample by hand: the pattern-weighted alpha equals the function on the expanded table
    pairable = counts[counts.sum(1) >= 2]
    patterns, inverse = np.unique(pairable, axis=0, return_inverse=True)
    pick = np.random.default_rng(9).integers(0, len(pairable), len(pairable))
    expanded = pairable[pick]
    weights = np.bincount(inverse[pick], minlength=len(patterns))
    from collection_and_annotations.analysis import stats

    class Fixed:
        def multinomial(self, n, p, size):
            return np.tile(weights, (size, 1))

    _, low1, high1 = stats.alpha_bootstrap(pairable, level, domain, 1, Fixed())
    assert abs(low1 - krippendorff_alpha_from_counts(expanded, level, domain)) < 1e-9


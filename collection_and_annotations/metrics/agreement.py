"""Inter-annotator agreement: Krippendorff's alpha, Fleiss' kappa and Cohen's kappa.

Written here with numpy (the PyPI `krippendorff` package is GPL-3.0). Undefined coefficients
(no variation at all, so expected disagreement is zero) are returned as nan rather than raised,
as statsmodels and scikit-learn do; inputs that cannot give a coefficient raise ValueError.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")
FLEISS_METHODS = {"fleiss": "fleiss", "randolph": "randolph", "rand": "randolph"}
FLEISS_METHODS |= {"unif": "randolph", "uniform": "randolph"}


def is_missing(value: Any) -> bool:
    """None and NaN mark a unit a coder did not rate."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[Any]],
    level: Level = "interval",
    value_domain: Sequence[Hashable] | None = None,
) -> float:
    """Krippendorff's alpha of a coders x units table (None/NaN = not rated).

    `value_domain` orders the values (needed for ordinal strings); by default it is the sorted
    set of values seen. The default level is interval, as in Krippendorff's own software and
    the `krippendorff` package; use "nominal" for unordered labels.
    """
    rows = [list(row) for row in reliability_data]
    if not rows or len({len(row) for row in rows}) != 1:
        raise ValueError("reliability data must be a non-empty coders x units table")
    domain, column = _categories((value for row in rows for value in row), value_domain)
    counts = np.zeros((len(rows[0]), len(domain)))
    for row in rows:
        for unit, value in enumerate(row):
            if not is_missing(value):
                counts[unit, column[value]] += 1
    return krippendorff_alpha_from_counts(counts, level, domain)


def krippendorff_alpha_from_counts(
    value_counts: Any, level: Level = "nominal", value_domain: Sequence[Any] | None = None
) -> float:
    """Krippendorff's alpha from a units x values table of how many coders chose each value.

    Alpha = 1 - D_o / D_e, with observed and expected disagreement taken from the coincidence
    matrix of the pairable units (those rated at least twice).
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    counts = np.asarray(value_counts, dtype=np.float64)
    if counts.ndim != 2:
        raise ValueError("value counts must be a units x values table")
    if level != "nominal" and value_domain is None:
        raise ValueError(f"{level} alpha from counts needs value_domain (the value of each column)")
    ratings = counts.sum(axis=1)
    pairable = counts[ratings >= 2]
    if not len(pairable):
        raise ValueError(
            "Krippendorff's alpha needs at least one unit rated by at least two coders; none is"
        )
    weights = pairable / (pairable.sum(axis=1, keepdims=True) - 1)
    coincidence = weights.T @ pairable - np.diag(weights.sum(axis=0))
    marginals = coincidence.sum(axis=0)
    total = marginals.sum()
    distance = _distances(level, value_domain, marginals)
    expected = (np.outer(marginals, marginals) * distance).sum() / (total - 1)
    if expected == 0:
        return math.nan
    return float(1.0 - (coincidence * distance).sum() / expected)


def _distances(level: Level, domain: Sequence[Any] | None, marginals: np.ndarray) -> np.ndarray:
    """Squared difference function delta^2(c, k) of the level of measurement."""
    size = len(marginals)
    if level == "nominal":
        return 1.0 - np.eye(size)
    if level == "ordinal":
        # sum of the marginals from c to k, minus half of the two ends
        cumulative = np.cumsum(marginals)
        index = np.arange(size)
        low, high = np.minimum.outer(index, index), np.maximum.outer(index, index)
        between = cumulative[high] - cumulative[low] + marginals[low]
        return (between - (marginals[low] + marginals[high]) / 2) ** 2
    try:
        values = np.asarray(domain, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{level} alpha needs numeric values, got {list(domain or [])}") from exc
    difference = np.subtract.outer(values, values)
    if level == "interval":
        return difference**2
    total = np.add.outer(values, values)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(total == 0, 0.0, difference / total)
    return ratio**2


def ratings_to_table(
    ratings: Sequence[Sequence[Hashable]], categories: Sequence[Hashable] | None = None
) -> tuple[np.ndarray, list[Hashable]]:
    """Subjects x raters labels -> subjects x categories counts (missing labels skipped)."""
    order, column = _categories((label for row in ratings for label in row), categories)
    table = np.zeros((len(ratings), len(order)))
    for subject, row in enumerate(ratings):
        for label in row:
            if not is_missing(label):
                table[subject, column[label]] += 1
    return table, order


def _categories(
    labels: Iterable[Hashable], categories: Sequence[Hashable] | None
) -> tuple[list[Hashable], dict[Hashable, int]]:
    """The category order (given, or the sorted labels seen) and each label's index."""
    seen = {label for label in labels if not is_missing(label)}
    order = list(categories) if categories is not None else sorted(seen)
    column = {label: index for index, label in enumerate(order)}
    unknown = seen - column.keys()
    if unknown:
        raise ValueError(f"labels outside the given categories: {sorted(map(str, unknown))}")
    return order, column


def fleiss_kappa(table: Any, method: str = "fleiss") -> float:
    """Fleiss' kappa of a subjects x categories count table.

    method "fleiss" takes chance agreement from the category marginals; "randolph" (also
    "rand", "unif", "uniform") is the free-marginal kappa with chance 1/categories. Every subject
    must have the same number of ratings; with varying raters use Krippendorff's alpha.
    """
    if method not in FLEISS_METHODS:
        raise ValueError(f"method must be one of {', '.join(FLEISS_METHODS)}, got {method!r}")
    counts = np.asarray(table, dtype=np.float64)
    if counts.ndim != 2 or not counts.size:
        raise ValueError("Fleiss' kappa needs a non-empty subjects x categories table")
    raters = counts.sum(axis=1)
    if not np.allclose(raters, raters[0]):
        raise ValueError(
            "Fleiss' kappa needs the same number of ratings for every subject; here they range "
            f"from {raters.min():g} to {raters.max():g}. Use krippendorff_alpha_from_counts "
            "(nominal), which allows a varying number of raters."
        )
    n = raters[0]
    if n < 2:
        raise ValueError("Fleiss' kappa needs at least two ratings per subject")
    observed = ((counts**2).sum(axis=1) - n).mean() / (n * (n - 1))
    if FLEISS_METHODS[method] == "randolph":
        chance = 1.0 / counts.shape[1]
    else:
        shares = counts.sum(axis=0) / counts.sum()
        chance = float((shares**2).sum())
    if chance >= 1.0:
        return math.nan
    return float((observed - chance) / (1.0 - chance))


@dataclass(frozen=True)
class KappaResult:
    """Cohen's kappa with its asymptotic standard errors (Fleiss, Cohen and Everitt, 1969)."""

    kappa: float
    std_err: float
    ci_low: float
    ci_high: float
    std_err_h0: float
    z: float
    p_one_sided: float
    p_two_sided: float


Weights = Literal["linear", "quadratic"] | Sequence[float] | Sequence[Sequence[float]] | None


def cohens_kappa(
    rater_a: Sequence[Hashable],
    rater_b: Sequence[Hashable],
    weights: Weights = None,
    categories: Sequence[Hashable] | None = None,
    confidence: float = 0.95,
) -> KappaResult:
    """Cohen's kappa of two raters' labels on the same items.

    `categories` fixes the order the weights refer to (default: sorted labels seen); weights
    are on the category index, as in scikit-learn, R irr and statsmodels. Items a rater left
    unlabelled (None/NaN) are skipped.
    """
    if len(rater_a) != len(rater_b):
        raise ValueError(f"rater A has {len(rater_a)} labels, rater B {len(rater_b)}")
    pairs = [
        (a, b)
        for a, b in zip(rater_a, rater_b, strict=True)
        if not (is_missing(a) or is_missing(b))
    ]
    if not pairs:
        raise ValueError("Cohen's kappa needs at least one item labelled by both raters")
    order, column = _categories((label for pair in pairs for label in pair), categories)
    table = np.zeros((len(order), len(order)))
    for a, b in pairs:
        table[column[a], column[b]] += 1
    return cohens_kappa_from_table(table, weights, confidence)


def cohens_kappa_from_table(
    table: Any, weights: Weights = None, confidence: float = 0.95
) -> KappaResult:
    """Cohen's kappa from a contingency table (rows: rater A, columns: rater B).

    weights: None (unweighted), "linear", "quadratic", a 1-D sequence of disagreement by index
    distance (a Toeplitz matrix), or a full disagreement matrix.
    """
    counts = np.asarray(table, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1] or not counts.size:
        raise ValueError("a contingency table must be square and non-empty")
    disagreement = _disagreement(weights, counts.shape[0])
    total = counts.sum()
    observed = counts / total
    rows, cols = observed.sum(axis=1), observed.sum(axis=0)
    expected = np.outer(rows, cols)
    expected_disagreement = (disagreement * expected).sum()
    if expected_disagreement == 0:
        return KappaResult(*[math.nan] * 8)
    kappa = 1.0 - (disagreement * observed).sum() / expected_disagreement
    # variances with agreement weights w = 1 - disagreement (SAS PROC FREQ / statsmodels)
    agree = 1.0 - disagreement
    agree_expected = (agree * expected).sum()
    row_means = agree @ cols
    col_means = rows @ agree
    spread = row_means[:, None] + col_means[None, :]
    scale = (1 - agree_expected) ** 2 * total
    variance = (
        (observed * (agree - spread * (1 - kappa)) ** 2).sum()
        - (kappa - agree_expected * (1 - kappa)) ** 2
    ) / scale
    variance_h0 = ((expected * (agree - spread) ** 2).sum() - agree_expected**2) / scale
    std_err, std_err_h0 = math.sqrt(max(variance, 0.0)), math.sqrt(max(variance_h0, 0.0))
    z = kappa / std_err_h0 if std_err_h0 else math.nan
    from scipy.stats import norm  # scipy.stats is slow to import: loaded when used

    margin = norm.isf((1 - confidence) / 2) * std_err
    return KappaResult(
        kappa=float(kappa),
        std_err=std_err,
        ci_low=float(kappa - margin),
        ci_high=float(kappa + margin),
        std_err_h0=std_err_h0,
        z=float(z),
        p_one_sided=float(norm.sf(z)),
        p_two_sided=float(2 * norm.sf(abs(z))),
    )


def _disagreement(weights: Weights, size: int) -> np.ndarray:
    if weights is None:
        return 1.0 - np.eye(size)
    if isinstance(weights, str):
        if weights not in ("linear", "quadratic"):
            raise ValueError(f"weights must be None, 'linear', 'quadratic' or numbers: {weights!r}")
        index = np.arange(size)
        distance = np.abs(np.subtract.outer(index, index)) / max(size - 1, 1)
        return distance if weights == "linear" else distance**2
    matrix = np.asarray(weights, dtype=np.float64)
    if matrix.ndim == 1 and len(matrix) == size:
        from scipy.linalg import toeplitz

        return toeplitz(matrix)
    if matrix.shape == (size, size):
        return matrix
    raise ValueError(f"weights must have {size} values or be a {size}x{size} matrix")

"""Agreement coefficients beyond the reference vectors: inputs, variants and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from collection_and_annotations.metrics.agreement import (
    cohens_kappa,
    cohens_kappa_from_table,
    fleiss_kappa,
    krippendorff_alpha,
    krippendorff_alpha_from_counts,
    ratings_to_table,
)

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability": coders x units, None missing
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def test_ordinal_labels_follow_the_given_value_domain() -> None:
    names = ["low", "mid", "high", "top", "max"]
    as_labels = [[None if v is None else names[v - 1] for v in row] for row in K2011]
    numeric = krippendorff_alpha(K2011, "ordinal")
    assert krippendorff_alpha(as_labels, "ordinal", value_domain=names) == pytest.approx(numeric)
    # sorted alphabetically the order would be wrong, and so would alpha
    assert krippendorff_alpha(as_labels, "ordinal") != pytest.approx(numeric)
    assert krippendorff_alpha(as_labels, "nominal") == pytest.approx(0.743, abs=5e-4)


def test_nan_marks_missing_like_none() -> None:
    with_nan = [[math.nan if v is None else v for v in row] for row in K2011]
    assert krippendorff_alpha(with_nan, "interval") == pytest.approx(0.849, abs=5e-4)


def test_counts_and_ratings_give_the_same_alpha() -> None:
    table, order = ratings_to_table([list(unit) for unit in zip(*K2011, strict=True)])
    assert order == [1, 2, 3, 4, 5]
    for level in ("nominal", "ordinal", "interval", "ratio"):
        assert krippendorff_alpha_from_counts(table, level, order) == pytest.approx(
            krippendorff_alpha(K2011, level)
        )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: krippendorff_alpha([[1, 2], [1]]), "coders x units table"),
        (lambda: krippendorff_alpha([[1, 7]], value_domain=[1, 2]), "outside the given categories"),
        (lambda: krippendorff_alpha([["a", "b"], ["a", "b"]], "interval"), "needs numeric values"),
        (lambda: krippendorff_alpha(K2011, "cardinal"), "level must be one of"),
        (lambda: krippendorff_alpha_from_counts([[1, 1]], "interval"), "needs value_domain"),
        (lambda: fleiss_kappa([[3, 0], [1, 1]]), "same number of ratings for every subject"),
        (lambda: fleiss_kappa([[1, 0]]), "at least two ratings"),
        (lambda: fleiss_kappa([[2, 0]], "kappa"), "method must be one of"),
        (lambda: cohens_kappa([1, 2], [1]), "rater A has 2 labels, rater B 1"),
        (lambda: cohens_kappa([None], [1]), "at least one item labelled by both"),
        (lambda: cohens_kappa_from_table([[1, 2, 3]]), "must be square"),
        (lambda: cohens_kappa([1, 2], [2, 1], weights="cubic"), "weights must be None"),
        (lambda: cohens_kappa([1, 2], [2, 1], weights=[0, 1, 2]), "weights must have 2 values"),
    ],
)
def test_invalid_inputs_raise_value_errors(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


def test_cohen_skips_unlabelled_items_and_accepts_a_weight_matrix() -> None:
    a, b = [1, 2, 3, None, 3], [1, 2, 2, 3, 3]
    assert cohens_kappa(a, b).kappa == pytest.approx(
        cohens_kappa(a[:3] + a[4:], b[:3] + b[4:]).kappa
    )
    linear = cohens_kappa(a, b, weights="linear").kappa
    matrix = np.abs(np.subtract.outer(range(3), range(3))) / 2
    assert cohens_kappa(a, b, weights=matrix.tolist()).kappa == pytest.approx(linear)
    # weights on a category order that includes an unused label
    result = cohens_kappa(["x", "y"], ["x", "y"], categories=["x", "y", "z"])
    assert result.kappa == 1.0 and result.ci_low <= 1.0 <= result.ci_high


def test_perfect_fleiss_agreement_and_randolph_variant() -> None:
    assert fleiss_kappa([[3, 0], [0, 3]]) == pytest.approx(1.0)
    assert fleiss_kappa([[3, 0, 0], [0, 3, 0]], "randolph") == pytest.approx(1.0)
    assert fleiss_kappa([[2, 1], [1, 2]], "fleiss") == pytest.approx(-1 / 3)

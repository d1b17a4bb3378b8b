"""ibm_bleu as cdec's mteval/ns.cc computes it: the two cases where sacrebleu's defaults differ."""

from __future__ import annotations

import math

import numpy as np
import pytest

from collection_and_annotations.metrics.registry import default_registry


def _ibm():
    return default_registry().get("ibm_bleu").factory()


def test_equally_close_references_keep_the_first():
    metric = _ibm()
    hyp = "a b c d e f"  # 6 tokens; references of 5 and 7 tokens are equally close
    longer_first = metric.segment_statistics([hyp], [["a b c d e f g", "a b c d e"]])
    shorter_first = metric.segment_statistics([hyp], [["a b c d e", "a b c d e f g"]])
    assert longer_first[0, -1] == 7 and shorter_first[0, -1] == 5  # ref_len, cdec layout
    assert longer_first[0, -2] == 6  # hyp_len
    # longer reference first: brevity penalty exp(1 - 7/6); the shorter one would give none
    score = metric.score_from_sum(longer_first.sum(axis=0)).value
    assert score == pytest.approx(100 * math.exp(1 - 7 / 6), rel=1e-9)


def test_hypothesis_shorter_than_four_tokens_uses_the_orders_it_has():
    metric = _ibm()
    rows = metric.segment_statistics(["the cat sat"], [["the cat sat"]])
    # correct 3, 2, 1, 0; totals 3, 2, 1, 0: orders 1-3 only, all precisions 1
    assert list(rows[0]) == [3, 2, 1, 0, 3, 2, 1, 0, 3, 3]
    assert metric.score_from_sum(rows.sum(axis=0)).value == pytest.approx(100.0)
    half = metric.segment_statistics(["the dog sat"], [["the cat sat"]])
    # p1 = 2/3, p2 = 0 -> floored 0.01/2, p3 = 0 -> 0.01/1: geometric mean over 3 orders
    expected = 100 * np.exp((np.log(2 / 3) + np.log(0.01 / 2) + np.log(0.01 / 1)) / 3)
    assert metric.score_from_sum(half.sum(axis=0)).value == pytest.approx(expected, rel=1e-9)


def _cdec_breakdown(stats: np.ndarray, order: int = 4) -> float:
    """cdec's `BleuMetric<4, IBM>::ComputeBreakdown` (mteval/ns.cc), read line by line: orders
    the hypotheses have count, a zero match count becomes 0.01, the brevity penalty is
    (hyp_len - ref_len) / hyp_len in log space; no order at all is 0 / 0 (nan)."""
    log_bleu, count = 0.0, 0
    for i in range(order):
        if stats[i + order] > 0:
            correct = stats[i] or 0.01
            log_bleu += math.log(correct) - math.log(stats[i + order])
            count += 1
    with np.errstate(all="ignore"):
        log_bleu = np.float64(log_bleu) / count
        hyp_len, ref_len = np.float64(stats[2 * order]), stats[2 * order + 1]
        lbp = (hyp_len - ref_len) / hyp_len if hyp_len < ref_len else 0.0
    return float(np.exp(log_bleu + lbp))


@pytest.mark.parametrize("hyp,refs", [
    ("x y z", ["a b c"]),  # no n-gram matches: each order floored, not 0
    ("x y z w v", ["a b c d e f g"]),  # no match and a brevity penalty
    ("x", ["a b"]),
    ("the dog sat", ["the cat sat"]),
    ("a b c d e f", ["a b c d e f g", "a b c d e"]),
])
def test_scores_are_cdecs_including_no_match_at_all(hyp, refs):
    metric = _ibm()
    row = metric.segment_statistics([hyp], [refs])[0]
    expected = 100 * _cdec_breakdown(row)
    assert expected > 0
    assert metric.score_from_sum(row).value == pytest.approx(expected, rel=1e-9)


def test_corpus_with_no_match_at_all_is_floored_per_order():
    metric = _ibm()
    rows = metric.segment_statistics(["p q r s", "t u"], [["a b c d"], ["e f"]])
    summed = rows.sum(axis=0)  # totals 6, 4, 2, 1: four orders, none matching
    expected = 100 * math.exp(sum(math.log(0.01 / t) for t in (6, 4, 2, 1)) / 4)
    assert metric.score_from_sum(summed).value == pytest.approx(expected, rel=1e-9)
    assert expected == pytest.approx(100 * _cdec_breakdown(summed), rel=1e-9)


def test_an_empty_hypothesis_has_no_score_as_in_cdec():
    metric = _ibm()
    row = metric.segment_statistics([""], [["a b c"]])[0]
    assert list(row) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 3]
    assert math.isnan(_cdec_breakdown(row))
    assert math.isnan(metric.score_from_sum(row).value)
    # beside other hypotheses, an empty one only adds its reference length (brevity)
    rows = metric.segment_statistics(["a b c", ""], [["a b c"], ["d e"]])
    assert metric.score_from_sum(rows.sum(axis=0)).value == pytest.approx(
        100 * _cdec_breakdown(rows.sum(axis=0)), rel=1e-9)

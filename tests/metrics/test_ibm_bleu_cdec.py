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

"""Property tests: additive statistics, perfect agreement, order-free richness counts."""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
import pytest
import sacrebleu
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from collection_and_annotations.metrics import compute_metrics
from collection_and_annotations.metrics.agreement import krippendorff_alpha
from collection_and_annotations.metrics.richness import multiwoz_tokenize, richness
from collection_and_annotations.metrics.sacrebleu_metrics import Bleu, Chrf

WORDS = ["the", "a", "dog", "man", "bit", "bites", ".", ",", "?", "it", "was", "not"]
sentences = st.lists(st.sampled_from(WORDS), min_size=0, max_size=12).map(" ".join)
corpora = st.lists(
    st.tuples(sentences, st.lists(sentences, min_size=1, max_size=3)), min_size=1, max_size=12
)
FAST = settings(max_examples=60, deadline=None)


@FAST
@given(corpora, st.integers(min_value=0, max_value=12))
def test_summed_segment_statistics_reproduce_corpus_bleu(corpus: list, split: int) -> None:
    hypotheses = [h for h, _ in corpus]
    references = [refs for _, refs in corpus]
    width = max(len(refs) for refs in references)
    streams = [[refs[k] if k < len(refs) else None for refs in references] for k in range(width)]
    expected = sacrebleu.corpus_bleu(hypotheses, streams).score
    metric = Bleu()
    rows = metric.segment_statistics(hypotheses, references)
    assert metric.score_from_sum(rows.sum(axis=0)).value == pytest.approx(expected, abs=1e-9)
    # any split into two parts: the statistics of the parts add up to the corpus's
    split = min(split, len(corpus))
    parts = [rows[:split], rows[split:]]
    assert metric.score_from_sum(sum(p.sum(axis=0) for p in parts)).value == pytest.approx(
        expected, abs=1e-9
    )
    chrf = Chrf()
    assert chrf.corpus_score(hypotheses, references).value == pytest.approx(
        sacrebleu.corpus_chrf(hypotheses, streams).score, abs=1e-9
    )


units = st.lists(
    st.tuples(st.integers(min_value=1, max_value=5), st.integers(min_value=2, max_value=4)),
    min_size=2,
    max_size=15,
)


@FAST
@given(
    units,
    st.integers(min_value=3, max_value=5),
    st.sampled_from(["nominal", "ordinal", "interval", "ratio"]),
)
def test_alpha_is_one_for_perfect_agreement(rated: list, coders: int, level: str) -> None:
    assume(len({value for value, _ in rated}) > 1)  # with a single value alpha is undefined
    data = [[None] * len(rated) for _ in range(coders)]
    for unit, (value, raters) in enumerate(rated):
        for coder in range(min(raters, coders)):
            data[(unit + coder) % coders][unit] = value
    assert krippendorff_alpha(data, level) == pytest.approx(1.0)  # type: ignore[arg-type]


def test_alpha_is_undefined_without_variation() -> None:
    assert math.isnan(krippendorff_alpha([[2, 2], [2, 2]], "nominal"))


responses = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=15).map(" ".join), min_size=1, max_size=25
)
ORDER_FREE = (
    "avg_turn_length", "entropy", "cond_entropy", "num_unigrams", "num_bigrams", "num_trigrams",
    "distinct_1", "distinct_2", "repetition_rate",
)  # fmt: skip


@FAST
@given(responses, st.randoms(use_true_random=False))
def test_richness_counts_do_not_depend_on_line_order(texts: list[str], rng: object) -> None:
    shuffled = texts[:]
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    before, after = (
        compute_metrics([{"hypothesis": t} for t in lines], ["richness"])["metrics"]["richness"]
        for lines in (texts, shuffled)
    )
    for name in ORDER_FREE:
        assert after["value"][name] == pytest.approx(before["value"][name], abs=1e-12), name


def oracle_richness(tokenized: list[list[str]]) -> dict[str, float]:
    """mwzeval's get_richness written plainly with Counters (the reference formulas)."""
    unigrams, bigrams, trigrams, stream = Counter(), Counter(), Counter(), []
    for tokens in tokenized:
        stream += tokens
        unigrams.update(tokens)
        bigrams.update(zip(tokens, tokens[1:], strict=False))
        trigrams.update(zip(tokens, tokens[1:], tokens[2:], strict=False))
    total = sum(unigrams.values())
    if len(stream) < 51:
        msttr = len(set(stream)) / len(stream)
    else:
        windows = len(stream) // 50
        msttr = sum(len(set(stream[i * 50 : i * 50 + 50])) / 50 for i in range(windows)) / windows
    return {
        "entropy": -sum(c / total * math.log2(c / total) for c in unigrams.values()),
        "cond_entropy": -sum(
            c / total * math.log2(c / unigrams[h]) for (h, _), c in bigrams.items()
        ),
        "avg_turn_length": total / len(tokenized),
        "msttr": msttr,
        "num_unigrams": len(unigrams),
        "num_bigrams": len(bigrams),
        "num_trigrams": len(trigrams),
    }


@FAST
@given(responses)
def test_richness_matches_the_plain_reference_formulas(texts: list[str]) -> None:
    tokenized = [multiwoz_tokenize(t) for t in texts * 3]
    ours = richness(tokenized)
    for name, expected in oracle_richness(tokenized).items():
        assert ours[name] == pytest.approx(expected, abs=1e-9), name


def lexical_diversity_tokenize(text: str) -> list[str]:
    """lexical_diversity 0.1.1's tokenizer, step by step (the reference for ours)."""
    marks = ["``", "''", "'", ".", ",", "?", "!", ")", "(", "%", "/", "-", "_"]
    for mark in [*marks, "-LRB-", "-RRB-", "SYM", ":", ";"]:
        text = text.replace(mark, "")
    return re.sub(r"\s+", " ", text).lower().split(" ")


@FAST
@given(st.text(alphabet=st.sampled_from(list("aSYM -LRB()`'.,:;?!%/_\t\nxé")), max_size=40))
def test_tokenizer_matches_lexical_diversity(text: str) -> None:
    assert multiwoz_tokenize(text) == lexical_diversity_tokenize(text)


def test_repetition_rate_is_seq_rep_4() -> None:
    value = richness([["a", "b", "c", "d", "a", "b", "c", "d"], ["x"]])["repetition_rate"]
    assert value == pytest.approx(1 - 4 / 5)  # 5 four-grams, 4 distinct; "x" has none
    assert np.isclose(richness([["a"]])["repetition_rate"], 0.0)

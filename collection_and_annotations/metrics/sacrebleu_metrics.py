"""BLEU, chrF and TER through sacrebleu, which stays the only implementation of them.

sacrebleu already splits a metric into per-segment sufficient statistics and a score computed from
their sum; this module only exposes that split (`_extract_corpus_statistics` and
`_compute_score_from_stats`, sacrebleu 2.x) so that per-tag breakdowns and the mteval protocol
reuse one pass over the data. Scores are on sacrebleu's 0-100 scale.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sacrebleu.metrics import BLEU, CHRF, TER
from sacrebleu.metrics.base import Metric as SacrebleuScorer
from sacrebleu.metrics.bleu import BLEUScore

from collection_and_annotations.metrics.base import (
    Direction,
    Kind,
    Metric,
    MetricError,
    MetricSpec,
    Progress,
    ReferenceMetric,
    Score,
    Statistics,
)

if TYPE_CHECKING:
    from collection_and_annotations.metrics.inputs import Segments

_CHUNK = 5000  # segments per sacrebleu call: the progress bar moves, memory stays flat


class SacrebleuMetric(ReferenceMetric):
    """A sacrebleu scorer seen as additive statistics plus a score from their sum."""

    eval_scale = 100.0

    def __init__(self, scorer: SacrebleuScorer) -> None:
        self._scorer = scorer

    @property
    def signature(self) -> str:
        return self._scorer.get_signature().format()

    def segment_statistics(
        self,
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        progress: Progress | None = None,
    ) -> np.ndarray:
        if not hypotheses:
            raise MetricError("no hypotheses to score")
        if any(not refs for refs in references):
            raise MetricError("every hypothesis needs at least one reference")
        rows: list[list[float]] = []
        for start in range(0, len(hypotheses), _CHUNK):
            chunk = hypotheses[start : start + _CHUNK]
            streams = _streams(references[start : start + _CHUNK])
            rows += self._scorer._extract_corpus_statistics(chunk, streams)
            if progress is not None:
                progress(len(chunk))
        # sacrebleu records the reference count of the last call; the signature needs all chunks'.
        counts = {len(refs) for refs in references}
        self._scorer.num_refs = counts.pop() if len(counts) == 1 else -1
        return np.asarray(rows, dtype=np.float64)

    def score_from_sum(self, summed: np.ndarray) -> Score:
        return self._score(self._scorer._compute_score_from_stats(summed))

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> Score:
        """Sentence-level score with the same settings (sacrebleu's `sentence_score`)."""
        return self._score(self._scorer.sentence_score(hypothesis, list(references)))

    def _score(self, result: Any) -> Score:
        return Score(float(result.score))


class Bleu(SacrebleuMetric):
    """BLEU; rows follow cdec's mteval layout: correct_1..N, total_1..N, hyp_len, ref_len.

    (sacrebleu's own layout starts with the two lengths; keeping cdec's makes the rows the
    statistics that the mteval protocol exchanges.)
    """

    def __init__(self, scorer: type[BLEU] = BLEU, **options: Any) -> None:
        super().__init__(scorer(**options))
        order = self._scorer.max_ngram_order
        self._to_cdec = np.r_[2 : 2 + 2 * order, 0, 1]
        self._from_cdec = np.argsort(self._to_cdec)

    def segment_statistics(
        self,
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        progress: Progress | None = None,
    ) -> np.ndarray:
        return super().segment_statistics(hypotheses, references, progress)[:, self._to_cdec]

    def score_from_sum(self, summed: np.ndarray) -> Score:
        return super().score_from_sum(np.asarray(summed)[self._from_cdec])

    def tokenize(self, text: str) -> str:
        """The text as BLEU sees it after casing and tokenization (for inspecting scores)."""
        return self._scorer._preprocess_segment(text)

    def _score(self, result: Any) -> Score:
        return Score(
            float(result.score),
            details={
                "counts": [int(c) for c in result.counts],
                "totals": [int(t) for t in result.totals],
                "precisions": [float(p) for p in result.precisions],
                "bp": float(result.bp),
                "sys_len": int(result.sys_len),
                "ref_len": int(result.ref_len),
            },
        )


class CdecBleuScorer(BLEU):
    """sacrebleu's BLEU as cdec's `mteval/ns.cc` counts it: of two references equally close
    in length to the hypothesis, the first one's length is the reference length (sacrebleu
    takes the shorter); with no matching n-gram of any order each order is still floored to
    0.01 (sacrebleu stops at 0); hypotheses without any n-gram have no score (nan, as cdec's
    0 / 0)."""

    def _get_closest_ref_len(self, hyp_len: int, ref_lens: list[int]) -> int:
        return min(ref_lens, key=lambda ref_len: abs(hyp_len - ref_len))  # first of equals

    @staticmethod
    def compute_bleu(correct: list[int], total: list[int], sys_len: int, ref_len: int,
                     smooth_method: str = "floor", smooth_value: float | None = 0.01,
                     effective_order: bool = True, max_ngram_order: int = 4) -> BLEUScore:
        if not total[0]:  # no hypothesis n-gram: cdec divides 0 by 0
            return BLEUScore(math.nan, correct, total, [0.0] * max_ngram_order, 0.0,
                             sys_len, ref_len)
        if any(correct):
            return BLEU.compute_bleu(correct, total, sys_len, ref_len, smooth_method,
                                     smooth_value, effective_order, max_ngram_order)
        floor = 0.01 if smooth_value is None else smooth_value
        orders = [t for t in total[:max_ngram_order] if t > 0]
        precisions = [100.0 * floor / t for t in orders]
        precisions += [0.0] * (max_ngram_order - len(orders))
        bp = math.exp(1 - ref_len / sys_len) if sys_len < ref_len else 1.0
        log_mean = sum(math.log(floor / t) for t in orders) / len(orders)
        return BLEUScore(100.0 * bp * math.exp(log_mean), correct, total, precisions, bp,
                         sys_len, ref_len)


class Chrf(SacrebleuMetric):
    """chrF (chrF2 by default; chrF++ with `word_order=2`)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(CHRF(**options))


class Ter(SacrebleuMetric):
    """Translation edit rate (lower is better)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(TER(**options))

    def _score(self, result: Any) -> Score:
        return Score(
            float(result.score),
            details={"num_edits": float(result.num_edits), "ref_length": float(result.ref_length)},
        )


class SentenceAverage(Metric):
    """The mean of sentence-level scores, each from its own segment's statistics."""

    needs = "references"

    def __init__(self, sentence_metric: SacrebleuMetric) -> None:
        self._metric = sentence_metric

    @property
    def signature(self) -> str:
        return f"{self._metric.signature}|mean-of-sentences"

    def statistics(self, segments: Segments, progress: Progress | None = None) -> Statistics:
        rows = self._metric.segment_statistics(segments.texts, segments.references, progress)
        return Statistics.complete(
            np.array([self._metric.score_from_sum(row).value for row in rows], dtype=np.float64)
        )

    def score(self, rows: np.ndarray) -> Score:
        return Score(float(rows.mean()))


def _streams(references: Sequence[Sequence[str]]) -> list[list[str | None]]:
    """Per-segment reference lists as sacrebleu's streams; None pads a shorter list."""
    width = max(len(refs) for refs in references)
    return [[refs[k] if k < len(refs) else None for refs in references] for k in range(width)]


SPECS = (
    MetricSpec(
        "bleu",
        Kind.REFERENCE,
        "Corpus BLEU, 0-100 (sacrebleu defaults: 13a tokenizer, exp smoothing, mixed case).",
        Direction.HIGHER,
        Bleu,
    ),
    MetricSpec(
        "ibm_bleu",
        Kind.REFERENCE,
        "IBM BLEU of cdec's mteval, 0-100: text already tokenized, an order's zero matches "
        "floored to 0.01 (also when no n-gram matches at all), the first of equally close "
        "reference lengths, the geometric mean over the n-gram orders the hypotheses have; "
        "no score (null) for hypotheses without any token.",
        Direction.HIGHER,
        lambda: Bleu(CdecBleuScorer, tokenize="none", smooth_method="floor", smooth_value=0.01,
                     effective_order=True, force=True),
    ),
    MetricSpec(
        "sentence_bleu",
        Kind.REFERENCE,
        "Mean of sentence-level BLEU, 0-100 (exp smoothing, effective n-gram order).",
        Direction.HIGHER,
        lambda: SentenceAverage(Bleu(effective_order=True)),
    ),
    MetricSpec(
        "chrf",
        Kind.REFERENCE,
        "Corpus chrF2, 0-100: character 6-gram F-score with recall weighted twice.",
        Direction.HIGHER,
        Chrf,
    ),
    MetricSpec(
        "chrf++",
        Kind.REFERENCE,
        "Corpus chrF++, 0-100: chrF2 plus word uni- and bigrams.",
        Direction.HIGHER,
        lambda: Chrf(word_order=2),
    ),
    MetricSpec(
        "sentence_chrf",
        Kind.REFERENCE,
        "Mean of sentence-level chrF2, 0-100.",
        Direction.HIGHER,
        lambda: SentenceAverage(Chrf()),
    ),
    MetricSpec(
        "ter",
        Kind.REFERENCE,
        "Corpus translation edit rate, in edits per 100 reference words.",
        Direction.LOWER,
        Ter,
    ),
)

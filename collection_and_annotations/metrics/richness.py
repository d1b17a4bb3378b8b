"""Lexical richness of responses, as in the MultiWOZ context-to-response evaluation.

The MultiWOZ numbers (unique n-grams, entropies, MSTTR-50, average turn length) follow
`mwzeval.metrics.get_richness` and its tokenizer (lexical_diversity 0.1.1) exactly, so that they
compare with the published tables; distinct-n and the repetition rate use the same tokens.
Tokens are mapped to integer ids once, and every measure is computed with numpy on id arrays,
so scoring the corpus and each tag's subset costs little next to tokenizing.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from itertools import count
from typing import TYPE_CHECKING

import numpy as np

from collection_and_annotations import __version__
from collection_and_annotations.metrics.base import (
    Direction,
    Kind,
    Metric,
    MetricSpec,
    Progress,
    Score,
    Statistics,
)

if TYPE_CHECKING:
    from collection_and_annotations.metrics.inputs import Segments

# lexical_diversity deletes, in this order: `` '' ' . , ? ! ) ( % / - _ -LRB- -RRB- SYM : ;
# ('' and -LRB-/-RRB- can no longer occur once ' and - are gone, so two tables do the same).
_BEFORE_SYM = str.maketrans("", "", "'.,?!)(%/-_")
_AFTER_SYM = str.maketrans("", "", ":;")
_SPACES = re.compile(r"\s+")
_CODE_LIMIT = 1 << 62  # n-gram codes are products of ids; re-number them before they overflow


def multiwoz_tokenize(text: str) -> list[str]:
    """Tokens as the MultiWOZ evaluation counts them (lexical_diversity's `tokenize`).

    Punctuation is deleted wherever it occurs ("3.5" gives "35"), whitespace runs become one
    space, text is lowercased and split on single spaces, so leading or trailing whitespace gives
    an empty token; it is kept, as in the reference, so that numbers stay comparable.
    """
    text = text.replace("``", "").translate(_BEFORE_SYM).replace("SYM", "").translate(_AFTER_SYM)
    return _SPACES.sub(" ", text).lower().split(" ")


class TokenIds:
    """Responses as one array of token ids, and each response's start and length in it."""

    def __init__(self, responses: Sequence[Sequence[str]]) -> None:
        vocabulary: defaultdict[str, int] = defaultdict(count().__next__)
        ids: list[int] = []
        self.lengths = np.empty(len(responses), dtype=np.int64)
        for index, tokens in enumerate(responses):
            ids.extend(map(vocabulary.__getitem__, tokens))
            self.lengths[index] = len(tokens)
        self.ids = np.asarray(ids, dtype=np.int64)
        self.starts = np.cumsum(self.lengths) - self.lengths
        self.vocabulary_size = max(len(vocabulary), 1)

    def select(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The concatenated ids and the lengths of the responses at `indices`, in that order."""
        lengths = self.lengths[indices]
        offsets = np.repeat(self.starts[indices] - (np.cumsum(lengths) - lengths), lengths)
        return self.ids[offsets + np.arange(offsets.size)], lengths


def ngram_codes(ids: np.ndarray, lengths: np.ndarray, n: int, vocabulary_size: int) -> np.ndarray:
    """One integer per n-gram inside a response (n-grams across responses are left out)."""
    left = np.repeat(np.cumsum(lengths), lengths) - np.arange(len(ids))
    codes = ids
    for k in range(2, n + 1):
        if len(codes) and codes.max() >= _CODE_LIMIT // vocabulary_size:
            codes = np.unique(codes, return_inverse=True)[1]  # re-number before overflowing
        codes = codes[:-1] * vocabulary_size + ids[k - 1 :]
    return codes[left[: len(codes)] >= n]


def repetition_rates(
    ids: np.ndarray, lengths: np.ndarray, n: int, vocabulary_size: int
) -> np.ndarray:
    """seq-rep-n (Welleck et al., 2019) per response: the share of its n-grams that repeat one.

    nan for a response shorter than n tokens (it has no n-gram).
    """
    grams_per_response = np.maximum(lengths - n + 1, 0)
    response = np.repeat(np.arange(len(lengths)), grams_per_response)
    grams = np.unique(ngram_codes(ids, lengths, n, vocabulary_size), return_inverse=True)[1]
    stride = grams.max(initial=0) + 1
    distinct = np.bincount(np.unique(response * stride + grams) // stride, minlength=len(lengths))
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1.0 - distinct / grams_per_response


def richness_of_ids(
    ids: np.ndarray, lengths: np.ndarray, vocabulary_size: int, window: int = 50
) -> dict[str, float]:
    """The MultiWOZ measures and distinct-1/2 from concatenated ids and response lengths."""
    total = len(ids)
    unigram_counts = np.bincount(ids, minlength=vocabulary_size)
    present = unigram_counts[unigram_counts > 0] / total
    # bigram codes are head * size + tail (ids are dense, so they are never re-numbered)
    bigram_codes, bigram_counts = _distinct(ngram_codes(ids, lengths, 2, vocabulary_size))
    heads = unigram_counts[bigram_codes // vocabulary_size]
    n_bigrams = int(bigram_counts.sum())
    return {
        "avg_turn_length": total / len(lengths),
        "entropy": float(-(present * np.log2(present)).sum()),
        # mwzeval: sum over bigrams (h, w) of -c(h,w)/N * log2(c(h,w)/c(h)), c(h) a unigram count
        "cond_entropy": float(-(bigram_counts / total * np.log2(bigram_counts / heads)).sum()),
        "msttr": _msttr(ids, window),
        "num_unigrams": len(present),
        "num_bigrams": len(bigram_codes),
        "num_trigrams": len(_distinct(ngram_codes(ids, lengths, 3, vocabulary_size))[0]),
        "distinct_1": len(present) / total,
        "distinct_2": len(bigram_codes) / n_bigrams if n_bigrams else 0.0,
    }


def _distinct(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values and their counts, by sorting (faster than hashing for int arrays)."""
    ordered = np.sort(codes)
    if not len(ordered):
        return ordered, ordered
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    return ordered[starts], np.diff(np.r_[starts, len(ordered)])


def _msttr(ids: np.ndarray, window: int) -> float:
    """Mean segmental type-token ratio over consecutive full windows (plain TTR if shorter)."""
    if len(ids) <= window:
        return len(np.unique(ids)) / len(ids) if len(ids) else 0.0
    windows = np.sort(ids[: len(ids) // window * window].reshape(-1, window), axis=1)
    types = 1 + (np.diff(windows, axis=1) != 0).sum(axis=1)
    return float(types.sum() / windows.size)


class Richness(Metric):
    """Richness of the responses (system turns of dialogues, or hypotheses).

    A row is a response's index into the token ids of the last `statistics` call and its
    repetition rate (computed once, as it depends on that response only).
    """

    def __init__(self, window: int = 50, repetition_n: int = 4) -> None:
        if window < 1 or repetition_n < 1:
            raise ValueError("the MSTTR window and the repetition n-gram order must be >= 1")
        self.window = window
        self.repetition_n = repetition_n
        self._tokens: TokenIds | None = None

    @property
    def signature(self) -> str:
        return f"tok:multiwoz|msttr:{self.window}|rep:{self.repetition_n}|version:{__version__}"

    def statistics(self, segments: Segments, progress: Progress | None = None) -> Statistics:
        rows = self.rows([multiwoz_tokenize(text) for text in segments.texts])
        if progress is not None:
            progress(len(segments))
        return Statistics.complete(rows)

    def rows(self, responses: Sequence[Sequence[str]]) -> np.ndarray:
        """Rows for tokenized responses (and keep their ids for `score`)."""
        tokens = self._tokens = TokenIds(responses)
        rates = repetition_rates(
            tokens.ids, tokens.lengths, self.repetition_n, tokens.vocabulary_size
        )
        return np.column_stack([np.arange(len(rates)), rates])

    def score(self, rows: np.ndarray) -> Score:
        if self._tokens is None:
            raise RuntimeError("Richness.score needs rows from Richness.rows or .statistics")
        ids, lengths = self._tokens.select(rows[:, 0].astype(np.int64))
        rates = rows[:, 1][~np.isnan(rows[:, 1])]
        return Score(
            {
                **richness_of_ids(ids, lengths, self._tokens.vocabulary_size, self.window),
                "repetition_rate": float(rates.mean()) if len(rates) else 0.0,
            }
        )


def richness(
    responses: Sequence[Sequence[str]], window: int = 50, repetition_n: int = 4
) -> dict[str, float]:
    """All richness measures of tokenized responses (n-grams never cross responses)."""
    metric = Richness(window, repetition_n)
    return metric.score(metric.rows(responses)).value


_HIGHER = ("avg_turn_length", "entropy", "cond_entropy", "msttr", "num_unigrams")
_HIGHER += ("num_bigrams", "num_trigrams", "distinct_1", "distinct_2")

SPECS = (
    MetricSpec(
        "richness",
        Kind.RESPONSES,
        "MultiWOZ lexical richness (unique 1/2/3-grams, token and conditional bigram entropy in "
        "bits, MSTTR-50, average turn length in tokens) plus distinct-1/2 and seq-rep-4.",
        {**dict.fromkeys(_HIGHER, Direction.HIGHER), "repetition_rate": Direction.LOWER},
        Richness,
    ),
)

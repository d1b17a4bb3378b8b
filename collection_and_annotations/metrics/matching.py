"""Exact match: the share of responses identical to one of their references.

The accuracy of Dynabench (`get_accuracy`, where a target may list several acceptable labels),
for bots that answer with a label or a short canonical answer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from collection_and_annotations.metrics.base import (
    Direction,
    Kind,
    MetricSpec,
    Progress,
    ReferenceMetric,
    Score,
)


class ExactMatch(ReferenceMetric):
    """Percentage of hypotheses equal, character for character, to one of their references."""

    eval_scale = 100.0

    @property
    def signature(self) -> str:
        return "match:exact|case:mixed|whitespace:kept"

    def segment_statistics(
        self,
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        progress: Progress | None = None,
    ) -> np.ndarray:
        rows = np.ones((len(hypotheses), 2))
        rows[:, 0] = [h in refs for h, refs in zip(hypotheses, references, strict=True)]
        if progress is not None:
            progress(len(hypotheses))
        return rows

    def score_from_sum(self, summed: np.ndarray) -> Score:
        matches, total = summed
        return Score(float(100.0 * matches / total) if total else 0.0)


SPECS = (
    MetricSpec(
        "exact_match",
        Kind.REFERENCE,
        "Share of responses identical to one of their references, 0-100 (Dynabench accuracy).",
        Direction.HIGHER,
        ExactMatch,
    ),
)

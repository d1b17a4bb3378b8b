"""The shapes every metric shares: its registry entry, its statistics and its score.

A metric works in two steps, as sacrebleu does: it extracts statistics once per segment (one row
per scored response), then computes a score from any subset of those rows. The overall result and
every per-tag breakdown come from the same rows, so no metric runs twice over the data.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collection_and_annotations.metrics.inputs import Segments

Progress = Callable[[int], None]
"""Called with the number of segments just processed (drives the progress bar)."""


class MetricError(ValueError):
    """A metric cannot be computed; the message says what, where and how to fix it."""


class Kind(StrEnum):
    """What a metric reads."""

    REFERENCE = "reference-based"  # hypotheses scored against references
    RESPONSES = "responses"  # reference-free, over the responses alone
    DIALOGUES = "dialogues"  # reference-free, needs dialogue structure (timestamps, states)


class Direction(StrEnum):
    """Which way is better."""

    HIGHER = "higher"
    LOWER = "lower"


@dataclass(frozen=True)
class Score:
    """A metric's value on some segments: a float, or named floats for a bundle (richness)."""

    value: float | dict[str, float]
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Statistics:
    """One row per segment; `present` marks the segments the metric applies to."""

    rows: np.ndarray
    present: np.ndarray

    @classmethod
    def complete(cls, rows: np.ndarray) -> Statistics:
        """Statistics for a metric that applies to every segment."""
        return cls(rows, np.ones(len(rows), dtype=bool))


class Metric(ABC):
    """A metric over segments, split into per-segment statistics and a score over rows."""

    needs: str = "a response"
    """What a segment must carry for this metric (used in the error when none does)."""

    @property
    @abstractmethod
    def signature(self) -> str:
        """Every setting that changes the value, so that a score can be reproduced."""

    @abstractmethod
    def statistics(self, segments: Segments, progress: Progress | None = None) -> Statistics:
        """Extract the per-segment statistics (the expensive pass, done once)."""

    @abstractmethod
    def score(self, rows: np.ndarray) -> Score:
        """Compute the score from the rows of the segments being scored (at least one)."""

    def close(self) -> None:  # noqa: B027 - optional hook, most metrics hold no resources
        """Release what the metric holds (an external process)."""


class ReferenceMetric(Metric):
    """A reference-based metric whose statistics add up over a corpus (sacrebleu's split).

    Because the score needs only the summed statistics, such a metric can be served and consumed
    through the mteval line protocol (SCORE returns a row, EVAL scores a sum).
    """

    needs = "references"
    eval_scale: float = 1.0
    """EVAL answers `score / eval_scale` (100 for sacrebleu's percentages: BLEU on 0-1)."""

    @abstractmethod
    def segment_statistics(
        self,
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        progress: Progress | None = None,
    ) -> np.ndarray:
        """One row of additive statistics per hypothesis; `references[i]` are segment i's."""

    @abstractmethod
    def score_from_sum(self, summed: np.ndarray) -> Score:
        """The score of a corpus from its summed statistics."""

    def statistics(self, segments: Segments, progress: Progress | None = None) -> Statistics:
        return Statistics.complete(
            self.segment_statistics(segments.texts, segments.references, progress)
        )

    def score(self, rows: np.ndarray) -> Score:
        return self.score_from_sum(rows.sum(axis=0))

    def corpus_score(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> Score:
        """Score a corpus given as hypotheses and per-segment reference lists."""
        if len(hypotheses) != len(references):
            raise MetricError(
                f"{len(hypotheses)} hypotheses but {len(references)} reference lists; "
                "give one list of references per hypothesis"
            )
        return self.score(self.segment_statistics(hypotheses, references))


@dataclass(frozen=True)
class MetricSpec:
    """A registry entry: how to build a metric and how to read its value."""

    name: str
    kind: Kind
    description: str
    direction: Direction | Mapping[str, Direction]
    """One direction, or one per component for a metric whose value is a bundle."""
    factory: Callable[[], Metric]

    @property
    def components(self) -> tuple[str, ...]:
        """Names inside a bundle value (empty for a scalar metric)."""
        return tuple(self.direction) if isinstance(self.direction, Mapping) else ()

    def describe(self) -> dict[str, Any]:
        """The entry as JSON-ready data."""
        direction = (
            {k: str(v) for k, v in self.direction.items()}
            if isinstance(self.direction, Mapping)
            else str(self.direction)
        )
        return {
            "name": self.name,
            "kind": str(self.kind),
            "description": self.description,
            "direction": direction,
        }

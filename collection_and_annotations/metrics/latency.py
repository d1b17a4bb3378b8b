"""Latency: how long bots take to answer, and how early incremental outputs commit.

Response latency is the time from a user turn to the system turn right after it, from the turns'
timestamps. For outputs emitted incrementally (simultaneous generation), AP, AL, LAAL and DAL
follow SimulEval >= 1.1 (`simuleval/evaluator/scorers/latency_scorer.py`): delays are the amount of
source read when each target token was written; |Y| is the reference length when one is given,
otherwise the number of delays; a corpus value is the mean of the sentence values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from collection_and_annotations.metrics.base import (
    Direction,
    Kind,
    Metric,
    MetricError,
    MetricSpec,
    Progress,
    Score,
    Statistics,
)

if TYPE_CHECKING:
    from collection_and_annotations.metrics.inputs import Segments

PERCENTILES = (50, 90, 99)


class ResponseLatency(Metric):
    """Percentiles of response latency in seconds (numpy's linear interpolation)."""

    needs = "a timestamp on a system turn and on the user turn right before it"

    @property
    def signature(self) -> str:
        return "unit:s|from:user-turn|percentile:linear"

    def statistics(self, segments: Segments, progress: Progress | None = None) -> Statistics:
        rows = np.array(
            [math.nan if value is None else value for value in segments.latencies],
            dtype=np.float64,
        )
        if progress is not None:
            progress(len(rows))
        return Statistics(rows, ~np.isnan(rows))

    def score(self, rows: np.ndarray) -> Score:
        values = np.percentile(rows, PERCENTILES)
        return Score(
            {
                **{f"p{p}": float(v) for p, v in zip(PERCENTILES, values, strict=True)},
                "mean": float(rows.mean()),
            }
        )


def average_proportion(
    delays: Sequence[float], source_length: float, target_length: float
) -> float:
    """AP (Cho and Esipova, 2016): mean delay as a share of the source."""
    return sum(delays) / (source_length * target_length)


def average_lagging(delays: Sequence[float], source_length: float, target_length: float) -> float:
    """AL (Ma et al., 2019): mean lag behind an ideal wait-0 policy, up to the full source."""
    return _lagging(delays, source_length, target_length / source_length)


def length_adaptive_average_lagging(
    delays: Sequence[float], source_length: float, target_length: float
) -> float:
    """LAAL (Papi et al., 2022): AL with |Y| = max(hypothesis, reference), not fooled by
    over-generation."""
    return _lagging(delays, source_length, max(len(delays), target_length) / source_length)


def differentiable_average_lagging(delays: Sequence[float], source_length: float) -> float:
    """DAL (Arivazhagan et al., 2019): AL over delays forced to grow by at least 1/gamma."""
    gamma = len(delays) / source_length
    total, previous = 0.0, 0.0
    for index, delay in enumerate(delays):
        adjusted = delay if index == 0 else max(delay, previous + 1 / gamma)
        total += adjusted - index / gamma
        previous = adjusted
    return total / len(delays)


def _lagging(delays: Sequence[float], source_length: float, gamma: float) -> float:
    if delays[0] > source_length:
        return delays[0]
    total, tau = 0.0, 0
    for index, delay in enumerate(delays):
        total += delay - index / gamma
        tau = index + 1
        if delay >= source_length:
            break
    return total / tau


def simultaneous_latency(
    delays: Sequence[float], source_length: float, reference_length: float | None = None
) -> dict[str, float]:
    """AP, AL, LAAL and DAL of one incrementally produced output."""
    target_length = len(delays) if reference_length is None else reference_length
    return {
        "AP": average_proportion(delays, source_length, target_length),
        "AL": average_lagging(delays, source_length, target_length),
        "LAAL": length_adaptive_average_lagging(delays, source_length, target_length),
        "DAL": differentiable_average_lagging(delays, source_length),
    }


class SimultaneousLatency(Metric):
    """Mean AP, AL, LAAL and DAL over the responses that carry `delays`."""

    needs = "'delays' (source read per target token) and 'source_length'"
    components = ("AP", "AL", "LAAL", "DAL")

    @property
    def signature(self) -> str:
        return "definition:simuleval>=1.1|target:reference_length-or-delays|corpus:mean"

    def statistics(self, segments: Segments, progress: Progress | None = None) -> Statistics:
        rows = np.full((len(segments), len(self.components)), math.nan)
        for index, extra in enumerate(segments.fields):
            if "delays" in extra:
                values = simultaneous_latency(*_delay_inputs(extra, segments.where(index)))
                rows[index] = [values[name] for name in self.components]
        if progress is not None:
            progress(len(segments))
        return Statistics(rows, ~np.isnan(rows[:, 0]))

    def score(self, rows: np.ndarray) -> Score:
        means = rows.mean(axis=0)
        return Score({name: float(v) for name, v in zip(self.components, means, strict=True)})


def _delay_inputs(extra: Any, where: str) -> tuple[list[float], float, float | None]:
    delays, source = extra["delays"], extra.get("source_length")
    reference = extra.get("reference_length")
    if not isinstance(delays, list) or not delays or not all(_positive(d, 0) for d in delays):
        raise MetricError(f"{where}: 'delays' must be a non-empty list of numbers >= 0")
    if not _positive(source, 1e-12):
        raise MetricError(f"{where}: 'delays' needs 'source_length', a number > 0")
    if reference is not None and not _positive(reference, 1e-12):
        raise MetricError(f"{where}: 'reference_length' must be a number > 0")
    return delays, source, reference


def _positive(value: Any, minimum: float) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= minimum


SPECS = (
    MetricSpec(
        "latency",
        Kind.DIALOGUES,
        "Response latency percentiles p50/p90/p99 and mean, in seconds from the user turn's "
        "timestamp to the system turn's.",
        dict.fromkeys(("p50", "p90", "p99", "mean"), Direction.LOWER),
        ResponseLatency,
    ),
    MetricSpec(
        "simultaneous_latency",
        Kind.RESPONSES,
        "AP, AL, LAAL and DAL of incrementally emitted outputs (SimulEval >= 1.1 definitions), "
        "mean over responses, in source units.",
        dict.fromkeys(SimultaneousLatency.components, Direction.LOWER),
        SimultaneousLatency,
    ),
)

"""Automatic metrics over dialogue logs: a registry of metrics, computed overall and per tag.

`compute_metrics` is the entry point shared by `python -m collection_and_annotations evaluate` and
the server; `default_registry` lists the metrics. Agreement coefficients live in
`collection_and_annotations.metrics.agreement`, external evaluators in `.mteval`.
"""

from collection_and_annotations.metrics.base import Direction, Kind, MetricError, MetricSpec
from collection_and_annotations.metrics.compute import compute_metrics, macro_average
from collection_and_annotations.metrics.inputs import InputError, read_jsonl
from collection_and_annotations.metrics.registry import default_registry

__all__ = [
    "Direction",
    "InputError",
    "Kind",
    "MetricError",
    "MetricSpec",
    "compute_metrics",
    "default_registry",
    "macro_average",
    "read_jsonl",
]

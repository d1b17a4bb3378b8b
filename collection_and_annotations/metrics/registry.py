"""The metric registry: every metric by name, with its kind, description and direction.

Built-in metrics are declared in one `SPECS` tuple per family module, registered here; a task
conf or the CLI picks them by name. A metric outside the package is an installed plug-in, a
`MetricSpec` named in the entry point group `collection_and_annotations.metrics`
(docs/plugins.md).
"""

from __future__ import annotations

from collection_and_annotations.metrics import dst, latency, matching, richness, sacrebleu_metrics
from collection_and_annotations.metrics.base import MetricError
from collection_and_annotations.plugins import Registry

METRICS = Registry("metric", "metrics", error=MetricError)
for _spec in (*sacrebleu_metrics.SPECS, *matching.SPECS, *richness.SPECS, *latency.SPECS,
              *dst.SPECS):
    METRICS.add(_spec.name, _spec)


def default_registry() -> Registry:
    """Every metric, plug-ins included, in a registry of its own: one use may add metrics to
    it (`evaluate --external`) without adding them for the next."""
    return METRICS.copy()

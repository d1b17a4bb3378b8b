"""The metric registry: every metric by name, with its kind, description and direction.

Built-in metrics are declared in one `SPECS` tuple per family module; a task conf or the CLI picks
them by name. To add a metric, write a module with a `Metric` subclass and a `SPECS` tuple, and add
the tuple to `default_registry` (or `register` a spec on a registry at run time).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from collection_and_annotations.metrics import dst, latency, matching, richness, sacrebleu_metrics
from collection_and_annotations.metrics.base import MetricError, MetricSpec


class UnknownMetricError(MetricError):
    """A metric name that is not registered."""


class Registry:
    """Metric specs by name."""

    def __init__(self, specs: Iterable[MetricSpec] = ()) -> None:
        self._specs: dict[str, MetricSpec] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: MetricSpec) -> None:
        """Add a metric; a name can be registered once."""
        if spec.name in self._specs:
            raise MetricError(f"a metric named {spec.name!r} is already registered")
        if not spec.name or "." in spec.name or "," in spec.name:
            raise MetricError(f"invalid metric name {spec.name!r}: no dots, no commas")
        self._specs[spec.name] = spec

    def get(self, name: str) -> MetricSpec:
        """The spec registered as `name`."""
        try:
            return self._specs[name]
        except KeyError:
            raise UnknownMetricError(
                f"unknown metric {name!r}; available: {', '.join(self._specs)}"
            ) from None

    def __iter__(self) -> Iterator[MetricSpec]:
        return iter(self._specs.values())

    def __contains__(self, name: object) -> bool:
        return name in self._specs


def default_registry() -> Registry:
    """A fresh registry holding the built-in metrics."""
    return Registry(
        [
            *sacrebleu_metrics.SPECS,
            *matching.SPECS,
            *richness.SPECS,
            *latency.SPECS,
            *dst.SPECS,
        ]
    )

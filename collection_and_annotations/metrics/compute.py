"""Compute selected metrics overall and per tag: the one entry point for the CLI and the server.

Each metric extracts its per-segment statistics once; the overall value and every tag's value
(per bot, per annotation task, per any field) are scores of subsets of those rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from tqdm import tqdm

from collection_and_annotations.metrics.base import Kind, Metric, MetricError, MetricSpec
from collection_and_annotations.metrics.inputs import (
    Segments,
    declared_tag_keys,
    segments_from_records,
    tag_values,
)
from collection_and_annotations.metrics.registry import default_registry
from collection_and_annotations.plugins import Registry

_PROGRESS_SEGMENTS = 10_000


def compute_metrics(
    records: Segments | Iterable[Mapping[str, Any]],
    metric_names: Sequence[str] | str,
    perf_metric: str | None = None,
    by: Sequence[str] | None = None,
    *,
    registry: Registry | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Compute metrics over predictions or dialogues, overall and per tag, as JSON-ready data.

    records: segments read by `inputs.read_jsonl`, or prediction/dialogue dicts.
    metric_names: registered names (a list or a comma-separated string).
    perf_metric: the metric used for ranking, `name` or `name.component` for a bundle such as
        `richness.msttr`; default: the first selected metric with a single value.
    by: tag keys to break results down by; default: the keys of the records' `tags` objects.
    """
    registry = registry if registry is not None else default_registry()
    segments = records if isinstance(records, Segments) else segments_from_records(records)
    if not len(segments):
        raise MetricError(
            f"{segments.source}: nothing to score (no predictions, and no system turns)"
        )
    specs = [registry.get(name) for name in _names(metric_names)]
    perf = _perf_target(specs, perf_metric)
    keys = declared_tag_keys(segments) if by is None else list(dict.fromkeys(by))
    groups = {key: _groups(segments, key) for key in keys}
    bar = tqdm(
        total=len(segments) * len(specs),
        unit="seg",
        desc="metrics",
        disable=True if not progress or len(segments) < _PROGRESS_SEGMENTS else None,
        leave=False,
    )
    with bar:
        results = {spec.name: _evaluate(spec, segments, groups, bar.update) for spec in specs}
    output: dict[str, Any] = {
        "source": segments.source,
        "n_segments": len(segments),
        "by": keys,
        "metrics": results,
    }
    if perf is not None:
        output.update(_perf_summary(results, *perf))
    return _jsonable(output)


def macro_average(values: Iterable[float | None]) -> float | None:
    """Unweighted mean over tags (Dynabench's per-tag average); None when no tag has a value."""
    present = [v for v in values if v is not None and not math.isnan(v)]
    return sum(present) / len(present) if present else None


def _names(metric_names: Sequence[str] | str) -> list[str]:
    raw = metric_names.split(",") if isinstance(metric_names, str) else metric_names
    names = list(dict.fromkeys(name.strip() for name in raw if name.strip()))
    if not names:
        raise MetricError("no metric selected")
    return names


def _perf_target(specs: list[MetricSpec], perf_metric: str | None) -> tuple[str, str] | None:
    """(metric name, component or "") of the ranking metric."""
    if perf_metric is None:
        scalar = [spec.name for spec in specs if not spec.components]
        return (scalar[0], "") if scalar else None
    name, _, component = perf_metric.partition(".")
    selected = {spec.name: spec for spec in specs}
    if name not in selected:
        raise MetricError(
            f"perf_metric {perf_metric!r} is not among the selected metrics ({', '.join(selected)})"
        )
    components = selected[name].components
    if components and component not in components:
        raise MetricError(
            f"perf_metric {perf_metric!r}: {name} has several values; name one of them as "
            + ", ".join(f"{name}.{c}" for c in components)
        )
    if not components and component:
        raise MetricError(f"perf_metric {perf_metric!r}: {name} has a single value")
    return name, component


def _groups(segments: Segments, key: str) -> dict[str, np.ndarray]:
    """Segment indices per value of tag `key`, values sorted."""
    members: dict[str, list[int]] = {}
    cache: dict[int, tuple[str, ...]] = {}
    for index, record in enumerate(segments.records):
        values = cache.get(id(record))
        if values is None:
            values = cache[id(record)] = tag_values(record, key)
        for value in values:
            members.setdefault(value, []).append(index)
    if not members:
        raise MetricError(
            f"{segments.source}: no record has a tag or field {key!r} to break results down by"
        )
    return {value: np.asarray(members[value]) for value in sorted(members)}


def _evaluate(
    spec: MetricSpec,
    segments: Segments,
    groups: Mapping[str, Mapping[str, np.ndarray]],
    progress: Any,
) -> dict[str, Any]:
    if spec.kind is Kind.REFERENCE:
        missing = next((i for i, refs in enumerate(segments.references) if not refs), None)
        if missing is not None:
            raise MetricError(
                f"{segments.where(missing)}: {spec.name} compares with references, and this "
                'response has none; add "references": [...] to every prediction (or turn), '
                f"or leave {spec.name} out"
            )
    metric = spec.factory()
    try:
        statistics = metric.statistics(segments, progress)
        units = np.flatnonzero(statistics.present)
        if not len(units):
            raise MetricError(
                f"{segments.source}: no response has what {spec.name} needs: {metric.needs}"
            )
        score = metric.score(statistics.rows[units])
        by_tag = {
            key: _breakdown(metric, statistics.rows, statistics.present, members)
            for key, members in groups.items()
        }
        signature = metric.signature
    finally:
        metric.close()
    return {
        **spec.describe(),
        "value": score.value,
        "signature": signature,
        "n": len(units),
        "details": score.details,
        "by_tag": by_tag,
    }


def _breakdown(
    metric: Metric, rows: np.ndarray, present: np.ndarray, members: Mapping[str, np.ndarray]
) -> dict[str, Any]:
    groups: dict[str, dict[str, Any]] = {}
    for value, indices in members.items():
        units = indices[present[indices]]
        groups[value] = {
            "value": metric.score(rows[units]).value if len(units) else None,
            "n": len(units),
        }
    values = [group["value"] for group in groups.values()]
    scored = [v for v in values if v is not None]
    if scored and isinstance(scored[0], dict):
        average: Any = {c: macro_average(v[c] for v in scored) for c in scored[0]}
    else:
        average = macro_average(values)
    return {"groups": groups, "macro_average": average}


def _perf_summary(results: Mapping[str, Any], name: str, component: str) -> dict[str, Any]:
    def pick(value: Any) -> Any:
        return value[component] if component and isinstance(value, dict) else value

    result = results[name]
    direction = result["direction"]
    return {
        "perf_metric": f"{name}.{component}" if component else name,
        "perf": pick(result["value"]),
        "perf_direction": direction[component] if component else direction,
        "perf_by_tag": {
            key: {tag: pick(group["value"]) for tag, group in breakdown["groups"].items()}
            for key, breakdown in result["by_tag"].items()
        },
    }


def _jsonable(value: Any) -> Any:
    """Plain JSON types; nan (an undefined value) becomes null."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value

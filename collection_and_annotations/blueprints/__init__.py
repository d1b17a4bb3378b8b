"""Blueprints: the kinds of task the engine can run, chosen from the run conf."""

from __future__ import annotations

from typing import TYPE_CHECKING

from collection_and_annotations.blueprints.base import AssignmentPlan, TaskBlueprint
from collection_and_annotations.blueprints.registry import blueprint_class
from collection_and_annotations.errors import UserError

if TYPE_CHECKING:
    from omegaconf import DictConfig

__all__ = ["AssignmentPlan", "TaskBlueprint", "build_blueprint"]


def build_blueprint(cfg: DictConfig) -> TaskBlueprint:
    """Parse and check every file the conf names (the kind reads and checks its own files:
    task data, buckets, screening and gold, model options)."""
    check_metric_selection(cfg)
    blueprint_cfg = cfg.mephisto.blueprint
    return blueprint_class(blueprint_cfg._blueprint_type)(blueprint_cfg,
                                                          cfg.mephisto.task.task_name)


def check_metric_selection(cfg: DictConfig) -> None:
    """Unknown metric names in `metrics.*` fail at launch, not when someone evaluates later."""
    names = list(cfg.metrics.names)
    perf = cfg.metrics.perf_metric
    if not names and not perf:
        return  # nothing to check: don't load the metrics' libraries at every launch
    from collection_and_annotations.metrics import default_registry

    registry = default_registry()
    for name in [*names, *([perf.split(".", 1)[0]] if perf else [])]:
        if name not in registry:
            raise UserError(f"metrics: unknown metric '{name}' (available: "
                            f"{', '.join(spec.name for spec in registry)})")
    if perf and perf.split(".", 1)[0] not in names:
        raise UserError(f"metrics.perf_metric '{perf}' must be one of metrics.names")

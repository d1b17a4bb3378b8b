"""Blueprints: the kinds of task the engine can run, chosen from the run conf."""

from __future__ import annotations

from omegaconf import DictConfig

from collection_and_annotations.blueprints.base import AssignmentPlan, TaskBlueprint
from collection_and_annotations.blueprints.registry import COMBINED_BLUEPRINTS, blueprint_class
from collection_and_annotations.bots.model_opts import (
    check_spec_problems,
    load_model_opts,
    nicknames_in,
    parse_conversations_needed,
)
from collection_and_annotations.errors import NotSupportedYet, UserError

__all__ = ["AssignmentPlan", "TaskBlueprint", "build_blueprint", "check_supported", "kind_name"]


def kind_name(cfg: DictConfig) -> str:
    """The kind of task a conf runs: `_blueprint_type`, or for the original project's combined
    blueprint, the mode its flags choose."""
    blueprint_cfg = cfg.mephisto.blueprint
    declared = blueprint_cfg._blueprint_type
    if declared not in COMBINED_BLUEPRINTS:
        return declared
    if blueprint_cfg.do_collect_dialogue:
        return "dialogue_collection"
    if not blueprint_cfg.do_external_annotations:
        raise UserError("the conf neither collects dialogues (do_collect_dialogue) nor annotates "
                        "existing ones (do_external_annotations): nothing to run")
    return "static_annotation"


def build_blueprint(cfg: DictConfig) -> TaskBlueprint | None:
    """Parse and check every file the conf names; None for a kind not built yet (its files
    are still checked, and `check_supported` refuses it)."""
    check_metric_selection(cfg)
    blueprint_cfg = cfg.mephisto.blueprint
    if blueprint_cfg.do_collect_dialogue:
        if blueprint_cfg.model_opt_path:
            bots = load_model_opts(blueprint_cfg.model_opt_path)
            needed = parse_conversations_needed(blueprint_cfg.conversations_needed_string or "",
                                                bots)
            check_spec_problems(bots, nicknames_in(needed))
        return None
    # The kind reads and checks its own screening and gold files (static annotation does).
    return blueprint_class(kind_name(cfg))(blueprint_cfg, cfg.mephisto.task.task_name)


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


def check_supported(cfg: DictConfig) -> None:
    """Refuse, with a clear message, features this version would otherwise silently skip."""
    blueprint_cfg = cfg.mephisto.blueprint
    wanted = [
        ("do_collect_dialogue", "live dialogue collection with bots"),
    ]
    for key, feature in wanted:
        if blueprint_cfg.get(key):
            raise NotSupportedYet(
                f"{feature} (mephisto.blueprint.{key}=true) is not supported yet; run without it "
                f"by adding mephisto.blueprint.{key}=false to the command line"
            )

"""The original project's one blueprint, `behavior_analysis_blueprint`: its flags make a conf a
static annotation or a dialogue collection task, and it takes the keys of both."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from collection_and_annotations.blueprints.base import TaskBlueprint
from collection_and_annotations.blueprints.dialogue_collection.conf import DialogueCollectionConf
from collection_and_annotations.blueprints.registry import blueprint_class, register_blueprint
from collection_and_annotations.blueprints.static_annotation.conf import StaticAnnotationConf
from collection_and_annotations.config.keys import unused
from collection_and_annotations.errors import UserError

if TYPE_CHECKING:
    from omegaconf import DictConfig

_NEVER_USED = "deprecated: the original project never used it"


@dataclass
class BehaviorAnalysisConf(StaticAnnotationConf, DialogueCollectionConf):
    do_external_annotations: bool = True  # annotate existing dialogues
    do_collect_dialogue: bool = False  # chat live with bots (as dialogue_collection does)
    context_seed: Any = unused(_NEVER_USED, deprecated=True)
    units_per_assignment: Any = unused(f"{_NEVER_USED}; one data line is one unit",
                                       deprecated=True)


def chosen_kind(blueprint_cfg: DictConfig) -> str:
    """The kind the flags choose: dialogue collection, else static annotation."""
    if blueprint_cfg.do_collect_dialogue:
        return "dialogue_collection"
    if not blueprint_cfg.do_external_annotations:
        raise UserError("the conf neither collects dialogues (do_collect_dialogue) nor annotates "
                        "existing ones (do_external_annotations): nothing to run")
    return "static_annotation"


@register_blueprint("behavior_analysis_blueprint")
class BehaviorAnalysisBlueprint:
    conf = BehaviorAnalysisConf

    def __new__(cls, blueprint_cfg: DictConfig, task_name: str) -> TaskBlueprint:  # type: ignore[misc]
        """Not a kind of its own: the kind its flags choose, made from the same conf."""
        return blueprint_class(chosen_kind(blueprint_cfg))(blueprint_cfg, task_name)

"""Static annotation: workers label existing dialogues with annotation buckets."""

from __future__ import annotations

import random
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from collection_and_annotations.blueprints.base import (
    SCREENING_POOL,
    AssignmentPlan,
    SubmittedUnit,
    TaskBlueprint,
    WorkerContext,
)
from collection_and_annotations.blueprints.registry import register_blueprint
from collection_and_annotations.blueprints.static_annotation.answers import (
    DialogueView,
    Problem,
    check_answers,
)
from collection_and_annotations.blueprints.static_annotation.buckets import Bucket, load_buckets
from collection_and_annotations.blueprints.static_annotation.comparisons import with_choices
from collection_and_annotations.blueprints.static_annotation.conf import StaticAnnotationConf
from collection_and_annotations.blueprints.static_annotation.export_rows import (
    export_dialogues,
    export_rows,
)
from collection_and_annotations.blueprints.static_annotation.instructions import (
    load_instructions,
)
from collection_and_annotations.blueprints.static_annotation.layout import (
    SIDES,
    make_layout,
    shown_dialogues,
)
from collection_and_annotations.blueprints.static_annotation.speaker_names import (
    display_names,
)
from collection_and_annotations.blueprints.static_annotation.task_data import (
    AssignmentSpec,
    read_task_data,
)
from collection_and_annotations.errors import UserError
from collection_and_annotations.quality import pools as quality
from collection_and_annotations.quality.settings import read_settings

if TYPE_CHECKING:
    from omegaconf import DictConfig


def _public_turns(turns: list[list[Any]]) -> list[dict[str, Any]]:
    return [{"index": i, "speaker": t[0], "text": t[1]} for i, t in enumerate(turns)]


@register_blueprint("static_annotation")
class StaticAnnotationBlueprint(TaskBlueprint):
    conf = StaticAnnotationConf
    export_dialogues = staticmethod(export_dialogues)
    export_rows = staticmethod(export_rows)

    def __init__(self, blueprint_cfg: DictConfig, task_name: str):
        if not blueprint_cfg.data_jsonl:
            raise UserError("mephisto.blueprint.data_jsonl is not set: name the task data JSONL")
        buckets_path = Path(blueprint_cfg.annotations_config_path)
        self.buckets: dict[str, Bucket] = load_buckets(buckets_path)
        self.specs: list[AssignmentSpec]
        self.specs, self.units_file = read_task_data(
            blueprint_cfg.data_jsonl, self.buckets, task_name, blueprint_cfg.units_path
        )
        self.quality = read_settings(blueprint_cfg, task_name, self.buckets)
        used = sorted({t for s in self.specs for d in s.dialogues for t in d["annotation_tasks"]}
                      | {t for d in self.quality.training + self.quality.gold_dialogues
                         for t in d.source["annotation_tasks"]})
        self.used_buckets = {name: self.buckets[name] for name in used}
        instructions_dir = Path(
            blueprint_cfg.instructions_dir or buckets_path.parent / "instructions"
        )
        self.instructions = load_instructions(instructions_dir, used)
        self.speaker_names = display_names(blueprint_cfg.speaker_names)
        self.include_persona = bool(blueprint_cfg.include_persona)
        self.answer_each_dialogue = not blueprint_cfg.allow_unanswered_dialogues

    def plan(self) -> list[AssignmentPlan]:
        plans = []
        # Opaque keys for the page, drawn in one call (a task can hold 100,000s of dialogues).
        random_hex = secrets.token_hex(8 * sum(len(spec.dialogues) for spec in self.specs))
        keys = (f"d_{random_hex[i:i + 16]}" for i in range(0, len(random_hex), 16))
        for spec in self.specs:
            dialogues = [{"key": next(keys), "source": dialogue} for dialogue in spec.dialogues]
            plans.append(AssignmentPlan(
                key=spec.key,
                annotators=spec.annotators,
                groups=spec.groups,
                excluded_workers=spec.origin_workers,
                data={"dialogues": dialogues},
                label=", ".join(d["dialogue_id"] for d in spec.dialogues),
            ))
        return plans + quality.quality_plans(self.quality)

    def unit_layout(self, data: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        if data.get("quality") == "screening":
            return None  # training dialogues in file order: the graded one comes last
        return make_layout([d["source"] for d in data["dialogues"]], rng, self._keeps_sides)

    def _keeps_sides(self, source: dict[str, Any]) -> bool:
        """Turn answers name turns of `turns`, and the page annotates the left dialogue: a
        comparison that also has turn-level buckets keeps `turns` on the left."""
        return any(self.buckets[name].level == "turn" for name in source["annotation_tasks"])

    def pools_for(self, connection: Connection, worker: WorkerContext) -> list[str]:
        return quality.route(connection, self.quality, worker)

    def unit_kind(self, pool: str) -> str:
        """Gold units are served as real work: nothing tells them apart."""
        return "screening" if pool == SCREENING_POOL else "annotation"

    def check_dialogue(self, connection: Connection, unit: SubmittedUnit,
                       dialogue_key: str) -> dict[str, Any] | None:
        return quality.check_dialogue(connection, self.buckets, unit, dialogue_key)

    def after_submit(self, connection: Connection, unit: SubmittedUnit) -> dict[str, Any] | None:
        return quality.after_submit(connection, self.quality, self.buckets, unit)

    def max_incorrect_golds(self) -> int:
        return self.quality.max_incorrect_golds

    def _views(self, data: dict[str, Any]) -> list[DialogueView]:
        return [
            DialogueView(d["key"], [t[0] for t in d["source"]["turns"]],
                         list(d["source"]["annotation_tasks"]))
            for d in data["dialogues"]
        ]

    def unit_content(self, data: dict[str, Any], layout: dict[str, Any] | None) -> dict[str, Any]:
        """The unit in its layout's order; a comparison's sides are served as `turns` (left)
        and `turns2` (right), so the page never learns which one is the data's first."""
        dialogues = []
        names: list[str] = []
        for shown in shown_dialogues(data, layout):
            item, source = shown.item, shown.item["source"]
            left, right = (shown.left, shown.right) if shown.left else SIDES
            dialogues.append({
                "key": item["key"],
                "turns": _public_turns(source[left]),
                "turns2": _public_turns(source[right]) if right in source else None,
                "persona": source.get("bot_persona") if self.include_persona else None,
                "annotation_tasks": shown.tasks,
            })
            names += [n for n in shown.tasks if n not in names]
        buckets = {}
        for name in names:
            bucket = self.buckets[name]
            targets = {
                item["key"]: bucket.target_turns(item["source"]["turns"])
                for item in data["dialogues"]
                if name in item["source"]["annotation_tasks"] and bucket.level == "turn"
            }
            buckets[name] = {
                **bucket.public(),
                "instructions_html": self.instructions.get(name),
                "targets": targets,
            }
        content = {"dialogues": dialogues, "buckets": buckets,
                   "speaker_names": self.speaker_names}
        if data.get("quality") == "screening":
            content["screening"] = _screening_intro(data)
        return content

    def describe(self) -> dict[str, Any]:
        return {"buckets": {name: b.public() for name, b in self.used_buckets.items()}}

    def stored_answers(
        self, data: dict[str, Any], layout: dict[str, Any] | None, answers: Any
    ) -> Any:
        return with_choices(answers, shown_dialogues(data, layout), self.buckets)

    def check_submission(
        self, data: dict[str, Any], layout: dict[str, Any] | None, answers: Any
    ) -> list[dict[str, Any]]:
        positions = {shown.item["key"]: shown.position
                     for shown in shown_dialogues(data, layout)}
        return [{**p.as_dict(), "where": _where(p, positions)}
                for p in check_answers(answers, self._views(data), self.buckets,
                                       self.answer_each_dialogue)]


def _where(problem: Problem, positions: dict[str, int]) -> str:
    """'dialogue 2, turn 6, 'bucket'': numbered as this unit shows them (turns 1-based)."""
    parts = []
    if problem.dialogue in positions:
        parts.append(f"dialogue {positions[problem.dialogue]}")
    if problem.turn is not None:
        parts.append(f"turn {problem.turn + 1}")
    if problem.bucket:
        parts.append(f"'{problem.bucket}'")
    return ", ".join(parts)


def _screening_intro(data: dict[str, Any]) -> dict[str, Any]:
    """What the training intro says, from the data: how many dialogues, which are graded and
    the mistakes allowed on each (never an expected answer)."""
    dialogues = data["dialogues"]
    graded = data.get("graded", [len(dialogues) - 1])
    return {"dialogues": len(dialogues),
            "graded": [{"position": p + 1, "key": dialogues[p]["key"],
                        "allowed_mistakes": dialogues[p]["source"]["pass_criteria"]}
                       for p in graded]}

"""Static annotation: workers label existing dialogues with annotation buckets."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from collection_and_annotations.blueprints.base import AssignmentPlan
from collection_and_annotations.blueprints.static_annotation.answers import (
    DialogueView,
    check_answers,
)
from collection_and_annotations.blueprints.static_annotation.buckets import Bucket, load_buckets
from collection_and_annotations.blueprints.static_annotation.instructions import (
    load_instructions,
)
from collection_and_annotations.blueprints.static_annotation.task_data import (
    AssignmentSpec,
    read_task_data,
)
from collection_and_annotations.errors import UserError


def _public_turns(turns: list[list[Any]]) -> list[dict[str, Any]]:
    return [{"index": i, "speaker": t[0], "text": t[1]} for i, t in enumerate(turns)]


class StaticAnnotationBlueprint:
    name = "static_annotation"

    def __init__(self, blueprint_cfg: DictConfig, task_name: str):
        if not blueprint_cfg.data_jsonl:
            raise UserError("mephisto.blueprint.data_jsonl is not set: name the task data JSONL")
        buckets_path = Path(blueprint_cfg.annotations_config_path)
        self.buckets: dict[str, Bucket] = load_buckets(buckets_path)
        self.specs: list[AssignmentSpec]
        self.specs, self.units_file = read_task_data(
            blueprint_cfg.data_jsonl, self.buckets, task_name, blueprint_cfg.units_path
        )
        used = sorted({t for s in self.specs for d in s.dialogues for t in d["annotation_tasks"]})
        self.used_buckets = {name: self.buckets[name] for name in used}
        instructions_dir = Path(
            blueprint_cfg.instructions_dir or buckets_path.parent / "instructions"
        )
        self.instructions = load_instructions(instructions_dir, used)
        self.speaker_names = dict(blueprint_cfg.speaker_names)
        self.include_persona = bool(blueprint_cfg.include_persona)

    def plan(self) -> list[AssignmentPlan]:
        plans = []
        for spec in self.specs:
            dialogues = [
                {"key": f"d_{secrets.token_hex(8)}", "source": dialogue}
                for dialogue in spec.dialogues
            ]
            plans.append(AssignmentPlan(
                key=spec.key,
                annotators=spec.annotators,
                groups=spec.groups,
                excluded_workers=spec.origin_workers,
                data={"dialogues": dialogues},
            ))
        return plans

    def _views(self, data: dict[str, Any]) -> list[DialogueView]:
        return [
            DialogueView(d["key"], [t[0] for t in d["source"]["turns"]],
                         list(d["source"]["annotation_tasks"]))
            for d in data["dialogues"]
        ]

    def _with_speaker_names(self, text: str | None) -> str | None:
        """Instructions are display-only, so names are put in here (answers keep raw texts)."""
        if text is None:
            return None
        for placeholder, display in self.speaker_names.items():
            text = text.replace(placeholder, display)
        return text

    def unit_content(self, data: dict[str, Any]) -> dict[str, Any]:
        dialogues = []
        names: list[str] = []
        for item in data["dialogues"]:
            source = item["source"]
            dialogues.append({
                "key": item["key"],
                "turns": _public_turns(source["turns"]),
                "turns2": _public_turns(source["turns2"]) if "turns2" in source else None,
                "persona": source.get("bot_persona") if self.include_persona else None,
                "annotation_tasks": list(source["annotation_tasks"]),
            })
            names += [n for n in source["annotation_tasks"] if n not in names]
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
                "instructions_html": self._with_speaker_names(self.instructions.get(name)),
                "targets": targets,
            }
        return {"dialogues": dialogues, "buckets": buckets, "speaker_names": self.speaker_names}

    def describe(self) -> dict[str, Any]:
        return {"buckets": {name: b.public() for name, b in self.used_buckets.items()}}

    def check_submission(self, data: dict[str, Any], answers: Any) -> list[dict[str, Any]]:
        return [p.as_dict() for p in check_answers(answers, self._views(data), self.buckets)]

"""Annotation buckets (`annotation_buckets.json`): definitions, the turns each one asks about."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from collection_and_annotations.blueprints.static_annotation.dependencies import check_dependency
from collection_and_annotations.errors import UserError
from collection_and_annotations.json_files import read_json

TURN_CONFIGS = frozenset({
    "button_flow", "nondetails_button_flow", "nondetails_nonhelp_button_flow",
    "multiselect", "likert-5-turn", "foreach-5-select",
})
DIALOGUE_CONFIGS = frozenset({"likert-5-dialogue", "foreach-5-select-dialogue", "comparative"})
TREE_CONFIGS = frozenset(
    {"button_flow", "nondetails_button_flow", "nondetails_nonhelp_button_flow"}
)
INDEX_RULES = ("odd", "even", "all", "all_skip_first", "no_indices")
SPEAKERS = ("user", "system")


@dataclass(frozen=True)
class Bucket:
    name: str
    config: str
    indices: str | dict[str, str]
    options: Any
    question: str | None
    require_level: str | None
    task_title: str
    label_details: dict[str, str] | None

    @property
    def level(self) -> str:
        return "turn" if self.config in TURN_CONFIGS else "dialogue"

    def target_turns(self, turns: list[list[Any]]) -> list[int]:
        """Indices of the turns this bucket asks about (0-based, as in the data)."""
        if self.level == "dialogue":
            return []
        rule = self.indices
        if isinstance(rule, dict):
            return [i for i, turn in enumerate(turns) if turn[0] == rule["speaker"]]
        if rule in SPEAKERS:
            return [i for i, turn in enumerate(turns) if turn[0] == rule]
        count = len(turns)
        return {
            "odd": list(range(1, count, 2)),
            "even": list(range(0, count, 2)),
            "all": list(range(count)),
            "all_skip_first": list(range(1, count)),
            "no_indices": [],
        }[rule]

    def public(self) -> dict[str, Any]:
        """The definition as the worker page receives it."""
        return {
            "config": self.config,
            "level": self.level,
            "question": self.question,
            "task_title": self.task_title,
            "options": self.options,
            "label_details": self.label_details,
            "require": {"level": self.require_level} if self.require_level else None,
        }


def _check_tree(options: Any, where: str, path: Path, root: Any = None) -> None:
    root = options if root is None else root
    if not isinstance(options, dict) or not options:
        raise UserError(f"{where}: a question tree must be a non-empty object", path)
    for question, answers in options.items():
        if not isinstance(answers, dict):
            raise UserError(f"{where}: answers of '{question}' must be an object", path)
        for key, sub in answers.items():
            if key == "_type_":
                if not isinstance(sub, dict) or set(sub) - {"checkbox", "radio"}:
                    raise UserError(f"{where}: '_type_' of '{question}' must be "
                                    "{\"checkbox\": {}} or {\"radio\": {}}", path)
            elif key == "_dep_":
                check_dependency(sub, question, options, root, where, path)
            elif not isinstance(sub, dict):
                raise UserError(f"{where}: answer '{key}' of '{question}' must map to an "
                                "object (nested questions, or {} for none)", path)
            elif sub:
                _check_tree(sub, f"{where} > {key}", path, root)


def _check_options(name: str, config: str, options: Any, path: Path) -> None:
    where = f"bucket '{name}'"
    if config in TREE_CONFIGS:
        _check_tree(options, where, path)
    elif config == "comparative":
        if not isinstance(options, list) or not options or not all(
            isinstance(o, str) for o in options
        ):
            raise UserError(f"{where}: comparative options must be a list of strings", path)
    else:
        key = "label" if config.startswith("likert") else "value"
        if not isinstance(options, list) or not options or not all(
            isinstance(o, dict) and isinstance(o.get(key), str) for o in options
        ):
            raise UserError(f"{where}: {config} options must be a list of objects with "
                            f"'{key}'", path)
        values = [o[key] for o in options]
        if len(set(values)) != len(values):
            raise UserError(f"{where}: option {key}s must be unique", path)
        for option in options:
            speaker = option.get("speaker")
            if speaker is not None and speaker not in SPEAKERS:
                raise UserError(f"{where}: option speaker must be 'user' or 'system', "
                                f"not '{speaker}'", path)


def parse_bucket(name: str, spec: Any, path: Path) -> Bucket:
    where = f"bucket '{name}'"
    if not isinstance(spec, dict):
        raise UserError(f"{where} must be an object", path)
    config = spec.get("config")
    if config not in TURN_CONFIGS | DIALOGUE_CONFIGS:
        known = ", ".join(sorted(TURN_CONFIGS | DIALOGUE_CONFIGS))
        raise UserError(f"{where}: unknown config '{config}' (known: {known})", path)
    indices = spec.get("indices", "no_indices" if config in DIALOGUE_CONFIGS else "all")
    valid_index = (indices in INDEX_RULES or indices in SPEAKERS) or (
        isinstance(indices, dict) and indices.get("speaker") in SPEAKERS
    )
    if not valid_index:
        raise UserError(f"{where}: unknown indices '{indices}' (use one of "
                        f"{', '.join(INDEX_RULES)}, 'system', 'user' or "
                        "{\"speaker\": \"system\"})", path)
    if "options" not in spec:
        raise UserError(f"{where}: 'options' is missing", path)
    _check_options(name, config, spec["options"], path)
    require = spec.get("require")
    level = None
    if require is not None:
        level = require.get("level") if isinstance(require, dict) else None
        if level not in ("turn", "dialogue"):
            raise UserError(f"{where}: require.level must be 'turn' or 'dialogue'", path)
    return Bucket(
        name=name,
        config=config,
        indices=indices,
        options=spec["options"],
        question=spec.get("question"),
        require_level=level,
        task_title=spec.get("task_title", name),
        label_details=spec.get("label_details"),
    )


def load_buckets(path: str | Path) -> dict[str, Bucket]:
    path = Path(path)
    document = read_json(
        path, "annotation buckets file (mephisto.blueprint.annotations_config_path)"
    )
    if not isinstance(document, dict) or not isinstance(document.get("config"), dict):
        raise UserError("the top-level key 'config' must hold an object of buckets", path)
    return {name: parse_bucket(name, spec, path) for name, spec in document["config"].items()}

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
TEXT_CONFIG = "text"  # dialogue level, or turn level when it names `indices`
TREE_CONFIGS = frozenset(
    {"button_flow", "nondetails_button_flow", "nondetails_nonhelp_button_flow"}
)
# Buckets whose answer may carry an "Explain your answer" text (`"explain": true`).
EXPLAINABLE_CONFIGS = TREE_CONFIGS | {
    "likert-5-turn", "likert-5-dialogue", "foreach-5-select", "foreach-5-select-dialogue",
    "comparative",
}
INDEX_RULES = ("odd", "even", "all", "all_skip_first", "no_indices")
SPEAKERS = ("user", "system")
DEFAULT_MAX_CHARS = 2000


@dataclass(frozen=True)
class TextLimits:
    """How long a free text may be: shorter than `min_chars` (after stripping whitespace)
    counts as not answered, longer than `max_chars` is refused."""

    min_chars: int = 0
    max_chars: int = DEFAULT_MAX_CHARS
    multiline: bool = True

    def public(self) -> dict[str, Any]:
        return {"min_chars": self.min_chars, "max_chars": self.max_chars,
                "multiline": self.multiline}


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
    text: TextLimits | None = None  # `config: "text"` buckets
    explain: TextLimits | None = None  # `"explain": true`: the explanation's limits

    @property
    def level(self) -> str:
        if self.config == TEXT_CONFIG:
            return "dialogue" if self.indices == "no_indices" else "turn"
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
            "text": self.text.public() if self.text else None,
            "explain": self.explain.public() if self.explain else None,
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
    if config == TEXT_CONFIG:
        if options is not None:
            raise UserError(f"{where}: a text bucket has no 'options' (the answer is the "
                            "worker's text); remove the key", path)
    elif config in TREE_CONFIGS:
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
    if config not in TURN_CONFIGS | DIALOGUE_CONFIGS | {TEXT_CONFIG}:
        known = ", ".join(sorted(TURN_CONFIGS | DIALOGUE_CONFIGS | {TEXT_CONFIG}))
        raise UserError(f"{where}: unknown config '{config}' (known: {known})", path)
    dialogue_default = config in DIALOGUE_CONFIGS or config == TEXT_CONFIG
    indices = spec.get("indices", "no_indices" if dialogue_default else "all")
    valid_index = (indices in INDEX_RULES or indices in SPEAKERS) or (
        isinstance(indices, dict) and indices.get("speaker") in SPEAKERS
    )
    if not valid_index:
        raise UserError(f"{where}: unknown indices '{indices}' (use one of "
                        f"{', '.join(INDEX_RULES)}, 'system', 'user' or "
                        "{\"speaker\": \"system\"})", path)
    if "options" not in spec and config != TEXT_CONFIG:
        raise UserError(f"{where}: 'options' is missing", path)
    _check_options(name, config, spec.get("options"), path)
    if config == TEXT_CONFIG and not isinstance(spec.get("question"), str):
        raise UserError(f"{where}: a text bucket needs a 'question' (the text shown above "
                        "the box)", path)
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
        options=spec.get("options"),
        question=spec.get("question"),
        require_level=level,
        task_title=spec.get("task_title", name),
        label_details=spec.get("label_details"),
        text=_text_limits(spec, "", where, path) if config == TEXT_CONFIG else None,
        explain=_explain(spec, config, where, path),
    )


def _count(spec: dict[str, Any], key: str, default: int, where: str, path: Path) -> int:
    value = spec.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise UserError(f"{where}: '{key}' must be a whole number of characters (0 or more), "
                        f"not {value!r}", path)
    return value


def _text_limits(spec: dict[str, Any], prefix: str, where: str, path: Path) -> TextLimits:
    """The `<prefix>min_chars` / `<prefix>max_chars` (and `multiline`) of a bucket."""
    low = _count(spec, f"{prefix}min_chars", 0, where, path)
    high = _count(spec, f"{prefix}max_chars", DEFAULT_MAX_CHARS, where, path)
    if high < max(low, 1):
        raise UserError(f"{where}: '{prefix}max_chars' ({high}) must be at least 1 and at "
                        f"least '{prefix}min_chars' ({low})", path)
    multiline = spec.get("multiline", True) if not prefix else True
    if not isinstance(multiline, bool):
        raise UserError(f"{where}: 'multiline' must be true or false", path)
    return TextLimits(low, high, multiline)


def _explain(spec: dict[str, Any], config: str, where: str, path: Path) -> TextLimits | None:
    """The limits of the "Explain your answer" text, or None without `"explain": true`."""
    explain = spec.get("explain", False)
    if not isinstance(explain, bool):
        raise UserError(f"{where}: 'explain' must be true or false", path)
    stray = [k for k in ("explain_min_chars", "explain_max_chars") if k in spec]
    if not explain:
        if stray:
            raise UserError(f"{where}: '{stray[0]}' needs \"explain\": true", path)
        return None
    if config not in EXPLAINABLE_CONFIGS:
        raise UserError(f"{where}: 'explain' is offered on question trees, Likert and "
                        f"comparative buckets, not on {config}", path)
    return _text_limits(spec, "explain_", where, path)


def load_buckets(path: str | Path) -> dict[str, Bucket]:
    path = Path(path)
    document = read_json(
        path, "annotation buckets file (mephisto.blueprint.annotations_config_path)"
    )
    if not isinstance(document, dict) or not isinstance(document.get("config"), dict):
        raise UserError("the top-level key 'config' must hold an object of buckets", path)
    return {name: parse_bucket(name, spec, path) for name, spec in document["config"].items()}

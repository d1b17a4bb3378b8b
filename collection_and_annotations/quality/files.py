"""Parse and check screening (onboarding) JSON and gold JSONL files.

Serving screening and gold units is not built yet; their files are still checked at launch so a
broken file is found before workers arrive.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from collection_and_annotations.errors import UserError


def _check_annotated_dialogue(
    dialogue: Any, where: str, path: Path, line: int | None, buckets: Mapping[str, Any]
) -> None:
    if not isinstance(dialogue, dict):
        raise UserError(f"{where} must be an object", path, line)
    tasks = dialogue.get("annotation_tasks")
    if not isinstance(tasks, list) or not tasks:
        raise UserError(f"{where}: 'annotation_tasks' must be a non-empty list", path, line)
    for task in tasks:
        if task not in buckets:
            raise UserError(f"{where}: unknown bucket '{task}'", path, line)
    turns = dialogue.get("turns")
    if not isinstance(turns, list) or not turns:
        raise UserError(f"{where}: 'turns' must be a non-empty list", path, line)
    for index, turn in enumerate(turns):
        if not isinstance(turn, list) or not 2 <= len(turn) <= 4 or turn[0] not in (
            "user", "system"
        ):
            raise UserError(f"{where}: turns[{index}] must be [speaker, text] or [speaker, text, "
                            "expected_answer, explanation]", path, line)


def check_screening_file(path: str | Path, buckets: Mapping[str, Any]) -> int:
    """Returns the number of training dialogues."""
    path = Path(path)
    if not path.is_file():
        raise UserError("screening file not found (mephisto.blueprint.screen_json)", path)
    try:
        document = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise UserError(f"invalid JSON: {exc.msg}", path, exc.lineno) from None
    if not isinstance(document, dict) or not document:
        raise UserError("screening data must be an object of training dialogues", path)
    for name, dialogue in document.items():
        _check_annotated_dialogue(dialogue, f"training dialogue '{name}'", path, None, buckets)
    return len(document)


def check_gold_file(path: str | Path, buckets: Mapping[str, Any]) -> int:
    """Returns the number of gold dialogues."""
    path = Path(path)
    if not path.is_file():
        raise UserError("gold file not found (mephisto.blueprint.gold_jsonl)", path)
    count = 0
    with path.open(encoding="utf-8") as handle:
        for line, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                raise UserError(f"malformed JSON: {exc.msg}", path, line) from None
            dialogues = record.get("data", [record]) if isinstance(record, dict) else [record]
            for dialogue in dialogues:
                _check_annotated_dialogue(dialogue, "gold dialogue", path, line, buckets)
                count += 1
    return count

"""Parse and check screening (onboarding) JSON and gold JSONL files.

Serving screening and gold units is not built yet; their files are still checked at launch so a
broken file is found before workers arrive.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from collection_and_annotations.errors import UserError
from collection_and_annotations.json_files import read_json, read_json_lines


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
    document = read_json(path, "screening file (mephisto.blueprint.screen_json)")
    if not isinstance(document, dict) or not document:
        raise UserError("screening data must be an object of training dialogues", path)
    for name, dialogue in document.items():
        _check_annotated_dialogue(dialogue, f"training dialogue '{name}'", path, None, buckets)
    return len(document)


def check_gold_file(path: str | Path, buckets: Mapping[str, Any]) -> int:
    """Returns the number of gold dialogues."""
    count = 0
    for line, record in read_json_lines(path, "gold file (mephisto.blueprint.gold_jsonl)"):
        dialogues = record.get("data", [record]) if isinstance(record, dict) else [record]
        for dialogue in dialogues:
            _check_annotated_dialogue(dialogue, "gold dialogue", Path(path), line, buckets)
            count += 1
    return count

"""Parse and check screening (onboarding) JSON and gold JSONL files before launch.

A training or gold dialogue is task-data shaped; its annotated turns are
`[speaker, text, expected_answer, explanation]`. Every expected answer goes through the
translation (`translation.py`) here, so a file naming a question or answer the bucket does not
offer, a dialogue without graded turns, or a `pass_criteria` that is not a number fails with
file, line and reason before anything is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from collection_and_annotations.blueprints.static_annotation.buckets import Bucket
from collection_and_annotations.errors import UserError, UserErrors
from collection_and_annotations.json_files import read_json, read_json_lines, read_text
from collection_and_annotations.quality.comparator import Expected
from collection_and_annotations.quality.translation import BadExpected, parse_expected

SCREENING_WHAT = "screening file (mephisto.blueprint.screen_json)"
GOLD_WHAT = "gold file (mephisto.blueprint.gold_jsonl)"


@dataclass(frozen=True)
class ScoredTurn:
    index: int
    expected: Expected
    explanation: str


@dataclass(frozen=True)
class AnnotatedDialogue:
    """A training or gold dialogue: `source` as in the file, its scored turns."""

    name: str
    source: dict[str, Any]
    turns: tuple[ScoredTurn, ...]
    pass_criteria: int | None


def scored_turns(source: Mapping[str, Any], buckets: Mapping[str, Bucket]) -> list[ScoredTurn]:
    """The turns with an expected answer, parsed; raises BadExpected naming the turn."""
    speakers = [turn[0] for turn in source["turns"]]
    dialogue_buckets = [buckets[name] for name in source["annotation_tasks"]]
    scored = []
    for index, turn in enumerate(source["turns"]):
        if len(turn) < 3:
            continue
        explanation = turn[3] if len(turn) > 3 and turn[3] is not None else ""  # gold: null
        if not isinstance(explanation, str):
            raise BadExpected(f"turns[{index}]: the explanation must be a string or null")
        try:
            expected = parse_expected(turn[2], dialogue_buckets, index, speakers)
        except BadExpected as exc:
            raise BadExpected(f"turns[{index}]: {exc}") from None
        scored.append(ScoredTurn(index, expected, explanation))
    return scored


def _check_shape(dialogue: Any, buckets: Mapping[str, Any]) -> None:
    if not isinstance(dialogue, dict):
        raise BadExpected("must be an object")
    tasks = dialogue.get("annotation_tasks")
    if not isinstance(tasks, list) or not tasks:
        raise BadExpected("'annotation_tasks' must be a non-empty list")
    for task in tasks:
        if task not in buckets:
            raise BadExpected(f"unknown bucket '{task}'")
    turns = dialogue.get("turns")
    if not isinstance(turns, list) or not turns:
        raise BadExpected("'turns' must be a non-empty list")
    for index, turn in enumerate(turns):
        if not isinstance(turn, list) or not 2 <= len(turn) <= 4 or turn[0] not in (
            "user", "system"
        ) or not isinstance(turn[1], str):
            raise BadExpected(f"turns[{index}] must be [speaker, text] or [speaker, text, "
                              "expected_answer, explanation]")


def _pass_criteria(dialogue: dict[str, Any]) -> int | None:
    value = dialogue.get("pass_criteria")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or (
        isinstance(value, float) and not value.is_integer()
    ):
        raise BadExpected(f"'pass_criteria' must be a number of mistakes (0 or more), not "
                          f"{json.dumps(value)}")
    return int(value)


def annotated_dialogue(name: str, dialogue: Any, buckets: Mapping[str, Bucket]
                       ) -> AnnotatedDialogue:
    """One dialogue of a screening or gold file, checked; raises BadExpected."""
    _check_shape(dialogue, buckets)
    turns = scored_turns(dialogue, buckets)
    if not turns:
        raise BadExpected("no turn has an expected answer, so nothing could be graded")
    return AnnotatedDialogue(name, dialogue, tuple(turns), _pass_criteria(dialogue))


def _key_line(text: str, key: str) -> int | None:
    """The line of an object key in a JSON text (the first occurrence)."""
    match = re.search(re.escape(json.dumps(key)) + r"\s*:", text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def read_screening(path: str | Path, buckets: Mapping[str, Bucket]
                   ) -> tuple[list[AnnotatedDialogue], list[int]]:
    """The training dialogues in file order and the positions of the graded ones: the
    dialogue(s) with `"graded": true`, else the last (as the original: `remaining: 0`)."""
    path = Path(path)
    document = read_json(path, SCREENING_WHAT)
    if not isinstance(document, dict) or not document:
        raise UserError("screening data must be an object of training dialogues", path, 1)
    text = read_text(path, SCREENING_WHAT)
    dialogues = []
    for name, dialogue in document.items():
        try:
            dialogues.append(annotated_dialogue(name, dialogue, buckets))
        except BadExpected as exc:
            raise UserError(f"training dialogue '{name}': {exc}", path,
                            _key_line(text, name)) from None
    graded = [i for i, d in enumerate(dialogues) if d.source.get("graded") is True] or [
        len(dialogues) - 1]
    for position in graded:
        if dialogues[position].pass_criteria is None:
            name = dialogues[position].name
            raise UserError(f"training dialogue '{name}' is graded but has no 'pass_criteria' "
                            "(the mistakes allowed on it)", path, _key_line(text, name))
    return dialogues, graded


def read_gold(path: str | Path, buckets: Mapping[str, Bucket]) -> list[AnnotatedDialogue]:
    """Gold dialogues, one unit each, in file order; every bad line is reported at once."""
    golds = []
    problems: list[UserError] = []
    for line, record in read_json_lines(path, GOLD_WHAT, problems):
        dialogues = record.get("data", [record]) if isinstance(record, dict) else [record]
        if not isinstance(dialogues, list):
            problems.append(UserError("'data' must be a list of dialogues", path, line))
            continue
        for number, dialogue in enumerate(dialogues):
            name = (dialogue.get("dialogue_id") if isinstance(dialogue, dict) else None) or (
                f"line {line} #{number + 1}")
            try:
                golds.append(annotated_dialogue(str(name), dialogue, buckets))
            except BadExpected as exc:
                problems.append(UserError(f"gold dialogue '{name}': {exc}", path, line))
    if problems:
        raise UserErrors(problems)
    if not golds:
        raise UserError("the gold file has no dialogues", path)
    return golds


def check_screening_file(path: str | Path, buckets: Mapping[str, Bucket]) -> int:
    """Returns the number of training dialogues."""
    return len(read_screening(path, buckets)[0])


def check_gold_file(path: str | Path, buckets: Mapping[str, Bucket]) -> int:
    """Returns the number of gold dialogues."""
    return len(read_gold(path, buckets))

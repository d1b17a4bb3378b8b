"""Task data JSONL and `<task>_units.json`: what to annotate and by how many workers."""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from collection_and_annotations.errors import UserError, UserErrors
from collection_and_annotations.json_files import read_json, read_json_lines, value_column

SPEAKERS = ("user", "system")
DATA_FILE = "task data file (mephisto.blueprint.data_jsonl)"
# Beyond these a units file is a typo (an extra zero or two), not a plan: refused at launch
# instead of creating rows for minutes. Documented in docs/configuration.md.
MAX_ANNOTATORS_PER_GROUP = 10_000
MAX_UNITS_PER_TASK = 1_000_000


def content_key(dialogues: list[dict[str, Any]]) -> str:
    """An assignment's key: a hash of its dialogues as the data file has them, so edited text
    between runs is new work and the old version is retired (migration 0002 computes the same
    for assignments stored before)."""
    return hashlib.sha256(json.dumps(dialogues, sort_keys=True).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class AssignmentSpec:
    """One data line: the dialogues a worker annotates together, and how many workers."""

    key: str  # content_key of the dialogues
    line: int
    dialogues: list[dict[str, Any]]
    annotators: int

    @property
    def groups(self) -> list[str]:
        return sorted({d["group_id"] for d in self.dialogues})

    @property
    def origin_workers(self) -> list[str]:
        return sorted({d["origin_worker_id"] for d in self.dialogues if d.get("origin_worker_id")})


class _Fault(Exception):
    """A problem with one value of a data line: the reason and where the value is (keys and
    indexes from the dialogue), so the error can name its column."""

    def __init__(self, reason: str, where: tuple[str | int, ...] = ()):
        super().__init__(reason)
        self.reason, self.where = reason, where


def _check_turns(turns: Any, field: str, where: str) -> None:
    if not isinstance(turns, list) or not turns:
        raise _Fault(f"{where}: '{field}' must be a non-empty list of [speaker, text]",
                     (field,) if turns is not None else ())
    for index, turn in enumerate(turns):
        if not isinstance(turn, list) or len(turn) < 2:
            raise _Fault(f"{where}: {field}[{index}] must be [\"user\"|\"system\", text]",
                         (field, index))
        if turn[0] not in SPEAKERS:
            raise _Fault(f"{where}: {field}[{index}] has the speaker {json.dumps(turn[0])}; a "
                         "speaker is \"user\" or \"system\"", (field, index, 0))
        if not isinstance(turn[1], str):
            raise _Fault(f"{where}: {field}[{index}]'s text must be a string", (field, index, 1))


def _check_dialogue(dialogue: Any, bucket_names: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(dialogue, dict):
        raise _Fault("a dialogue must be a JSON object")
    dialogue_id = dialogue.get("dialogue_id")
    if not isinstance(dialogue_id, str | int) or dialogue_id == "":
        raise _Fault("dialogue has no 'dialogue_id'",
                     ("dialogue_id",) if "dialogue_id" in dialogue else ())
    where = f"dialogue '{dialogue_id}'"
    tasks = dialogue.get("annotation_tasks")
    if not isinstance(tasks, list) or not tasks or not all(isinstance(t, str) for t in tasks):
        raise _Fault(f"{where}: 'annotation_tasks' must be a non-empty list of bucket names",
                     ("annotation_tasks",) if tasks is not None else ())
    for index, task in enumerate(tasks):
        if task not in bucket_names:
            raise _Fault(f"{where}: unknown bucket '{task}' in annotation_tasks (not in the "
                         "annotation buckets file)", ("annotation_tasks", index))
    _check_turns(dialogue.get("turns"), "turns", where)
    if "turns2" in dialogue:
        _check_turns(dialogue["turns2"], "turns2", where)
    group = dialogue.get("group_id", dialogue_id)
    return {**dialogue, "dialogue_id": str(dialogue_id), "group_id": str(group)}


def _dialogues(record: Any, bucket_names: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A line's checked dialogues: `{"data": [...]}` or one bare dialogue."""
    if not (isinstance(record, dict) and "data" in record):
        return [_check_dialogue(record, bucket_names)]
    raw = record["data"]
    if not isinstance(raw, list) or not raw:
        raise _Fault("'data' must be a non-empty list of dialogues", ("data",))
    checked = []
    for index, dialogue in enumerate(raw):
        try:
            checked.append(_check_dialogue(dialogue, bucket_names))
        except _Fault as fault:
            raise _Fault(fault.reason, ("data", index, *fault.where)) from None
    return checked


def _with_columns(path: Path, faults: list[tuple[int, _Fault]]) -> list[UserError]:
    """Each fault as an error naming its line and the column of the value at fault."""
    lines = {line for line, _ in faults}
    texts: dict[int, str] = {}
    with path.open(encoding="utf-8-sig", errors="replace") as handle:
        for number, text in enumerate(handle, start=1):
            if number in lines:
                texts[number] = text
    errors = []
    for line, fault in faults:
        column = value_column(texts.get(line, ""), fault.where)
        at = f"column {column}: " if column is not None else ""
        errors.append(UserError(f"{at}{fault.reason}", path, line))
    return errors


class _SharedIds:
    """Dialogues that share a `dialogue_id` across lines. The original's own data does this on
    purpose (likert_turn.jsonl: one dialogue in eight groups, each asking another bucket), so
    it is allowed; other text under the same id is refused (exports and analysis know a
    dialogue by its id), and the same bucket asked of one dialogue in two groups is warned
    about (a worker may be given it once per group)."""

    def __init__(self, path: Path):
        self.path = path
        self.first: dict[str, tuple[int, dict[str, Any]]] = {}  # id -> its first line, itself
        self.asked: dict[tuple[str, str], tuple[str, int]] = {}  # (id, bucket) -> group, line

    def add(self, dialogue: dict[str, Any], line: int) -> None:
        dialogue_id, group = dialogue["dialogue_id"], dialogue["group_id"]
        first_line, first = self.first.setdefault(dialogue_id, (line, dialogue))
        if first is not dialogue and _text_of(first) != _text_of(dialogue):
            raise UserError(f"dialogue '{dialogue_id}' is not the dialogue of the same id on "
                            f"line {first_line}: one dialogue_id must name one dialogue "
                            "(exports and analysis know a dialogue by its id); give one of "
                            "them another id", self.path, line)
        for bucket in dialogue["annotation_tasks"]:
            asked_group, asked_line = self.asked.setdefault((dialogue_id, bucket), (group, line))
            if asked_group != group:
                warnings.warn(f"{self.path}:{line}: dialogue '{dialogue_id}' is asked "
                              f"'{bucket}' in group '{group}' and, on line {asked_line}, in "
                              f"group '{asked_group}': a worker may be given it in each "
                              "group and answer it twice; ask each bucket of a dialogue in one "
                              "group", stacklevel=4)
                self.asked[(dialogue_id, bucket)] = (group, line)  # warned once per pair


def _text_of(dialogue: dict[str, Any]) -> str:
    """What a dialogue is, apart from where it is served and what is asked of it."""
    return json.dumps({k: v for k, v in dialogue.items()
                       if k not in ("group_id", "annotation_tasks")}, sort_keys=True)


def _find_units_file(data_path: Path, task_name: str, explicit: str | None) -> Path | None:
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise UserError("units file not found (mephisto.blueprint.units_path)", path)
        return path
    candidates = list(dict.fromkeys(data_path.with_name(f"{stem}_units.json")
                                    for stem in (task_name, data_path.stem)))
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    warnings.warn(f"no units file for {data_path} (looked for {' and '.join(map(str, candidates))}"
                  "): every group gets one annotator; set mephisto.blueprint.units_path to name "
                  "the file", stacklevel=3)
    return None


def _load_units(path: Path) -> dict[str, int]:
    units = read_json(path, "units file")
    if not isinstance(units, dict):
        raise UserError("a units file maps group_id to a number of annotators", path)
    for group, count in units.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise UserError(f"group '{group}': the number of annotators must be a whole "
                            "number >= 0", path)
        if count > MAX_ANNOTATORS_PER_GROUP:
            raise UserError(f"group '{group}' asks for {count:,} annotators; at most "
                            f"{MAX_ANNOTATORS_PER_GROUP:,} per group are allowed: fix the number",
                            path)
    return units


def read_task_data(
    data_path: str | Path,
    bucket_names: Mapping[str, Any],
    task_name: str,
    units_path: str | None = None,
) -> tuple[list[AssignmentSpec], Path | None]:
    """Parse and check every line; returns the assignments and the units file used (if any)."""
    data_path = Path(data_path)
    if not data_path.is_file():
        raise UserError(f"{DATA_FILE} not found", data_path)
    units_file = _find_units_file(data_path, task_name, units_path)
    units = _load_units(units_file) if units_file else None
    specs: list[AssignmentSpec] = []
    seen: dict[tuple[Any, ...], int] = {}
    shared_ids = _SharedIds(data_path)
    problems: list[UserError] = []  # every bad line is reported, not only the first
    faults: list[tuple[int, _Fault]] = []
    for line_number, record in read_json_lines(
            data_path, DATA_FILE, problems):
        try:
            dialogues = _dialogues(record, bucket_names)
        except _Fault as fault:
            faults.append((line_number, fault))
            continue
        try:
            annotators = _annotators(dialogues, units, units_file, data_path, line_number)
            identity = tuple((d["dialogue_id"], d["group_id"], tuple(d["annotation_tasks"]))
                             for d in dialogues)
            if identity in seen:
                raise UserError("the same dialogues and tasks already appear on line "
                                f"{seen[identity]}", data_path, line_number)
            seen[identity] = line_number
            for dialogue in dialogues:
                shared_ids.add(dialogue, line_number)
        except UserError as exc:
            problems.append(exc)
            continue
        specs.append(AssignmentSpec(content_key(dialogues), line_number, dialogues,
                                    annotators))
    problems += _with_columns(data_path, faults)
    if problems:
        problems.sort(key=lambda error: (error.path != str(data_path), error.line or 0))
        raise UserErrors(problems)
    if not specs:
        raise UserError("the task data file holds no dialogues", data_path)
    total = sum(spec.annotators for spec in specs)
    if total > MAX_UNITS_PER_TASK:
        raise UserError(f"the task would have {total:,} units (data lines x annotators); at "
                        f"most {MAX_UNITS_PER_TASK:,} are allowed: lower the numbers in the "
                        "units file or split the data", units_file or data_path)
    return specs, units_file


def _annotators(
    dialogues: list[dict[str, Any]],
    units: dict[str, int] | None,
    units_file: Path | None,
    data_path: Path,
    line: int,
) -> int:
    if units is None:
        return 1
    counts = {}
    for dialogue in dialogues:
        group = dialogue["group_id"]
        if group not in units:
            raise UserError(f"group '{group}' (line {line} of {data_path.name}) is missing from "
                            "the units file; add it with its number of annotators", units_file)
        counts[group] = units[group]
    if len(set(counts.values())) > 1:
        raise UserError(f"dialogues on one line need the same number of annotators, got {counts}",
                        data_path, line)
    return next(iter(counts.values()))

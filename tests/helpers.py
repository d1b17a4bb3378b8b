"""Write small task folders (conf, data, units) for tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from collection_and_annotations import PACKAGE_DIR

BUCKETS = PACKAGE_DIR / "task_config" / "annotation_buckets.json"


def dialogue(dialogue_id: str, group: str, tasks: list[str], origin: str | None = None,
             turns: int = 4) -> dict[str, Any]:
    record: dict[str, Any] = {
        "dialogue_id": dialogue_id, "group_id": group, "annotation_tasks": tasks,
        "turns": [["user" if i % 2 == 0 else "system", f"turn {i} of a dialogue"]
                  for i in range(turns)],
    }
    if origin:
        record["origin_worker_id"] = origin
    return record


def write_task(folder: Path, lines: list[Any], units: dict[str, int] | None, *,
               task_name: str = "t", task: dict[str, Any] | None = None,
               raw_lines: list[str] | None = None, port: int = 3999) -> Path:
    """A conf in `folder` whose data/units files sit beside it; returns the conf path."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"{task_name}.jsonl"
    text = raw_lines if raw_lines is not None else [json.dumps(line) for line in lines]
    data.write_text("\n".join(text) + "\n")
    if units is not None:
        (folder / f"{task_name}_units.json").write_text(json.dumps(units))
    task_keys = {"task_name": task_name, "task_title": "Test task",
                 "assignment_duration_in_seconds": 600, **(task or {})}
    conf = folder / f"{task_name}.yaml"
    task_yaml = "\n".join(f"    {k}: {json.dumps(v)}" for k, v in task_keys.items())
    conf.write_text(
        "#@package _global_\n"
        "defaults:\n  - /mephisto/blueprint: static_annotation\n"
        f"mephisto:\n  architect:\n    hostname: 127.0.0.1\n    port: {port}\n"
        f"  blueprint:\n    data_jsonl: {data}\n    annotations_config_path: {BUCKETS}\n"
        f"  task:\n{task_yaml}\n"
    )
    return conf

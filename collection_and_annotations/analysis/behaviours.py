"""Behaviour labels derived from raw answers, declared as data (`behaviours.json`).

A behaviour belongs to one bucket and holds for an annotated turn when any of its conditions
holds on that turn's answers: `{"value": V}` (a multiselect value chosen) or
`{"question": Q, "answer": A}` (answer A chosen for question Q anywhere in a question tree; for
a checkbox question, A among the ticked answers). Users add or replace entries with their own
file of the same shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_FILE = Path(__file__).with_name("behaviours.json")


class BehaviourFileError(ValueError):
    pass


@dataclass(frozen=True)
class Behaviour:
    label: str
    bucket: str
    values: frozenset[str]  # multiselect values
    answers: frozenset[tuple[str, str]]  # (question, answer) pairs

    def holds(self, chosen_values: Iterable[str],
              chosen_answers: Iterable[tuple[str, str]]) -> bool:
        return not (self.values.isdisjoint(chosen_values)
                    and self.answers.isdisjoint(chosen_answers))


def _parse(data: Any, origin: str) -> list[Behaviour]:
    entries = data.get("behaviours") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise BehaviourFileError(f"{origin}: expected an object with a 'behaviours' list")
    parsed = []
    for number, entry in enumerate(entries, 1):
        where = f"{origin}: behaviour {number}"
        if not isinstance(entry, dict) or not all(
                isinstance(entry.get(k), str) for k in ("label", "bucket")):
            raise BehaviourFileError(f"{where}: needs string 'label' and 'bucket'")
        conditions = entry.get("any")
        if not isinstance(conditions, list) or not conditions:
            raise BehaviourFileError(f"{where} ({entry['label']}): 'any' must list conditions")
        values, answers = set(), set()
        for condition in conditions:
            if isinstance(condition, dict) and isinstance(condition.get("value"), str):
                values.add(condition["value"])
            elif isinstance(condition, dict) and all(
                    isinstance(condition.get(k), str) for k in ("question", "answer")):
                answers.add((condition["question"], condition["answer"]))
            else:
                raise BehaviourFileError(
                    f"{where} ({entry['label']}): a condition is {{'value': V}} or "
                    f"{{'question': Q, 'answer': A}}, got {condition!r}")
        parsed.append(Behaviour(entry["label"], entry["bucket"], frozenset(values),
                                frozenset(answers)))
    return parsed


def load_behaviours(extra: Path | None = None) -> list[Behaviour]:
    """The shipped mapping, with the entries of `extra` added (same bucket and label:
    replaced)."""
    behaviours = _parse(json.loads(DEFAULT_FILE.read_text(encoding="utf-8")), DEFAULT_FILE.name)
    if extra is not None:
        try:
            data = json.loads(Path(extra).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise BehaviourFileError(f"{extra}: {exc}") from None
        merged = {(b.bucket, b.label): b for b in behaviours}
        for behaviour in _parse(data, str(extra)):
            merged[(behaviour.bucket, behaviour.label)] = behaviour
        behaviours = list(merged.values())
    return behaviours


def as_data(behaviours: list[Behaviour]) -> list[dict[str, Any]]:
    """The mapping as JSON (for the signature)."""
    return [
        {"label": b.label, "bucket": b.bucket,
         "any": [{"value": v} for v in sorted(b.values)]
         + [{"question": q, "answer": a} for q, a in sorted(b.answers)]}
        for b in behaviours
    ]

"""Named `_dep_` conditions: a question is shown only when its condition holds.

The worker page has the same registry (frontend/src/dependencies.ts); keep the two in step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from collection_and_annotations.errors import UserError

# (args, sibling answers at the question's level, speaker of the turn) -> shown?
Dependency = Callable[[Any, Mapping[str, Any], str | None], bool]


def _answered(args: Mapping[str, Any], siblings: Mapping[str, Any], _speaker: str | None) -> bool:
    chosen = siblings.get(args["question"])
    if not isinstance(chosen, dict) or not chosen:
        return False
    return "answer" not in args or args["answer"] in chosen


def _not_answered(
    args: Mapping[str, Any], siblings: Mapping[str, Any], speaker: str | None
) -> bool:
    return not _answered(args, siblings, speaker)


def _speaker(args: Any, _siblings: Mapping[str, Any], speaker: str | None) -> bool:
    return speaker == args


DEPENDENCIES: dict[str, Dependency] = {
    "answered": _answered,
    "not_answered": _not_answered,
    "speaker": _speaker,
}


def check_dependency(spec: Any, where: str, path: Path) -> None:
    """Fail at launch on an unknown function or malformed arguments."""
    if not isinstance(spec, dict) or len(spec) != 1:
        raise UserError(f"{where} must be one {{\"function\": args}} pair; functions: "
                        f"{', '.join(DEPENDENCIES)}", path)
    (name, args), = spec.items()
    if name not in DEPENDENCIES:
        raise UserError(f"{where}: unknown function '{name}' (known: "
                        f"{', '.join(DEPENDENCIES)})", path)
    if name == "speaker":
        if args not in ("user", "system"):
            raise UserError(f"{where}: 'speaker' takes \"user\" or \"system\"", path)
    elif not isinstance(args, dict) or not isinstance(args.get("question"), str):
        raise UserError(f"{where}: '{name}' takes {{\"question\": ..., \"answer\": ...}}", path)


def is_shown(answers: Mapping[str, Any], siblings: Mapping[str, Any], speaker: str | None) -> bool:
    """Whether a question whose answer object is `answers` is shown, given its siblings' values."""
    spec = answers.get("_dep_")
    if spec is None:
        return True
    (name, args), = spec.items()
    return DEPENDENCIES[name](args, siblings, speaker)

"""Read the JSON and JSONL files users hand us; errors name the file, the line and the key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from collection_and_annotations.errors import UserError


def _require_file(path: Path, what: str) -> None:
    if not path.is_file():
        raise UserError(f"{what} not found", path)


def read_json(path: str | Path, what: str) -> Any:
    """The parsed document; `what` names the file and its conf key in the error."""
    path = Path(path)
    _require_file(path, what)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"invalid JSON at column {exc.colno}: {exc.msg}", path,
                        exc.lineno) from None


def read_json_lines(path: str | Path, what: str) -> Iterator[tuple[int, Any]]:
    """(line number, record) for every non-blank line."""
    path = Path(path)
    _require_file(path, what)
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                yield number, json.loads(text)
            except json.JSONDecodeError as exc:
                raise UserError(f"malformed JSON at column {exc.colno}: {exc.msg}", path,
                                number) from None

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


def _not_utf8(path: Path, exc: UnicodeDecodeError, line: int, before: bytes) -> UserError:
    """Where the undecodable byte is: line, column and the byte, and how to fix it."""
    start = before.rfind(b"\n", 0, exc.start) + 1
    return UserError(f"not UTF-8: byte 0x{exc.object[exc.start]:02x} at column "
                     f"{exc.start - start + 1} cannot be decoded; save the file as UTF-8",
                     path, line + before.count(b"\n", 0, exc.start))


def read_text(path: str | Path, what: str) -> str:
    """The file's text, which must be UTF-8 (a leading byte-order mark is dropped)."""
    path = Path(path)
    _require_file(path, what)
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc, 1, raw) from None


def read_json(path: str | Path, what: str) -> Any:
    """The parsed document; `what` names the file and its conf key in the error."""
    path = Path(path)
    text = read_text(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"invalid JSON at column {exc.colno}: {exc.msg}", path,
                        exc.lineno) from None


def read_json_lines(path: str | Path, what: str) -> Iterator[tuple[int, Any]]:
    """(line number, record) for every non-blank line."""
    path = Path(path)
    _require_file(path, what)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise _not_utf8(path, exc, number, raw) from None
            if not text.strip():
                continue
            try:
                yield number, json.loads(text)
            except json.JSONDecodeError as exc:
                raise UserError(f"malformed JSON at column {exc.colno}: {exc.msg}", path,
                                number) from None

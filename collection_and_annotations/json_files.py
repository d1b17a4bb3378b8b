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


def read_json_lines(path: str | Path, what: str,
                    problems: list[UserError] | None = None) -> Iterator[tuple[int, Any]]:
    """(line number, record) for every non-blank line. A line that is not UTF-8 JSON raises,
    or, with `problems`, is added there and skipped, so every bad line can be reported."""
    path = Path(path)
    _require_file(path, what)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                _report(_not_utf8(path, exc, number, raw), problems)
                continue
            if not text.strip():
                continue
            text = text.rstrip("\r\n")  # an error at the end is at the line's last column
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                _report(_malformed(exc, text, path, number), problems)
                continue
            yield number, record


def _malformed(exc: json.JSONDecodeError, text: str, path: Path, line: int) -> UserError:
    if exc.pos >= len(text.rstrip()):
        return UserError(f"malformed JSON at column {exc.pos + 1}: the line ends before its "
                         "JSON value does (each record must be on one line)", path, line)
    return UserError(f"malformed JSON at column {exc.colno}: {exc.msg}", path, line)


def _report(error: UserError, problems: list[UserError] | None) -> None:
    if problems is None:
        raise error
    problems.append(error)


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def value_column(text: str, where: tuple[str | int, ...]) -> int | None:
    """The 1-based column (in characters) where the value at `where` (keys and list indexes)
    starts in one line of JSON; None when the line has no such value."""
    decoder = json.JSONDecoder()
    at = _skip_space(text, 0)
    try:
        for step in where:
            opening = text[at]
            if opening not in "{[" or isinstance(step, int) != (opening == "["):
                return None
            at, index = _skip_space(text, at + 1), 0
            while text[at] not in "}]":
                if opening == "{":
                    key, at = json.decoder.scanstring(text, at + 1)
                    at = _skip_space(text, _skip_space(text, at) + 1)  # past the colon
                else:
                    key, index = index, index + 1
                if key == step:
                    break
                at = _skip_space(text, decoder.raw_decode(text, at)[1])
                at = _skip_space(text, at + 1) if text[at] == "," else at
            else:
                return None
    except (IndexError, ValueError):
        return None
    return at + 1

"""Strict reading of the JSON bodies workers send, before anything reaches the database.

Python's json accepts NaN/Infinity, lone surrogates, NUL characters, integers of any size
and any nesting depth the stack allows; PostgreSQL refuses some of these, browsers cannot read
back others (a JavaScript number holds integers exactly up to 2^53), statistics over a huge
integer overflow, and deep nesting ends in a RecursionError. So a body is refused with 400
when it is not strict JSON (RFC 8259, UTF-8) and with 422 when it is JSON we do not store; the
message names the place.
"""

from __future__ import annotations

import json
import math
from typing import Any

from collection_and_annotations.engine.work import WorkRefused

MAX_DEPTH = 32
MAX_INTEGER = 2**53 - 1  # JavaScript's Number.MAX_SAFE_INTEGER
_TOO_LARGE = (f"integers must be between -{MAX_INTEGER} and {MAX_INTEGER} (send a larger "
              "number as a string)")
_PATH_PART_CHARS = 40


class InvalidJson(WorkRefused):
    """A body we refuse; `status` is 400 (not strict JSON) or 422 (JSON we do not store)."""


def parse_json_object(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object, checked all the way down (see `check_value`)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidJson(f"the request body is not UTF-8 (byte {exc.start})", 400) from None
    try:
        value = json.loads(text, parse_constant=float)  # reported with its place below
    except json.JSONDecodeError as exc:
        raise InvalidJson(f"the request body is not valid JSON at line {exc.lineno} column "
                          f"{exc.colno}: {exc.msg}", 400) from None
    except RecursionError:
        raise InvalidJson(f"the request body nests deeper than {MAX_DEPTH} levels", 422) from None
    except ValueError:  # an integer past Python's digit limit for reading numbers
        raise InvalidJson(f"the request body holds a number with thousands of digits: "
                          f"{_TOO_LARGE}", 422) from None
    if not isinstance(value, dict):
        raise InvalidJson("the request body must be a JSON object", 400)
    check_value(value)
    return value


def check_value(value: Any, trail: tuple[str | int, ...] = (), depth: int = 0) -> None:
    """Refuse non-finite numbers, integers beyond MAX_INTEGER, lone surrogates and NUL in
    strings and keys, deep nesting.

    `trail` is the keys and indices down to `value`; it is spelled out only for a message, so a
    body that passes costs no string building."""
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidJson(f"{_where(trail)}: numbers must be finite (NaN, Infinity and numbers "
                          "beyond 1e308 are not JSON numbers)", 400)
    if isinstance(value, int) and not -MAX_INTEGER <= value <= MAX_INTEGER:
        raise InvalidJson(f"{_where(trail)}: {_TOO_LARGE}", 422)
    if isinstance(value, str):
        _check_text(value, trail)
    elif isinstance(value, dict | list):
        if depth >= MAX_DEPTH:
            raise InvalidJson(f"{_where(trail)}: nested deeper than {MAX_DEPTH} levels", 422)
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(key, str):
                _check_text(key, trail, is_key=True)
            check_value(item, (*trail, key), depth + 1)


def _where(trail: tuple[str | int, ...], is_key: bool = False) -> str:
    """`a.b[0].c` for the keys and indices in `trail` (and the key there, `is_key`)."""
    path = ""
    for part in trail:
        if isinstance(part, str):
            path = f"{path}.{_shown(part)}" if path else _shown(part)
        else:
            path = f"{path}[{part}]"
    if is_key:
        return f"{path}: key" if path else "key"
    return path or "the request body"


def _check_text(text: str, trail: tuple[str | int, ...], is_key: bool = False) -> None:
    if "\x00" in text:
        raise InvalidJson(f"{_where(trail, is_key)}: text must not contain NUL characters "
                          "(\\u0000)", 422)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidJson(f"{_where(trail, is_key)}: text holds a lone surrogate "
                          f"(\\u{ord(text[exc.start]):04x}); send whole characters", 422) from None


def _shown(key: str) -> str:
    """A key as it can be printed in a message (no surrogates, not too long)."""
    safe = key.encode("utf-8", "replace").decode("utf-8")
    return safe if len(safe) <= _PATH_PART_CHARS else safe[:_PATH_PART_CHARS] + "..."

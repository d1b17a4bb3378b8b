"""Write exported records as JSONL or CSV (lists and objects JSON-encoded in CSV cells)."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TextIO

from collection_and_annotations.blueprints.static_annotation.export_rows import OPTION_COLUMNS
from collection_and_annotations.blueprints.static_annotation.question_texts import (
    task_option_columns,
)
from collection_and_annotations.export.submissions import (
    ITEM_FIELDS,
    answered_items,
    task_definitions,
)
from collection_and_annotations.storage.database import Database

# What an export holds and how it is written; the CLI and the requester API name them their way.
EXPORT_KINDS = ("submissions", "items-jsonl", "items-csv")


def json_safe(value: Any) -> Any:
    """`value` as strict JSON can hold it: NaN/Infinity -> null, lone surrogates -> U+FFFD.

    Rows stored before the worker API refused them may hold both; one such row must not stop
    (or corrupt) a whole export.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return _whole_characters(value)
    if isinstance(value, dict):
        return {_whole_characters(str(k)): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def _whole_characters(text: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:  # pairs written as two code points are joined, lone ones replaced
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def write_jsonl(records: Iterable[dict[str, Any]], out: TextIO) -> int:
    count = 0
    for record in records:
        out.write(json.dumps(json_safe(record), ensure_ascii=False, allow_nan=False) + "\n")
        count += 1
    return count


# A cell a spreadsheet would read as a formula starts with one of these (OWASP's list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_text(text: str) -> str:
    """`text` as a CSV cell a spreadsheet shows as text, never runs: a leading `'` before a
    formula start (spreadsheets hide it; remove it to get the raw value back)."""
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


def write_csv(records: Iterable[dict[str, Any]], fields: Sequence[str], out: TextIO,
              option_columns: Sequence[str] = ()) -> int:
    """One line per record; lists and objects as JSON cells. A row's set of options goes into
    its 0/1 `option_columns` (its answer cell left empty) when they are all in the header."""
    writer = csv.DictWriter(out, fieldnames=[*fields, *option_columns])
    writer.writeheader()
    known = set(option_columns)
    count = 0
    for record in records:
        ticked = record.pop(OPTION_COLUMNS, None)
        if ticked is not None and ticked.keys() <= known:
            record = {**record, "answer": None, **ticked}
        writer.writerow({
            k: json.dumps(v, ensure_ascii=False, allow_nan=False) if isinstance(v, list | dict)
            else v
            for k, v in json_safe(record).items()
        })
        count += 1
    return count


def _without_option_columns(rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for row in rows:
        row.pop(OPTION_COLUMNS, None)  # JSONL keeps the answer's list
        yield row


def write_export(
    submissions: Iterable[tuple[dict[str, Any], dict[str, Any]]], kind: str, out: TextIO,
    option_columns: Sequence[str] = (),
) -> int:
    """Whole submissions as JSONL, or one row per answered item as JSONL or CSV; returns the
    number of records written. `submissions` as `whole_submissions` yields them;
    `option_columns`: the CSV's 0/1 column per option (`csv_option_columns`)."""
    if kind == "submissions":
        return write_jsonl((record for record, _ in submissions), out)
    items: Iterator[dict[str, Any]] = (
        item for record, buckets in submissions for item in answered_items(record, buckets)
    )
    if kind == "items-jsonl":
        return write_jsonl(_without_option_columns(items), out)
    if kind == "items-csv":
        return write_csv(items, ITEM_FIELDS, out, option_columns)
    raise ValueError(f"unknown export kind {kind!r}; one of {', '.join(EXPORT_KINDS)}")


def csv_option_columns(db: Database, task_name: str) -> list[str]:
    """The 0/1 option columns of a task's CSV export, from the buckets of all its runs."""
    buckets, names = task_definitions(db, task_name)
    return task_option_columns(buckets, names)

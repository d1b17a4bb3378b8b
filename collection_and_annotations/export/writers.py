"""Write exported records as JSONL or CSV (lists and objects JSON-encoded in CSV cells)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from typing import Any, TextIO


def write_jsonl(records: Iterable[dict[str, Any]], out: TextIO) -> int:
    count = 0
    for record in records:
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
    return count


def write_csv(records: Iterable[dict[str, Any]], fields: Sequence[str], out: TextIO) -> int:
    writer = csv.DictWriter(out, fieldnames=list(fields))
    writer.writeheader()
    count = 0
    for record in records:
        writer.writerow({
            k: json.dumps(v, ensure_ascii=False) if isinstance(v, list | dict) else v
            for k, v in record.items()
        })
        count += 1
    return count

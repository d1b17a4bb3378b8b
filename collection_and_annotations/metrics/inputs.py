"""Reading metric inputs into segments, with errors that name the file and line.

Accepted records, one JSON object per line:

- a prediction: `{"id": ..., "hypothesis": "...", "references": ["...", ...], "tags": {...}}`;
- a task-data line `{"data": [dialogue, ...]}`, or a bare dialogue object.

A dialogue contributes one segment per `system` turn (and per `system` turn of `turns2` in a
comparative item). Turns are `[speaker, text, *extras]` or `{"speaker": ..., "text": ..., ...}`;
the extra fields a turn may carry are `timestamp`, `references`, `state`, `gold_state`,
`delays`, `source_length` and `reference_length`.
"""

from __future__ import annotations

import json
from collections import ChainMap
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tqdm import tqdm

from collection_and_annotations.metrics.base import MetricError

SPEAKERS = ("user", "system")
_SCALAR = (str, int, float, bool)
_MAX_LISTED = 20
_PROGRESS_BYTES = 1 << 20


class InputError(MetricError):
    """The input cannot be read; the message lists the offending lines."""


class _BadRecord(Exception):
    """One record is malformed (the reason, without the location)."""


@dataclass
class Segments:
    """Every scored response of an input, column by column, in input order."""

    source: str
    texts: list[str] = field(default_factory=list)
    references: list[list[str]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    records: list[Mapping[str, Any]] = field(default_factory=list)
    """The record each segment came from, where its tags are looked up."""
    fields: list[Mapping[str, Any]] = field(default_factory=list)
    """The segment's own extra fields (the prediction record, or the turn's)."""
    latencies: list[float | None] = field(default_factory=list)
    """Seconds from the preceding user turn, when both turns carry timestamps."""

    def __len__(self) -> int:
        return len(self.texts)

    def where(self, index: int) -> str:
        """`file, line N` for error messages about segment `index`."""
        return f"{self.source}, line {self.lines[index]}"

    def append(
        self,
        text: str,
        references: list[str],
        line: int,
        record: Mapping[str, Any],
        extra: Mapping[str, Any],
        latency: float | None,
    ) -> None:
        self.texts.append(text)
        self.references.append(references)
        self.lines.append(line)
        self.records.append(record)
        self.fields.append(extra)
        self.latencies.append(latency)

    def truncate(self, size: int) -> None:
        """Drop the segments after the first `size` (those of a record found malformed)."""
        columns = (self.texts, self.references, self.lines, self.records, self.fields)
        for column in (*columns, self.latencies):
            del column[size:]


def tag_values(record: Mapping[str, Any], key: str) -> tuple[str, ...]:
    """The values of tag `key` for a record: from its `tags` object, else from the record.

    A list gives several values (a dialogue in several annotation tasks belongs to each);
    a missing key or null gives none.
    """
    tags = record.get("tags")
    value = tags[key] if isinstance(tags, Mapping) and key in tags else record.get(key)
    if value is None:
        return ()
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value if v is not None)
    return (str(value),)


def declared_tag_keys(segments: Segments) -> list[str]:
    """The keys of the `tags` objects found in the records, in first-seen order."""
    keys: dict[str, None] = {}
    seen: set[int] = set()
    for record in segments.records:
        if id(record) in seen:
            continue
        seen.add(id(record))
        tags = record.get("tags")
        if isinstance(tags, Mapping):
            keys.update(dict.fromkeys(tags))
    return list(keys)


def read_jsonl(
    path: Path,
    *,
    skip_invalid: bool = False,
    warn: Callable[[str], None] | None = None,
    progress: bool = False,
) -> Segments:
    """Read a JSONL file of predictions and/or dialogues in one pass.

    Malformed lines are collected and reported together with their line numbers; with
    `skip_invalid` they are left out and reported through `warn` instead.
    """
    try:
        size = path.stat().st_size
        handle = path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    bar = tqdm(
        total=size,
        unit="B",
        unit_scale=True,
        desc=f"reading {path.name}",
        disable=True if not progress or size < _PROGRESS_BYTES else None,  # None: on a terminal
        leave=False,
    )
    with handle, bar:
        return _collect(_json_lines(handle, bar), str(path), skip_invalid, warn)


def segments_from_records(
    records: Iterable[Mapping[str, Any]], source: str = "<records>"
) -> Segments:
    """Build segments from records already in memory (line numbers count records from 1)."""
    return _collect(enumerate(records, start=1), source, skip_invalid=False, warn=None)


def _json_lines(handle: Any, bar: tqdm) -> Iterator[tuple[int, Any]]:
    for line_no, raw in enumerate(handle, start=1):
        bar.update(len(raw))
        if not raw.strip():
            continue
        try:
            yield line_no, json.loads(raw)
        except UnicodeDecodeError as exc:
            yield line_no, _BadRecord(f"not UTF-8 text ({exc.reason} at byte {exc.start})")
        except json.JSONDecodeError as exc:
            yield line_no, _BadRecord(f"invalid JSON ({exc.msg} at column {exc.colno})")


def _collect(
    numbered: Iterable[tuple[int, Any]],
    source: str,
    skip_invalid: bool,
    warn: Callable[[str], None] | None,
) -> Segments:
    segments = Segments(source)
    problems: list[str] = []
    for line, record in numbered:
        size = len(segments)
        try:
            if isinstance(record, _BadRecord):
                raise record
            _add_record(segments, record, line)
        except _BadRecord as exc:
            segments.truncate(size)  # a line counts whole or not at all
            problems.append(f"line {line}: {exc}")
    if problems:
        listing = "\n  ".join(problems[:_MAX_LISTED])
        more = len(problems) - _MAX_LISTED
        if more > 0:
            listing += f"\n  ... and {more} more"
        message = f"{source}: {len(problems)} malformed record(s):\n  {listing}"
        if not skip_invalid:
            raise InputError(f"{message}\nFix them, or leave them out with --skip-invalid.")
        if warn is not None:
            warn(f"{message}\nThese records were left out.")
    return segments


def _add_record(segments: Segments, record: Any, line: int) -> None:
    if not isinstance(record, Mapping):
        raise _BadRecord(f"expected a JSON object, got {_type(record)}")
    if "hypothesis" in record:
        _add_prediction(segments, record, line)
    elif "data" in record:
        dialogues = record["data"]
        if not isinstance(dialogues, list):
            raise _BadRecord(f"'data' must be a list of dialogues, got {_type(dialogues)}")
        for position, dialogue in enumerate(dialogues):
            if not isinstance(dialogue, Mapping):
                raise _BadRecord(f"data[{position}] must be a dialogue object")
            _add_dialogue(segments, dialogue, line, f"data[{position}]")
    elif "turns" in record:
        _add_dialogue(segments, record, line, "dialogue")
    else:
        raise _BadRecord(
            "not a prediction (needs 'hypothesis'), a dialogue (needs 'turns') "
            "or a task-data line (needs 'data')"
        )


def _add_prediction(segments: Segments, record: Mapping[str, Any], line: int) -> None:
    hypothesis = record["hypothesis"]
    if not isinstance(hypothesis, str):
        raise _BadRecord(f"'hypothesis' must be a string, got {_type(hypothesis)}")
    _check_tags(record.get("tags"))
    latency = record.get("latency")
    if latency is not None and (not _is_number(latency) or latency < 0):
        raise _BadRecord(f"'latency' must be a number of seconds >= 0, got {latency!r}")
    references = _references(record.get("references"))
    segments.append(hypothesis, references, line, record, record, latency)


def _add_dialogue(segments: Segments, dialogue: Mapping[str, Any], line: int, where: str) -> None:
    name = f"{where} {dialogue['dialogue_id']!r}" if "dialogue_id" in dialogue else where
    _check_tags(dialogue.get("tags"))
    sides = ("turns", "turns2") if "turns2" in dialogue else ("turns",)
    for side, key in enumerate(sides, start=1):
        turns = dialogue.get(key)
        if not isinstance(turns, list):
            raise _BadRecord(f"{name}: '{key}' must be a list of turns, got {_type(turns)}")
        tags = ChainMap({"side": str(side)}, dialogue) if len(sides) > 1 else dialogue
        _add_turns(segments, turns, line, tags, f"{name}, {key}")


def _add_turns(
    segments: Segments,
    turns: list[Any],
    line: int,
    tags: Mapping[str, Any],
    where: str,
) -> None:
    previous_speaker, previous_time = None, None
    for index, turn in enumerate(turns):
        try:
            speaker, text, extra = _turn(turn)
            time = _timestamp(extra["timestamp"]) if "timestamp" in extra else None
            if speaker == "system":
                latency = None
                if previous_speaker == "user" and previous_time is not None and time is not None:
                    latency = time - previous_time
                    if latency < 0:
                        raise _BadRecord(
                            f"timestamp is {-latency:.3f} s earlier than the user turn before it"
                        )
                references = _references(extra.get("references"))
                segments.append(text, references, line, tags, extra, latency)
        except _BadRecord as exc:
            raise _BadRecord(f"{where}[{index}]: {exc}") from None
        previous_speaker, previous_time = speaker, time


def _turn(turn: Any) -> tuple[str, str, Mapping[str, Any]]:
    """Speaker, text and extra fields of a list-shaped or object-shaped turn."""
    if isinstance(turn, Mapping):
        speaker, text, extra = turn.get("speaker"), turn.get("text"), turn
    elif isinstance(turn, list) and len(turn) >= 2:
        speaker, text = turn[0], turn[1]
        dicts = [element for element in turn[2:] if isinstance(element, Mapping)]
        extra = dicts[0] if len(dicts) == 1 else dict(ChainMap(*reversed(dicts)))
    else:
        raise _BadRecord(
            'a turn is [speaker, text, ...] or {"speaker": ..., "text": ...}, '
            f"got {json.dumps(turn)[:80]}"
        )
    if speaker not in SPEAKERS:
        raise _BadRecord(f"speaker must be 'user' or 'system', got {speaker!r}")
    if not isinstance(text, str):
        raise _BadRecord(f"text must be a string, got {_type(text)}")
    return speaker, text, extra


def _timestamp(value: Any) -> float:
    """Seconds since the epoch from a number or an ISO 8601 string (naive times are UTC)."""
    if _is_number(value):
        return float(value)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            return moment.timestamp()
    raise _BadRecord(f"timestamp must be seconds (a number) or an ISO 8601 string, got {value!r}")


def _references(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _BadRecord(f"'references' must be a list of strings, got {json.dumps(value)[:80]}")
    return value


def _check_tags(tags: Any) -> None:
    if tags is None:
        return
    if not isinstance(tags, Mapping):
        raise _BadRecord(f"'tags' must be an object, got {_type(tags)}")
    for key, value in tags.items():
        values = value if isinstance(value, list) else [value]
        if not all(v is None or isinstance(v, _SCALAR) for v in values):
            raise _BadRecord(
                f"tag {key!r} must be a string, number or list of them, got {_type(value)}"
            )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__

"""Answers as tidy tables: annotated turns, ratings, comparisons, units.

Records are whole submissions as `export.submissions.whole_submissions` yields them (from the
database) or as `export --format submissions` wrote them (a file, read with the bucket
definitions), so an analysis reproduces without the database. Rows come from
`answered_items`, the export's own reading of a submission. Other sources join by calling the
`Tables.add_*` methods with the same fields. Every row keeps its unit, so `Tables.without` can
leave out units (rejected or flagged work, disqualified workers); screening and gold units add
no rows, only their scores in `Tables.units`. A record that cannot be read (a shape no version
of the platform stored) is left out whole and named in `Tables.unreadable`: one odd row never
stops an analysis.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collection_and_annotations.blueprints.base import MAIN_POOL, QUALITY_POOLS
from collection_and_annotations.blueprints.static_annotation.buckets import (
    TREE_CONFIGS,
    parse_bucket,
)
from collection_and_annotations.errors import UserError
from collection_and_annotations.export.submissions import answered_items, whole_submissions
from collection_and_annotations.export.writers import json_safe
from collection_and_annotations.json_files import read_json, read_json_lines

UNKNOWN_BOT = "(unknown)"
LIKERT_CONFIGS = {"likert-5-turn": "turn", "likert-5-dialogue": "dialogue",
                  "foreach-5-select": "turn", "foreach-5-select-dialogue": "dialogue"}
BOT_SPEAKERS = {"system", None}
REJECTED = ("reject", "soft_reject")  # review decisions whose work the figures leave out
RATINGS = range(1, 6)
# What can go wrong reading a record of a shape no version stored (a hand-edited file, a row
# older than a check): the record is left out and named, the analysis goes on.
ODD_RECORD = (KeyError, ValueError, TypeError, AttributeError, IndexError, OverflowError)

Records = Iterable[tuple[dict[str, Any], dict[str, Any]]]


@dataclass(slots=True)
class AnnotatedTurn:
    """One annotator's answers to one turn-level label bucket on one bot turn (tuples, not
    sets: a million of them stay small)."""

    bot: str
    cluster: str  # the dialogue (turns of one dialogue are correlated)
    item: str  # the turn, the same for every annotator (agreement)
    worker: str
    unit: str
    values: tuple[str, ...] = ()  # multiselect values chosen
    answers: tuple[tuple[str, str], ...] = ()  # (question, answer) chosen


@dataclass(slots=True)
class TextAnswer:
    """One annotator's free text on one target: a text bucket's answer or the explanation
    beside another bucket's answer."""

    bot: str
    dialogue: str  # group/dialogue_id
    turn: int | None
    worker: str
    unit: str
    text: str


TEXT_KINDS = ("answer", "explanation")


@dataclass
class Tables:
    turns: dict[str, dict[tuple, AnnotatedTurn]] = field(default_factory=dict)  # bucket -> ...
    ratings: list[tuple] = field(default_factory=list)
    # (bucket, dimension, level, bot, cluster, item, worker, rating, unit)
    comparisons: list[tuple] = field(default_factory=list)
    # (bucket, item, worker, bot of turns, bot of turns2, chosen, left, unit)
    units: dict[str, dict[str, Any]] = field(default_factory=dict)
    # unit_id -> worker, task, kind, pool, seconds, flagged, passed, mistakes
    buckets: dict[str, dict[str, Any]] = field(default_factory=dict)  # the answered ones
    records: int = 0
    rows: int = 0
    digest: Any = field(default_factory=hashlib.sha256)
    texts: dict[tuple[str, str], dict[tuple, TextAnswer]] = field(default_factory=dict)
    # (bucket, "answer" | "explanation") -> (unit, dialogue key, turn) -> its text
    unreadable: list[str] = field(default_factory=list)  # "unit: why" of records left out
    left_out: frozenset[str] = frozenset()  # units whose rows `without` left out
    repeated: int = 0  # records of a unit already read, not counted again

    def add_turn_answer(self, bucket: str, key: tuple, bot: str, cluster: str, item: str,
                        worker: str, unit: str, values: Iterable[str] = (),
                        answers: Iterable[tuple[str, str]] = ()) -> None:
        turn = self.turns.setdefault(bucket, {}).get(key)
        if turn is None:
            turn = self.turns[bucket][key] = AnnotatedTurn(bot, cluster, item, worker, unit)
        if values:
            turn.values += tuple(values)
        if answers:
            turn.answers += tuple(answers)

    def add_rating(self, bucket: str, dimension: str, level: str, bot: str, cluster: str,
                   item: str, worker: str, rating: int, unit: str) -> None:
        self.ratings.append((bucket, dimension, level, bot, cluster, item, worker, rating,
                             unit))

    def add_comparison(self, bucket: str, item: str, worker: str, bot: str, bot2: str,
                       chosen: str | None, left: str | None, unit: str) -> None:
        self.comparisons.append((bucket, item, worker, bot, bot2, chosen, left, unit))

    def add_text(self, bucket: str, kind: str, key: tuple, answer: TextAnswer) -> None:
        """A text once per target (a tree's rows repeat a target's explanation)."""
        self.texts.setdefault((bucket, kind), {}).setdefault(key, answer)

    def without(self, units: set[str]) -> Tables:
        """The same study with the rows of `units` left out (the unit records stay, so quality
        figures still describe everyone)."""
        return Tables(
            turns={bucket: {k: t for k, t in rows.items() if t.unit not in units}
                   for bucket, rows in self.turns.items()},
            ratings=[r for r in self.ratings if r[-1] not in units],
            comparisons=[c for c in self.comparisons if c[-1] not in units],
            texts={name: {k: t for k, t in rows.items() if t.unit not in units}
                   for name, rows in self.texts.items()},
            units=self.units, buckets=self.buckets, records=self.records, rows=self.rows,
            digest=self.digest, unreadable=self.unreadable,
            left_out=self.left_out | frozenset(units), repeated=self.repeated)

    def rejected_units(self) -> set[str]:
        """Real work the requester rejected or soft-rejected."""
        return {unit for unit, u in self.units.items()
                if u["review"] in REJECTED and u["pool"] not in QUALITY_POOLS}

    @property
    def data_sha256(self) -> str:
        return self.digest.hexdigest()


def _bot(fields: dict[str, Any], name: str) -> str:
    value = fields.get(name)
    return UNKNOWN_BOT if value is None or value == "" else sys.intern(str(value))


def finite(value: Any) -> float | None:
    """A stored number as a float, None when it is not one (a bool, text, NaN, or an integer
    too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _canonical(record: dict[str, Any]) -> bytes:
    """The record as its export writes it (NaN as null, whole characters), with sorted keys:
    the same bytes from the database and from its export file."""
    try:
        text = json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False)
        return text.encode()
    except ValueError:  # NaN or a lone surrogate, as the export writes them
        return json.dumps(json_safe(record), sort_keys=True, ensure_ascii=False).encode()


def _likert_dimensions(bucket: dict[str, Any]) -> dict[str, str]:
    """Export question text -> the option's label (likert) or value (foreach)."""
    names = {}
    for option in bucket.get("options") or []:
        if isinstance(option, dict):
            label = option.get("label", option.get("value"))
            names[option.get("question", label)] = label
            names[option.get("value", label)] = option.get("value", label)
    return names


def add_records(tables: Tables, records: Records, by: str = "bot") -> Tables:
    """Read whole submissions (with their bucket definitions) into `tables`; a record that
    cannot be read is left out whole and named in `tables.unreadable`."""
    names: dict[tuple[int, str], dict[str, str]] = {}
    for record, definitions in records:
        if isinstance(record, dict) and record.get("unit_id") in tables.units:
            tables.repeated += 1  # the same unit read again (a file appended twice)
            continue
        try:
            unit, rows, fields = _read(record, definitions)
        except ODD_RECORD as exc:
            where = record.get("unit_id") if isinstance(record, dict) else None
            tables.unreadable.append(f"{where or 'a record'}: {type(exc).__name__}: {exc}"[:300])
            continue
        tables.records += 1
        tables.digest.update(_canonical(record))
        for answered in record["answers"].values():
            for name in answered:
                if name in definitions:
                    tables.buckets.setdefault(name, definitions[name])
        tables.units[record.get("unit_id")] = unit
        for row in rows:
            _add_row(tables, row, fields.get(row["dialogue_key"], {}), definitions, names, by)
    return tables


def _read(record: dict[str, Any], definitions: dict[str, Any]
          ) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The unit's figures, the answered rows and each dialogue's task data fields of one
    record (raises on an odd shape)."""
    server = (record.get("timings") or {}).get("server") or {}
    pool = record.get("pool") or MAIN_POOL  # exports made before pools were recorded
    unit = {
        "worker": record.get("worker"), "task": record.get("task"),
        "kind": record.get("task_kind"), "pool": pool,
        "seconds": finite(server.get("duration_seconds")),
        "flagged": bool(record.get("flagged_for_review")),
        "passed": record.get("quality_passed"),
        "mistakes": record.get("quality_mistakes")
        if finite(record.get("quality_mistakes")) is not None else None,
        "review": (record.get("review") or {}).get("decision")}
    # training and gold dialogues are not the study's data: their units add no rows
    rows = [] if pool in QUALITY_POOLS else list(answered_items(record, definitions))
    fields = {d["key"]: d.get("source_fields") or {} for d in record["dialogues"]}
    return unit, rows, fields


def _add_row(tables: Tables, row: dict[str, Any], source: dict[str, Any],
             definitions: dict[str, Any], names: dict[tuple[int, str], dict[str, str]],
             by: str) -> None:
    """One answered row into the table it belongs to; `source`: its dialogue's task data
    fields (the bot)."""
    tables.rows += 1
    worker, unit = row["worker"], row["unit_id"]
    bucket_name = row["bucket"]
    bucket = definitions.get(bucket_name, {})
    config = bucket.get("config")
    cluster = sys.intern(f"{row['group_id']}/{row['dialogue_id']}")
    turn = row["turn_index"]
    answer = row["answer"]
    target = (unit, row["dialogue_key"], turn)
    explanation = row.get("explanation")
    if isinstance(explanation, str):
        tables.add_text(bucket_name, "explanation", target, TextAnswer(
            _bot(source, by), cluster, turn, worker, unit, explanation))
    if config == "text":
        tables.add_text(bucket_name, "answer", target, TextAnswer(
            _bot(source, by), cluster, turn, worker, unit,
            answer if isinstance(answer, str) else ""))
        return
    if config == "comparative":
        tables.add_comparison(bucket_name, cluster, worker, _bot(source, by),
                              _bot(source, f"{by}2"), row["chosen"], row["left"], unit)
        return
    if turn is not None and row["speaker"] not in BOT_SPEAKERS:
        return
    item = cluster if turn is None else sys.intern(f"{cluster}#{turn}")
    if config in LIKERT_CONFIGS:
        if not isinstance(answer, bool) and answer in RATINGS:  # a 1-5 integer, nothing else
            dimensions = names.setdefault((id(definitions), bucket_name),
                                          _likert_dimensions(bucket))
            question = row["question"]
            tables.add_rating(bucket_name, dimensions.get(question, question),
                              LIKERT_CONFIGS[config], _bot(source, by), cluster, item, worker,
                              answer, unit)
        return
    if turn is None:
        return
    key = (unit, row["dialogue_key"], turn)
    if config == "multiselect":
        tables.add_turn_answer(bucket_name, key, _bot(source, by), cluster, item, worker, unit,
                               values=[v for v in answer if isinstance(v, str)]
                               if isinstance(answer, list) else ())
    elif config in TREE_CONFIGS:
        chosen = answer if isinstance(answer, list) else [answer]
        tables.add_turn_answer(
            bucket_name, key, _bot(source, by), cluster, item, worker, unit,
            answers=[(row["question"], a) for a in chosen if isinstance(a, str)])


def database_records(database_url: str, tasks: list[str]) -> Iterator[tuple[dict, dict]]:
    """The tasks' records, LLM judges' too (`analysis.judges.without_judges` sets them
    aside)."""
    from collection_and_annotations.storage.database import Database

    db = Database(database_url)
    try:
        for task in tasks:
            # screening and gold units come too: their scores are the quality figures
            yield from whole_submissions(db, task, judges="with")
    finally:
        db.dispose()


def read_buckets(path: Path) -> dict[str, Any]:
    """The buckets of an annotation_buckets.json as a run stores them (checked, each bucket's
    public definition), so a file gives the same definitions and hashes as the database."""
    data = read_json(path, "annotation_buckets.json (--buckets)")
    buckets = data.get("config", data) if isinstance(data, dict) else None
    if not isinstance(buckets, dict):
        raise UserError("expected an object of buckets (under 'config')", path)
    return {name: parse_bucket(name, spec, path).public() for name, spec in buckets.items()}


def file_records(path: Path, buckets: dict[str, Any],
                 tasks: list[str] | None = None) -> Iterator[tuple[dict, dict]]:
    """Whole submissions from an `export --format submissions` file (optionally only some
    tasks), each with `buckets`."""
    for number, record in read_json_lines(path, "submissions file (--from)"):
        if not isinstance(record, dict) or "answers" not in record:
            raise UserError("not a whole submission", path, number)
        if tasks and record.get("task") not in tasks:
            continue
        record.setdefault("task_kind", "static_annotation")
        yield record, buckets

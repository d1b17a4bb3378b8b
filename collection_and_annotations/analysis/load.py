"""Answers as tidy tables: annotated turns, ratings, comparisons, units.

Records are whole submissions as `export.submissions.whole_submissions` yields them (from the
database) or as `export --format submissions` wrote them (a file, read with the bucket
definitions), so an analysis reproduces without the database. Rows come from
`answered_items`, the export's own reading of a submission. Other sources (chat annotations,
once they exist) join by calling the `Tables.add_*` methods with the same fields. Every row
keeps its unit, so `Tables.without` can leave out units (flagged work, disqualified workers);
screening and gold units add no rows, only their scores in `Tables.units`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collection_and_annotations.blueprints.base import MAIN_POOL, QUALITY_POOLS
from collection_and_annotations.blueprints.static_annotation.buckets import TREE_CONFIGS
from collection_and_annotations.errors import UserError
from collection_and_annotations.export.submissions import answered_items, whole_submissions
from collection_and_annotations.json_files import read_json, read_json_lines

UNKNOWN_BOT = "(unknown)"
LIKERT_CONFIGS = {"likert-5-turn": "turn", "likert-5-dialogue": "dialogue",
                  "foreach-5-select": "turn", "foreach-5-select-dialogue": "dialogue"}
BOT_SPEAKERS = {"system", None}

Records = Iterable[tuple[dict[str, Any], dict[str, Any]]]


@dataclass
class AnnotatedTurn:
    """One annotator's answers to one turn-level label bucket on one bot turn."""

    bot: str
    cluster: str  # the dialogue (turns of one dialogue are correlated)
    item: str  # the turn, the same for every annotator (agreement)
    worker: str
    unit: str
    values: set[str] = field(default_factory=set)  # multiselect values chosen
    answers: set[tuple[str, str]] = field(default_factory=set)  # (question, answer) chosen


@dataclass
class Tables:
    turns: dict[str, dict[tuple, AnnotatedTurn]] = field(default_factory=dict)  # bucket -> ...
    ratings: list[tuple] = field(default_factory=list)
    # (bucket, dimension, level, bot, cluster, item, worker, rating, unit)
    comparisons: list[tuple] = field(default_factory=list)
    # (bucket, item, worker, bot of turns, bot of turns2, chosen, left, unit)
    units: dict[str, dict[str, Any]] = field(default_factory=dict)
    # unit_id -> worker, task, kind, pool, seconds, flagged, passed, mistakes
    buckets: dict[str, dict[str, Any]] = field(default_factory=dict)
    records: int = 0
    rows: int = 0
    digest: Any = field(default_factory=hashlib.sha256)

    def add_turn_answer(self, bucket: str, key: tuple, bot: str, cluster: str, item: str,
                        worker: str, unit: str, values: Iterable[str] = (),
                        answers: Iterable[tuple[str, str]] = ()) -> None:
        turn = self.turns.setdefault(bucket, {}).get(key)
        if turn is None:
            turn = self.turns[bucket][key] = AnnotatedTurn(bot, cluster, item, worker, unit)
        turn.values.update(values)
        turn.answers.update(answers)

    def add_rating(self, bucket: str, dimension: str, level: str, bot: str, cluster: str,
                   item: str, worker: str, rating: int, unit: str) -> None:
        self.ratings.append((bucket, dimension, level, bot, cluster, item, worker, rating,
                             unit))

    def add_comparison(self, bucket: str, item: str, worker: str, bot: str, bot2: str,
                       chosen: str | None, left: str | None, unit: str) -> None:
        self.comparisons.append((bucket, item, worker, bot, bot2, chosen, left, unit))

    def without(self, units: set[str]) -> Tables:
        """The same study with the rows of `units` left out (the unit records stay, so quality
        figures still describe everyone)."""
        return Tables(
            turns={bucket: {k: t for k, t in rows.items() if t.unit not in units}
                   for bucket, rows in self.turns.items()},
            ratings=[r for r in self.ratings if r[-1] not in units],
            comparisons=[c for c in self.comparisons if c[-1] not in units],
            units=self.units, buckets=self.buckets, records=self.records, rows=self.rows,
            digest=self.digest)

    @property
    def data_sha256(self) -> str:
        return self.digest.hexdigest()


def _bot(fields: dict[str, Any], name: str) -> str:
    value = fields.get(name)
    return UNKNOWN_BOT if value is None or value == "" else str(value)


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
    """Read whole submissions (with their bucket definitions) into `tables`."""
    dimension_names: dict[tuple[int, str], dict[str, str]] = {}
    for record, definitions in records:
        tables.records += 1
        tables.digest.update(json.dumps(record, sort_keys=True, ensure_ascii=False).encode())
        for name, bucket in definitions.items():
            tables.buckets.setdefault(name, bucket)
        fields = {d["key"]: d.get("source_fields") or {} for d in record.get("dialogues", [])}
        worker, unit = record.get("worker"), record.get("unit_id")
        server = (record.get("timings") or {}).get("server") or {}
        pool = record.get("pool") or MAIN_POOL  # exports made before pools were recorded
        tables.units[unit] = {
            "worker": worker, "task": record.get("task"), "kind": record.get("task_kind"),
            "pool": pool, "seconds": server.get("duration_seconds"),
            "flagged": bool(record.get("flagged_for_review")),
            "passed": record.get("quality_passed"), "mistakes": record.get("quality_mistakes")}
        if pool in QUALITY_POOLS:  # training and gold dialogues are not the study's data
            continue
        for row in answered_items(record, definitions):
            tables.rows += 1
            bucket_name = row["bucket"]
            bucket = definitions.get(bucket_name, {})
            config = bucket.get("config")
            source = fields.get(row["dialogue_key"], {})
            cluster = f"{row['group_id']}/{row['dialogue_id']}"
            turn = row["turn_index"]
            answer = row["answer"]
            if config == "comparative":
                tables.add_comparison(bucket_name, cluster, worker, _bot(source, by),
                                      _bot(source, f"{by}2"), row["chosen"], row["left"], unit)
                continue
            if turn is not None and row["speaker"] not in BOT_SPEAKERS:
                continue
            item = cluster if turn is None else f"{cluster}#{turn}"
            if config in LIKERT_CONFIGS:
                if isinstance(answer, int) and not isinstance(answer, bool):
                    names = dimension_names.setdefault(
                        (id(definitions), bucket_name), _likert_dimensions(bucket))
                    question = row["question"]
                    tables.add_rating(bucket_name, names.get(question, question),
                                      LIKERT_CONFIGS[config], _bot(source, by), cluster, item,
                                      worker, answer, unit)
                continue
            if turn is None:
                continue
            key = (unit, row["dialogue_key"], turn)
            if config == "multiselect":
                tables.add_turn_answer(bucket_name, key, _bot(source, by), cluster, item,
                                       worker, unit,
                                       values=answer if isinstance(answer, list) else ())
            elif config in TREE_CONFIGS:
                chosen = answer if isinstance(answer, list) else [answer]
                tables.add_turn_answer(
                    bucket_name, key, _bot(source, by), cluster, item, worker, unit,
                    answers=[(row["question"], a) for a in chosen if isinstance(a, str)])
    return tables


def database_records(database_url: str, tasks: list[str]) -> Iterator[tuple[dict, dict]]:
    from collection_and_annotations.storage.database import Database

    db = Database(database_url)
    try:
        for task in tasks:
            # screening and gold units come too: their scores are the quality figures
            yield from whole_submissions(db, task)
    finally:
        db.dispose()


def read_buckets(path: Path) -> dict[str, Any]:
    data = read_json(path, "annotation_buckets.json (--buckets)")
    return data.get("config", data) if isinstance(data, dict) else {}


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

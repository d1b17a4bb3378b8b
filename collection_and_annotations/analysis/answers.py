"""The answers of each figure as arrays, built once per pass and read by every section: a
turn-level bucket's labels (one row per annotated bot turn and annotator, one column per label)
and each Likert dimension's ratings, each row with the codes of its dialogue, worker, unit and
item (the same code for the same dialogue across bots, so paired answers can be found)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from collection_and_annotations.analysis.behaviours import Behaviour
from collection_and_annotations.analysis.load import AnnotatedTurn, Tables

Column = tuple[str, str | None, Behaviour | None]  # (label, behaviour name, derivation)


@dataclass(frozen=True)
class Answers:
    """Rows of answers to one figure (or one bucket's labels) with who gave them where."""

    values: np.ndarray  # rows (x labels): 0/1 presence, or the 1-5 rating
    bots: np.ndarray  # bot name per row
    dialogues: np.ndarray  # codes
    workers: np.ndarray  # codes into `worker_names`
    units: np.ndarray  # codes
    items: np.ndarray  # codes: the turn (or the dialogue) every annotator of it shares
    worker_names: np.ndarray
    unit_names: np.ndarray

    def where(self, mask: np.ndarray) -> Answers:
        return Answers(self.values[mask], self.bots[mask], self.dialogues[mask],
                       self.workers[mask], self.units[mask], self.items[mask],
                       self.worker_names, self.unit_names)

    def without(self, units: set[str]) -> Answers:
        """The answers of the other units."""
        left_out = np.flatnonzero([name in units for name in self.unit_names])
        return self.where(~np.isin(self.units, left_out))


@dataclass(frozen=True)
class LabelAnswers:
    bucket: str
    columns: list[Column]
    answers: Answers

    def without(self, units: set[str]) -> LabelAnswers:
        return LabelAnswers(self.bucket, self.columns, self.answers.without(units))


@dataclass(frozen=True)
class RatingAnswers:
    bucket: str
    dimension: str
    level: str  # turn | dialogue
    answers: Answers

    def without(self, units: set[str]) -> RatingAnswers:
        return RatingAnswers(self.bucket, self.dimension, self.level,
                             self.answers.without(units))


def label_columns(bucket_name: str, bucket: dict[str, Any], turns: list[AnnotatedTurn],
                  behaviours: list[Behaviour]) -> list[Column]:
    """(label, behaviour name, behaviour) of each label a bucket's turns are scored on: a
    multiselect bucket's option values (named by a one-value behaviour when the mapping has
    one), then the mapping's other behaviours of the bucket."""
    mapped = [b for b in behaviours if b.bucket == bucket_name]
    columns: list[Column] = []
    if bucket.get("config") == "multiselect":
        values = [o["value"] for o in bucket.get("options") or []
                  if isinstance(o, dict) and "value" in o]
        seen = sorted({v for t in turns for v in t.values} - set(values))
        named = {next(iter(b.values)): b for b in mapped if len(b.values) == 1 and not b.answers}
        for value in values + seen:
            behaviour = named.get(value)
            columns.append((value, behaviour.label if behaviour else None, None))
        mapped = [b for b in mapped if b not in named.values()]
    columns += [(b.label, b.label, b) for b in mapped]
    return columns


def presence(turns: list[AnnotatedTurn], columns: list[Column]) -> np.ndarray:
    """turns x labels: does the annotator's answer on the turn hold the label?"""
    table = np.zeros((len(turns), len(columns)), dtype=bool)
    for j, (label, _, behaviour) in enumerate(columns):
        if behaviour is None:
            table[:, j] = [label in t.values for t in turns]
        else:
            table[:, j] = [behaviour.holds(t.values, t.answers) for t in turns]
    return table


def _codes(labels: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct labels (in order of first appearance) and each row's index into them."""
    index: dict[Any, int] = {}
    codes = np.fromiter((index.setdefault(label, len(index)) for label in labels),
                        dtype=np.int64, count=len(labels))
    return np.asarray(list(index), dtype=object), codes


def _answers(values: np.ndarray, bots: list[str], dialogues: list[str], workers: list[Any],
             units: list[Any], items: list[str]) -> Answers:
    worker_names, worker_codes = _codes(workers)
    unit_names, unit_codes = _codes(units)
    return Answers(values, np.asarray(bots, dtype=object), _codes(dialogues)[1], worker_codes,
                   unit_codes, _codes(items)[1], worker_names, unit_names)


def label_answers(tables: Tables, behaviours: list[Behaviour]) -> list[LabelAnswers]:
    """Each turn-level label bucket's answers, buckets by name."""
    built = []
    for bucket in sorted(tables.turns):
        turns = list(tables.turns[bucket].values())
        columns = label_columns(bucket, tables.buckets.get(bucket, {}), turns, behaviours)
        if not columns or not turns:
            continue
        built.append(LabelAnswers(bucket, columns, _answers(
            presence(turns, columns), [t.bot for t in turns], [t.cluster for t in turns],
            [t.worker for t in turns], [t.unit for t in turns], [t.item for t in turns])))
    return built


def rating_answers(tables: Tables) -> list[RatingAnswers]:
    """Each Likert dimension's 1-5 ratings, by bucket, dimension and level."""
    groups: dict[tuple[str, str, str], list[tuple]] = {}
    for bucket, dimension, level, bot, cluster, item, worker, rating, unit in tables.ratings:
        groups.setdefault((bucket, dimension, level), []).append(
            (rating, bot, cluster, worker, unit, item))
    built = []
    for (bucket, dimension, level), rows in sorted(groups.items()):
        ratings, bots, dialogues, workers, units, items = zip(*rows, strict=True)
        built.append(RatingAnswers(bucket, dimension, level, _answers(
            np.asarray(ratings, dtype=np.float64), list(bots), list(dialogues), list(workers),
            list(units), list(items))))
    return built

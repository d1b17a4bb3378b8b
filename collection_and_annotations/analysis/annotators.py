"""Annotators: per worker, the share of the work they did, their label rates and Likert means
against everyone else's on the same items (leniency), and how often they agree with the
others; and whether a few workers did most of the work, in which case the intervals that also
treat workers as clusters (`ci_low_workers` / `ci_high_workers` of the rates and ratings) are
the ones to report."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from collection_and_annotations.analysis.answers import Answers, LabelAnswers, RatingAnswers
from collection_and_annotations.analysis.load import Tables
from collection_and_annotations.blueprints.base import QUALITY_POOLS

# Fewer effective workers (1 / sum of squared shares of the units) than this: the work is in
# a few hands, and worker effects weigh on every figure.
FEW_WORKERS = 10
MOST_WORK = 0.8  # "the k most active workers did 80 % of the units"


def _raters(answers: Answers) -> np.ndarray:
    """Per row, the number of answers to its item (its annotators)."""
    return np.bincount(answers.items)[answers.items]


def _worker_index(answers: Answers, names: dict[str, int]) -> np.ndarray:
    """Per row, the worker's index in `names`."""
    return np.array([names.get(str(w), -1) for w in answers.worker_names], dtype=np.int64)[
        answers.workers]


class _Totals:
    """Sums per worker: (own, others) values on shared items and agreeing pairs."""

    def __init__(self) -> None:
        self.sums: dict[str, np.ndarray] = {}

    def add(self, key: str, workers: np.ndarray, weights: np.ndarray, size: int) -> None:
        counted = np.bincount(workers, weights=weights, minlength=size)
        self.sums[key] = self.sums.get(key, np.zeros(size)) + counted

    def ratio(self, top: str, bottom: str, index: int) -> float | None:
        if bottom not in self.sums or self.sums[bottom][index] <= 0:
            return None
        return float(self.sums[top][index] / self.sums[bottom][index])


def _label_totals(table: LabelAnswers, names: dict[str, int], totals: _Totals) -> None:
    answers = table.answers
    workers = _worker_index(answers, names)
    raters = _raters(answers)
    shared = raters >= 2
    values = answers.values.astype(np.float64)
    columns = values.shape[1]
    positives = np.stack([np.bincount(answers.items, weights=values[:, j])
                          for j in range(columns)], axis=1)[answers.items]  # per row's item
    others = raters - 1
    size = len(names)
    totals.add("label_own", workers[shared], values[shared].sum(axis=1), size)
    totals.add("label_own_n", workers[shared], np.full(shared.sum(), columns), size)
    # the others' answers on the same item and label: how many hold it, how many agree with
    # this worker's, of how many (pairs)
    totals.add("label_others", workers[shared], (positives - values)[shared].sum(axis=1), size)
    agreeing = np.where(values == 1, positives - 1, others[:, None] - positives)
    totals.add("agree", workers[shared], agreeing[shared].sum(axis=1), size)
    totals.add("pairs", workers[shared], (others * columns)[shared], size)


def _rating_totals(table: RatingAnswers, names: dict[str, int], totals: _Totals) -> None:
    answers = table.answers
    workers = _worker_index(answers, names)
    raters = _raters(answers)
    shared = raters >= 2
    sums = np.bincount(answers.items, weights=answers.values)[answers.items]
    size = len(names)
    totals.add("likert_own", workers[shared], answers.values[shared], size)
    totals.add("likert_own_n", workers[shared], np.ones(shared.sum()), size)
    # the others' mean on the item, one weight per shared item of the worker
    totals.add("likert_others", workers[shared],
               (sums - answers.values)[shared] / (raters[shared] - 1), size)


def annotators(tables: Tables, labels: list[LabelAnswers],
               ratings: list[RatingAnswers]) -> dict[str, Any]:
    """The annotators section of results.json (docs/analysis.md)."""
    units = Counter(str(u["worker"]) for unit, u in tables.units.items()
                    if u["pool"] not in QUALITY_POOLS and unit not in tables.left_out)
    names = {name: i for i, name in enumerate(sorted(units))}
    for table in [*labels, *ratings]:  # workers with answers (the names list everyone's)
        for name in table.answers.worker_names[np.unique(table.answers.workers)]:
            names.setdefault(str(name), len(names))
    totals = _Totals()
    for table in labels:
        _label_totals(table, names, totals)
    for table in ratings:
        _rating_totals(table, names, totals)
    total_units = sum(units.values())
    workers = []
    for name, index in sorted(names.items()):
        share = units[name] / total_units if total_units else None
        workers.append({
            "worker": name, "units": units[name], "share": share,
            "label_rate": totals.ratio("label_own", "label_own_n", index),
            "others_label_rate": totals.ratio("label_others", "pairs", index),
            "likert_mean": totals.ratio("likert_own", "likert_own_n", index),
            "others_likert_mean": totals.ratio("likert_others", "likert_own_n", index),
            "agreement": totals.ratio("agree", "pairs", index),
            "shared_answers": int(totals.sums.get("label_own_n", np.zeros(len(names)))[index]
                                  + totals.sums.get("likert_own_n",
                                                    np.zeros(len(names)))[index]),
        })
    workers.sort(key=lambda w: (-w["units"], w["worker"]))
    shares = np.array([w["share"] for w in workers if w["share"]])
    effective = float(1 / (shares ** 2).sum()) if len(shares) else None
    most = int(np.searchsorted(np.cumsum(shares), MOST_WORK - 1e-9) + 1) if len(shares) else 0
    concentrated = effective is not None and effective < FEW_WORKERS
    agree = totals.sums.get("agree")
    pairs = totals.sums.get("pairs")
    return {
        "workers": workers, "units": total_units,
        "effective_workers": effective, "workers_for_most_work": min(most, len(shares)),
        "concentrated": concentrated,
        "agreement": float(agree.sum() / pairs.sum()) if pairs is not None and pairs.sum()
        else None,
        "note": (f"a few workers did most of the work: {min(most, len(shares))} of "
                 f"{len(shares)} did {MOST_WORK:.0%} of the units (effective number of "
                 f"workers {effective:.1f}, fewer than {FEW_WORKERS}); report the intervals "
                 "that also treat workers as clusters (the worker-aware columns)")
        if concentrated else None,
    }

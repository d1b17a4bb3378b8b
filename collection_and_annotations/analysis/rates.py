"""Behaviour rates per bot (the ABC-Eval table) with dialogue-cluster bootstrap intervals."""

from __future__ import annotations

from typing import Any

import numpy as np

from collection_and_annotations.analysis.behaviours import Behaviour
from collection_and_annotations.analysis.load import AnnotatedTurn, Tables
from collection_and_annotations.analysis.stats import cluster_ratio_bootstrap


def label_columns(bucket_name: str, bucket: dict[str, Any], turns: list[AnnotatedTurn],
                  behaviours: list[Behaviour]) -> list[tuple[str, str | None, Behaviour | None]]:
    """(label, behaviour name, behaviour) of each label a bucket's turns are scored on: a
    multiselect bucket's option values (named by a one-value behaviour when the mapping has
    one), then the mapping's other behaviours of the bucket."""
    mapped = [b for b in behaviours if b.bucket == bucket_name]
    columns: list[tuple[str, str | None, Behaviour | None]] = []
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


def presence(turns: list[AnnotatedTurn],
             columns: list[tuple[str, str | None, Behaviour | None]]) -> np.ndarray:
    """turns x labels: does the annotator's answer on the turn hold the label?"""
    table = np.zeros((len(turns), len(columns)), dtype=bool)
    for j, (label, _, behaviour) in enumerate(columns):
        if behaviour is None:
            table[:, j] = [label in t.values for t in turns]
        else:
            table[:, j] = [behaviour.holds(t.values, t.answers) for t in turns]
    return table


def behaviour_rates(tables: Tables, behaviours: list[Behaviour], resamples: int,
                    rng: np.random.Generator, confidence: float) -> list[dict[str, Any]]:
    rows = []
    for bucket_name in sorted(tables.turns):
        turns = list(tables.turns[bucket_name].values())
        columns = label_columns(bucket_name, tables.buckets.get(bucket_name, {}), turns,
                                behaviours)
        if not columns or not turns:
            continue
        table = presence(turns, columns)
        bots = np.array([t.bot for t in turns])
        clusters = np.array([t.cluster for t in turns])
        items = np.array([t.item for t in turns])
        for bot in sorted(set(bots.tolist())):
            mask = bots == bot
            names, codes = np.unique(clusters[mask], return_inverse=True)
            numerators = np.stack([np.bincount(codes, weights=table[mask, j],
                                               minlength=len(names))
                                   for j in range(len(columns))], axis=1)
            denominators = np.repeat(np.bincount(codes, minlength=len(names))[:, None],
                                     len(columns), axis=1)
            rate, low, high = cluster_ratio_bootstrap(numerators, denominators, resamples, rng,
                                                      confidence)
            n_unique = len(set(items[mask].tolist()))
            for j, (label, behaviour, _) in enumerate(columns):
                rows.append({
                    "bucket": bucket_name, "label": label, "behaviour": behaviour, "bot": bot,
                    "rate": float(rate[j]), "ci_low": float(low[j]), "ci_high": float(high[j]),
                    "n_with_label": int(numerators[:, j].sum()),
                    "n_turns": int(mask.sum()), "n_unique_turns": n_unique,
                    "n_dialogues": len(names),
                })
    return rows

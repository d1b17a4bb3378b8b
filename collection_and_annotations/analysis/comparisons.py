"""Side-by-side comparisons: win/tie/loss per bot pair and dimension (ACUTE-Eval style, with an
exact binomial interval and a two-sided sign test on the decisive answers), left/right position
bias, and a Bradley–Terry ranking with bootstrap intervals of scores and ranks."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from collection_and_annotations.analysis.load import Tables
from collection_and_annotations.analysis.stats import bradley_terry_bootstrap

ALL = "all"


def _outcomes(tables: Tables) -> list[tuple[str, str, str, float, str | None, str | None]]:
    """(bucket, bot of turns, bot of turns2, 1/0/0.5 for turns winning, chosen, left); a
    comparison of a bot with itself is left out."""
    rows = []
    for bucket, _item, _worker, bot, bot2, chosen, left, _ in tables.comparisons:
        if bot == bot2:
            continue
        outcome = {"turns": 1.0, "turns2": 0.0}.get(chosen, 0.5)
        rows.append((bucket, bot, bot2, outcome, chosen, left))
    return rows


def binomial_share(successes: int, trials: int, confidence: float) -> dict[str, Any]:
    if trials == 0:
        return {"share": None, "ci_low": None, "ci_high": None, "p_value": None}
    from scipy.stats import binomtest  # scipy.stats is slow to import: loaded when used

    test = binomtest(successes, trials, 0.5)
    interval = test.proportion_ci(confidence, method="exact")
    return {"share": successes / trials, "ci_low": float(interval.low),
            "ci_high": float(interval.high), "p_value": float(test.pvalue)}


def pairwise(tables: Tables, confidence: float) -> list[dict[str, Any]]:
    counts: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for bucket, bot, bot2, outcome, _chosen, _left in _outcomes(tables):
        a, b = sorted((bot, bot2))
        a_won = outcome if a == bot else 1.0 - outcome
        cell = counts[(bucket, a, b)]
        cell[0 if a_won == 1.0 else 2 if a_won == 0.0 else 1] += 1
    rows = []
    for (bucket, a, b), (wins, ties, losses) in sorted(counts.items()):
        test = binomial_share(wins, wins + losses, confidence)
        rows.append({"dimension": bucket, "bot_a": a, "bot_b": b, "wins": wins, "ties": ties,
                     "losses": losses, "n": wins + ties + losses,
                     "win_rate": test["share"], "ci_low": test["ci_low"],
                     "ci_high": test["ci_high"], "p_value": test["p_value"]})
    return rows


def position_bias(tables: Tables, confidence: float) -> list[dict[str, Any]]:
    """Share of decisive answers that chose the dialogue shown on the left, where the side was
    recorded (null `left`: answers stored before sides were randomised)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for bucket, _item, _worker, _bot, _bot2, chosen, left, _ in tables.comparisons:
        if left is None or chosen is None:
            continue
        counts[bucket][0] += chosen == left
        counts[bucket][1] += 1
    rows = []
    for bucket, (left_wins, decisive) in sorted(counts.items()):
        test = binomial_share(left_wins, decisive, confidence)
        rows.append({"dimension": bucket, "left_share": test["share"],
                     "ci_low": test["ci_low"], "ci_high": test["ci_high"],
                     "p_value": test["p_value"], "n_decisive": decisive})
    return rows


def _connected(bots: list[str], pairs: set[tuple[str, str]]) -> bool:
    parent = {b: b for b in bots}

    def root(b: str) -> str:
        while parent[b] != b:
            b = parent[b]
        return b

    for a, b in pairs:
        parent[root(a)] = root(b)
    return len({root(b) for b in bots}) <= 1


def ranking(tables: Tables, resamples: int, rng: np.random.Generator,
            confidence: float) -> tuple[list[dict[str, Any]], list[str]]:
    """Bradley–Terry rows over all comparisons (dimension "all") and per dimension, and
    notes."""
    outcomes = _outcomes(tables)
    groups: dict[str, list] = defaultdict(list)
    for row in outcomes:
        groups[ALL].append(row)
        groups[row[0]].append(row)
    rows, notes = [], []
    only = len(groups) == 2  # one comparative bucket: its ranking is the pooled one
    pooled: dict[str, np.ndarray] | None = None
    for dimension in [ALL] + sorted(k for k in groups if k != ALL):
        data = groups[dimension]
        bots = sorted({r[1] for r in data} | {r[2] for r in data})
        if len(bots) < 2:
            continue
        if not _connected(bots, {(r[1], r[2]) for r in data}):
            notes.append(f"{dimension}: the comparisons do not connect all bots; scores of "
                         "bots never compared (even indirectly) are not comparable")
        index = {b: i for i, b in enumerate(bots)}
        fitted = pooled if only and pooled is not None else bradley_terry_bootstrap(
            np.array([index[r[1]] for r in data]), np.array([index[r[2]] for r in data]),
            np.array([r[3] for r in data]), len(bots), resamples, rng, confidence)
        pooled = fitted
        for i, bot in enumerate(bots):
            rows.append({"dimension": dimension, "bot": bot,
                         "score": float(fitted["score"][i]), "ci_low": float(fitted["low"][i]),
                         "ci_high": float(fitted["high"][i]), "rank": int(fitted["rank"][i]),
                         "rank_low": _rank(fitted["rank_low"][i]),
                         "rank_high": _rank(fitted["rank_high"][i]),
                         "n_comparisons": sum(1 for r in data if bot in (r[1], r[2]))})
        notes += _inseparable(dimension, rows[-len(bots):], confidence)
    rows.sort(key=lambda r: (r["dimension"] != ALL, r["dimension"], r["rank"], r["bot"]))
    return rows, notes


def _rank(value: float) -> int | None:
    return None if np.isnan(value) else int(value)


def _inseparable(dimension: str, rows: list[dict[str, Any]], confidence: float) -> list[str]:
    """A note naming the bots whose ranks the comparisons cannot tell apart: those whose rank
    interval holds more than one rank, and bots of equal score."""
    unsure = sorted((r for r in rows if r["rank_low"] is not None
                     and r["rank_low"] != r["rank_high"]), key=lambda r: (r["rank"], r["bot"]))
    tied = [r for r in rows if sum(o["rank"] == r["rank"] for o in rows) > 1]
    notes = []
    if unsure:
        notes.append(f"{dimension}: the comparisons cannot separate "
                     + ", ".join(f"{r['bot']} (ranks {r['rank_low']}-{r['rank_high']})"
                                 for r in unsure)
                     + f": their {round(confidence * 100, 2):g} % rank intervals overlap")
    if tied:
        notes.append(f"{dimension}: equal scores share a rank: "
                     + ", ".join(f"{r['bot']} ({r['rank']})" for r in tied))
    return notes

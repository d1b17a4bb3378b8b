"""The arena's leaderboard from battles in Chatbot Arena's format (export/battles.py), the same
for the dashboard's live view and `analyze` (docs/arena.md):

- Bradley-Terry scores (log-strengths, and on the Elo scale Chatbot Arena shows) with
  percentile bootstrap intervals over battles, and rank intervals (the range of ranks each bot
  takes over the bootstrap), by `analysis.stats.bradley_terry_bootstrap`; a tie and a
  "both bad" count as half a win for each side, as FastChat's `elo_analysis.py` does;
- per pair: battles, wins of each side, ties, both-bad and the win rate (ties as halves);
- the votes' position bias: the share of decisive votes that chose Model A (the left pane);
- outlier voters: workers whose decisive votes go against the fitted ranking far more often
  than the model expects (one-sided normal test on the count, p < OUTLIER_P).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from collection_and_annotations.analysis.comparisons import binomial_share
from collection_and_annotations.analysis.stats import bradley_terry_bootstrap
from collection_and_annotations.export.battles import battles
from collection_and_annotations.export.writers import json_safe
from collection_and_annotations.storage.database import Database

# Chatbot Arena's Elo scale: 400 points per factor 10 of strength, around 1000.
ELO_BASE, ELO_SCALE = 1000.0, 400.0 / math.log(10)
OUTCOMES = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}
OUTLIER_P = 0.001
MIN_VOTES_FOR_OUTLIER = 5
# How the leaderboard is made, as results.json's signature lists every section's method.
METHOD = ("Bradley-Terry log-strengths of the bots from the battles' votes (mean 0; a tie and "
          "a 'both bad' are half a win for each side, as FastChat's elo_analysis.py), one "
          "virtual tie per bot against a reference; Elo = 1000 + 400 / ln 10 x score; "
          "percentile bootstrap intervals of scores and ranks over battles; win rates with "
          "ties as halves; position bias: share of decisive votes for Model A (the left pane), "
          "Clopper-Pearson interval, two-sided binomial test against 0.5; outlier voters: "
          "votes against the fitted favourite far above the model's expectation (one-sided, "
          f"p < {OUTLIER_P}, at least {MIN_VOTES_FOR_OUTLIER} decisive votes)")


def leaderboard(battles: Iterable[Mapping[str, Any]], resamples: int, seed: int = 0,
                confidence: float = 0.95) -> dict[str, Any]:
    """`ranking` (best first), `pairs`, `position_bias`, `outlier_voters` and counts."""
    rows = [(b["model_a"], b["model_b"], OUTCOMES[b["winner"]], b["winner"], b.get("judge"))
            for b in battles if b["model_a"] != b["model_b"]]
    bots = sorted({r[0] for r in rows} | {r[1] for r in rows})
    if len(bots) < 2:
        return {"battles": len(rows), "ranking": [], "pairs": [], "position_bias": None,
                "outlier_voters": []}
    index = {bot: i for i, bot in enumerate(bots)}
    fitted = bradley_terry_bootstrap(
        np.array([index[r[0]] for r in rows]), np.array([index[r[1]] for r in rows]),
        np.array([r[2] for r in rows]), len(bots), resamples, np.random.default_rng(seed),
        confidence)
    tally: dict[str, Counter[str]] = defaultdict(Counter)
    for a, b, _outcome, winner, _judge in rows:
        for bot, side in ((a, "model_a"), (b, "model_b")):
            tally[bot]["battles"] += 1
            tally[bot]["wins" if winner == side else "ties" if winner == "tie"
                       else "bothbad" if winner == "tie (bothbad)" else "losses"] += 1
    ranking = []
    for bot in bots:
        i, counts = index[bot], tally[bot]
        ranking.append({
            "bot": bot, "score": float(fitted["score"][i]), "ci_low": _float(fitted["low"][i]),
            "ci_high": _float(fitted["high"][i]), "elo": _elo(fitted["score"][i]),
            "elo_ci_low": _elo(fitted["low"][i]), "elo_ci_high": _elo(fitted["high"][i]),
            "rank": int(fitted["rank"][i]), "rank_ci_low": _int(fitted["rank_low"][i]),
            "rank_ci_high": _int(fitted["rank_high"][i]),
            **{key: counts[key] for key in ("battles", "wins", "losses", "ties", "bothbad")},
            "win_rate": (counts["wins"] + (counts["ties"] + counts["bothbad"]) / 2)
            / counts["battles"]})
    ranking.sort(key=lambda r: (r["rank"], r["bot"]))
    return {"battles": len(rows), "ranking": ranking, "pairs": _pairs(rows),
            "position_bias": _position_bias(rows, confidence),
            "outlier_voters": _outliers(rows, {b: fitted["score"][index[b]] for b in bots})}


def _pairs(rows: list[tuple[str, str, float, str, Any]]) -> list[dict[str, Any]]:
    """Battles and outcomes per pair of bots (`bot_a` before `bot_b` by name)."""
    cells: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for a, b, outcome, winner, _judge in rows:
        first, second = sorted((a, b))
        cell = cells[(first, second)]
        cell["battles"] += 1
        first_won = outcome if first == a else 1.0 - outcome
        cell["wins_a" if first_won == 1.0 else "wins_b" if first_won == 0.0
             else "bothbad" if winner == "tie (bothbad)" else "ties"] += 1
    return [{"bot_a": first, "bot_b": second, "battles": cell["battles"],
             "wins_a": cell["wins_a"], "wins_b": cell["wins_b"], "ties": cell["ties"],
             "bothbad": cell["bothbad"],
             "win_rate_a": (cell["wins_a"] + (cell["ties"] + cell["bothbad"]) / 2)
             / cell["battles"]}
            for (first, second), cell in sorted(cells.items())]


def _position_bias(rows: list[tuple[str, str, float, str, Any]], confidence: float
                   ) -> dict[str, Any]:
    """The share of decisive votes for Model A, with an exact binomial interval and test
    against one half."""
    decisive = [outcome for _a, _b, outcome, _w, _j in rows if outcome != 0.5]
    share = binomial_share(int(sum(decisive)), len(decisive), confidence)
    return {"decisive": len(decisive), "model_a_share": share["share"],
            "ci_low": share["ci_low"], "ci_high": share["ci_high"],
            "p_value": share["p_value"]}


def _outliers(rows: list[tuple[str, str, float, str, Any]], scores: Mapping[str, float]
              ) -> list[dict[str, Any]]:
    """Voters whose decisive votes went against the fitted model far more than it expects:
    per vote the model gives the chance of the opposite vote, and the count of votes against
    the favourite is compared with its expected value (normal approximation)."""
    from scipy.stats import norm

    per_judge: dict[Any, list[tuple[float, bool]]] = defaultdict(list)
    for a, b, outcome, _winner, judge in rows:
        if outcome == 0.5 or judge is None or scores[a] == scores[b]:
            continue
        favourite_a = scores[a] > scores[b]
        p_favourite = 1.0 / (1.0 + math.exp(-abs(scores[a] - scores[b])))
        per_judge[judge].append((1.0 - p_favourite, (outcome == 1.0) != favourite_a))
    flagged = []
    for judge, votes in sorted(per_judge.items()):
        if len(votes) < MIN_VOTES_FOR_OUTLIER:
            continue
        expected = sum(q for q, _against in votes)
        variance = sum(q * (1 - q) for q, _against in votes)
        against = sum(1 for _q, was in votes if was)
        p_value = float(norm.sf((against - expected) / math.sqrt(variance))) if variance else 1.0
        if p_value < OUTLIER_P:
            flagged.append({"judge": judge, "decisive_votes": len(votes), "against": against,
                            "expected_against": round(expected, 2), "p_value": p_value})
    return flagged


def _elo(score: float) -> float | None:
    return None if np.isnan(score) else ELO_BASE + ELO_SCALE * float(score)


def _float(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _int(value: float) -> int | None:
    return None if np.isnan(value) else int(value)


def stored_leaderboard(db: Database, task_names: Iterable[str], resamples: int, seed: int = 0,
                       confidence: float = 0.95) -> dict[str, Any] | None:
    """The leaderboard of the tasks' submitted battles (together); None when they hold none."""
    found = [battle for name in task_names for battle in battles(db, name)]
    return leaderboard(found, resamples, seed, confidence) if found else None


def add_leaderboard(results: dict[str, Any], database_url: str, task_names: Iterable[str],
                    resamples: int, seed: int = 0, confidence: float = 0.95) -> None:
    """Add `arena` (and its method) to results.json's `results` when the tasks hold battles:
    `analyze` and the dashboard's report show the same leaderboard."""
    db = Database(database_url)
    try:
        found = stored_leaderboard(db, task_names, resamples, seed, confidence)
    finally:
        db.dispose()
    if found is not None:
        results["arena"] = json_safe(found)
        results["signature"]["methods"]["arena"] = METHOD

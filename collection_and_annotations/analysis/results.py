"""The results of a study: every section computed from the tidy tables, with a signature of how
(data hash, resolved settings, methods, versions, seed). Deterministic given the seed."""

from __future__ import annotations

import hashlib
import json
import platform
from dataclasses import asdict, dataclass
from importlib import metadata
from typing import Any

import numpy as np

from collection_and_annotations.analysis.agreement import agreement
from collection_and_annotations.analysis.automatic import automatic_metrics
from collection_and_annotations.analysis.behaviours import Behaviour, as_data
from collection_and_annotations.analysis.chat_logs import CHAT_KIND, ChatLog, logs_sha256
from collection_and_annotations.analysis.comparisons import pairwise, position_bias, ranking
from collection_and_annotations.analysis.likert import likert_summaries
from collection_and_annotations.analysis.load import Tables
from collection_and_annotations.analysis.quality import (
    EXCLUSION_RULE,
    excluded_units,
    quality,
    worker_exclusions,
)
from collection_and_annotations.analysis.rates import behaviour_rates

FORMAT_VERSION = 1
METHODS = {
    "behaviour_rates": "share of annotated bot turn x annotator pairs whose answer holds the "
                       "label; percentile interval from a dialogue-level (cluster) bootstrap",
    "likert": "mean of the ratings; percentile interval from a dialogue-level bootstrap",
    "comparisons": "wins/ties/losses per bot pair; win_rate = wins / (wins + losses), "
                   "Clopper-Pearson interval, two-sided sign (binomial) test; ties excluded",
    "position_bias": "share of decisive answers choosing the left dialogue, Clopper-Pearson "
                     "interval, two-sided binomial test against 0.5",
    "ranking": "Bradley-Terry log-strengths (mean 0; P(i beats j) = 1 / (1 + exp(s_j - s_i))) "
               "by maximum likelihood (MM algorithm), ties as half a win for each side; "
               "percentile interval from resampling comparisons",
    "agreement": "Krippendorff's alpha on items with >= 2 annotators: nominal for turn labels "
                 "(presence/absence, bots pooled) and comparisons, ordinal for 1-5 ratings; "
                 "percentile interval from resampling items",
    "quality": "screening pass rate and gold accuracy: units passed / units scored, per worker "
               "and overall; the main figures again without flagged or disqualified work "
               "(quality.excluding_flagged), with the same seed",
    "automatic_metrics": "the metrics registry through metrics.compute (as `evaluate`) over "
                         "collected chats, per bot: richness of bot turns, bot latency from "
                         "the stored latency_ms / first_piece_ms, worker response time from "
                         "sent_at",
}
# The figures computed twice: with everyone, and without flagged or disqualified work.
MAIN_SECTIONS = ("behaviour_rates", "likert", "comparisons", "ranking")
CHAT_NOTE = ("automatic metrics over collected chats are computed from the database only "
             "(an export file has no chat messages); analyze the chat task with "
             "--database-url or --data-dir")
PACKAGES = ("chat-evaluation-platform", "numpy", "scipy", "matplotlib")


@dataclass(frozen=True)
class Settings:
    tasks: list[str]
    by: str = "bot"
    seed: int = 0
    resamples: int = 1000
    confidence: float = 0.95
    source: str = "database"
    max_failed_golds: int = 0


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def signature(tables: Tables, settings: Settings, behaviours: list[Behaviour],
              logs: list[ChatLog] | None, metric_signatures: dict[str, str]
              ) -> dict[str, Any]:
    mapping = as_data(behaviours)
    buckets = json.dumps(tables.buckets, sort_keys=True, ensure_ascii=False).encode()
    return {
        "format_version": FORMAT_VERSION,
        "data_sha256": tables.data_sha256,
        "submissions": tables.records, "answer_rows": tables.rows,
        "chat_logs_sha256": logs_sha256(logs) if logs is not None else None,
        "chat_dialogues": len(logs) if logs is not None else None,
        "settings": asdict(settings),
        "buckets_sha256": hashlib.sha256(buckets).hexdigest(),
        "behaviours_sha256": hashlib.sha256(json.dumps(mapping, sort_keys=True).encode())
        .hexdigest(),
        "behaviours": mapping,
        "methods": METHODS,
        "metric_signatures": metric_signatures,
        "versions": _versions(),
        "seed": settings.seed,
    }


def _generators(seed: int) -> list[np.random.Generator]:
    """One generator per section, so adding rows to one section leaves the others' draws
    alone; the same for both passes over the main figures."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4)]


def main_figures(tables: Tables, behaviours: list[Behaviour], settings: Settings,
                 step: Any) -> dict[str, Any]:
    """The figures a study reports (MAIN_SECTIONS), and the ranking's notes."""
    rng = _generators(settings.seed)
    b, c = settings.resamples, settings.confidence
    step("behaviour rates")
    rates = behaviour_rates(tables, behaviours, b, rng[0], c)
    step("likert")
    likert = likert_summaries(tables, b, rng[1], c)
    step("comparisons and ranking")
    ranks, notes = ranking(tables, b, rng[2], c)
    return {"behaviour_rates": rates, "likert": likert, "comparisons": pairwise(tables, c),
            "ranking": ranks, "notes": notes}


def _excluding_flagged(tables: Tables, behaviours: list[Behaviour], settings: Settings,
                       main: dict[str, Any]) -> dict[str, Any]:
    workers = worker_exclusions(tables, settings.max_failed_golds)
    units = excluded_units(tables, workers)
    # nothing left out: the same tables and seed would give the same figures
    kept = main_figures(tables.without(units), behaviours, settings,
                        lambda name: None) if units else main
    return {"rule": EXCLUSION_RULE.format(max_failed_golds=settings.max_failed_golds),
            "units_left_out": len(units), "workers_left_out": workers,
            **{key: kept[key] for key in (*MAIN_SECTIONS, "notes")}}


def compute_results(tables: Tables, behaviours: list[Behaviour], settings: Settings,
                    progress: Any = None, logs: list[ChatLog] | None = None
                    ) -> dict[str, Any]:
    """results.json as a dict (docs/analysis.md). `progress(step_name)` is called per step.
    `logs`: the collected chats of the tasks (None: not read, as from an export file)."""
    step = progress or (lambda name: None)
    main = main_figures(tables, behaviours, settings, step)
    step("agreement")
    alpha = agreement(tables, behaviours, settings.resamples, _generators(settings.seed)[3],
                      settings.confidence)
    step("quality")
    figures = quality(tables, settings.max_failed_golds)
    figures["excluding_flagged"] = _excluding_flagged(tables, behaviours, settings, main)
    step("automatic metrics")
    automatic, metric_signatures, chat_notes = automatic_metrics(logs) if logs else ([], {}, [])
    if logs is None and any(u["kind"] == CHAT_KIND for u in tables.units.values()):
        chat_notes = [CHAT_NOTE]
    return {
        "behaviour_rates": main["behaviour_rates"],
        "likert": main["likert"],
        "comparisons": main["comparisons"],
        "position_bias": position_bias(tables, settings.confidence),
        "ranking": main["ranking"],
        "agreement": alpha,
        "quality": figures,
        "automatic_metrics": automatic,
        "notes": main["notes"] + chat_notes,
        "signature": signature(tables, settings, behaviours, logs, metric_signatures),
    }

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
from collection_and_annotations.analysis.behaviours import Behaviour, as_data
from collection_and_annotations.analysis.comparisons import pairwise, position_bias, ranking
from collection_and_annotations.analysis.likert import likert_summaries
from collection_and_annotations.analysis.load import Tables
from collection_and_annotations.analysis.quality import quality
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
}
PACKAGES = ("chat-evaluation-platform", "numpy", "scipy", "matplotlib")


@dataclass(frozen=True)
class Settings:
    tasks: list[str]
    by: str = "bot"
    seed: int = 0
    resamples: int = 1000
    confidence: float = 0.95
    source: str = "database"


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def signature(tables: Tables, settings: Settings, behaviours: list[Behaviour]) -> dict[str, Any]:
    mapping = as_data(behaviours)
    buckets = json.dumps(tables.buckets, sort_keys=True, ensure_ascii=False).encode()
    return {
        "format_version": FORMAT_VERSION,
        "data_sha256": tables.data_sha256,
        "submissions": tables.records, "answer_rows": tables.rows,
        "settings": asdict(settings),
        "buckets_sha256": hashlib.sha256(buckets).hexdigest(),
        "behaviours_sha256": hashlib.sha256(json.dumps(mapping, sort_keys=True).encode())
        .hexdigest(),
        "behaviours": mapping,
        "methods": METHODS,
        "versions": _versions(),
        "seed": settings.seed,
    }


def compute_results(tables: Tables, behaviours: list[Behaviour], settings: Settings,
                    progress: Any = None) -> dict[str, Any]:
    """results.json as a dict (docs/analysis.md). `progress(step_name)` is called per step."""
    step = progress or (lambda name: None)
    # one generator per section, so adding rows to one section leaves the others' draws alone
    seeds = np.random.SeedSequence(settings.seed).spawn(4)
    rng = [np.random.default_rng(s) for s in seeds]
    b, c = settings.resamples, settings.confidence
    step("behaviour rates")
    rates = behaviour_rates(tables, behaviours, b, rng[0], c)
    step("likert")
    likert = likert_summaries(tables, b, rng[1], c)
    step("comparisons and ranking")
    ranks, notes = ranking(tables, b, rng[2], c)
    step("agreement")
    alpha = agreement(tables, behaviours, b, rng[3], c)
    step("quality")
    return {
        "behaviour_rates": rates,
        "likert": likert,
        "comparisons": pairwise(tables, c),
        "position_bias": position_bias(tables, c),
        "ranking": ranks,
        "agreement": alpha,
        "quality": quality(tables),
        "notes": notes,
        "signature": signature(tables, settings, behaviours),
    }

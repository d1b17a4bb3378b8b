"""The results of a study: every section computed from the tidy tables, with a signature of how
(data hash, resolved settings, methods, versions, seed). Deterministic given the seed."""

from __future__ import annotations

import hashlib
import json
import platform
from collections import Counter
from dataclasses import asdict, dataclass
from importlib import metadata
from typing import Any

import numpy as np

from collection_and_annotations.analysis import multiplicity
from collection_and_annotations.analysis.agreement import agreement
from collection_and_annotations.analysis.annotators import annotators
from collection_and_annotations.analysis.answer_shares import answer_shares
from collection_and_annotations.analysis.answers import (
    LabelAnswers,
    RatingAnswers,
    label_answers,
    rating_answers,
)
from collection_and_annotations.analysis.automatic import automatic_metrics
from collection_and_annotations.analysis.behaviours import Behaviour, as_data
from collection_and_annotations.analysis.chat_logs import CHAT_KIND, ChatLog, logs_sha256
from collection_and_annotations.analysis.comparisons import pairwise, position_bias, ranking
from collection_and_annotations.analysis.differences import differences
from collection_and_annotations.analysis.judges import (
    MIN_ITEMS,
    JudgeData,
    judge_section,
    judges_signature,
)
from collection_and_annotations.analysis.likert import likert_summaries
from collection_and_annotations.analysis.load import Tables
from collection_and_annotations.analysis.multiplicity import adjust_rows
from collection_and_annotations.analysis.quality import (
    EXCLUSION_RULE,
    excluded_units,
    quality,
    worker_exclusions,
)
from collection_and_annotations.analysis.rates import behaviour_rates
from collection_and_annotations.analysis.texts import text_appendix, text_summaries

FORMAT_VERSION = 4  # 3: judges, bias, judge_figures; 4: answer_shares, texts, text_appendix
METHODS = {
    "behaviour_rates": "share of annotated bot turn x annotator pairs whose answer holds the "
                       "label; Wilson interval on the effective sample size of the "
                       "dialogue-clustered (cluster-robust) variance, t quantile on dialogues - "
                       "1 degrees of freedom; the worker-aware interval clusters by dialogue "
                       "and worker",
    "likert": "mean of the ratings; the same interval on the 1-5 scale",
    "answer_shares": "per question of a question tree, bot and answer: the share of annotated "
                     "bot turn x annotator pairs asked the question (a radio question when "
                     "answered, a checkbox question whenever its parent answer was chosen) "
                     "giving that answer; the interval of the behaviour rates",
    "texts": "per free-text bucket (and explanations beside answers) and bot: texts given, "
             "left empty, and their length in characters and words; every text in the "
             "appendix",
    "differences": "difference between two bots' rates or means (A - B), MOVER interval from "
                   "the two intervals and their correlation through shared units (paired "
                   "answers); p-value: the smallest 1 - confidence whose interval leaves out "
                   "0; effect size Cohen's h (rates) or Cliff's delta (ratings)",
    "comparisons": "wins/ties/losses per bot pair; win_rate = wins / (wins + losses), "
                   "Clopper-Pearson interval, two-sided sign (binomial) test; ties excluded",
    "adjustment": "p_adjusted: {adjust} across the family of every differences and "
                  "comparisons p-value of the figures",
    "position_bias": "share of decisive answers choosing the left dialogue, Clopper-Pearson "
                     "interval, two-sided binomial test against 0.5",
    "ranking": "Bradley-Terry log-strengths (mean 0; P(i beats j) = 1 / (1 + exp(s_j - s_i))), "
               "maximum a posteriori with one virtual tie of each bot against a reference of "
               "score 0 (every score finite), MM algorithm, ties as half a win for each side; "
               "percentile intervals of scores and ranks from resampling comparisons; equal "
               "scores share a rank",
    "agreement": "Krippendorff's alpha on items with >= 2 annotators: nominal for turn labels "
                 "(presence/absence, bots pooled) and comparisons, ordinal for 1-5 ratings; "
                 "percentile interval from resampling items",
    "annotators": "per worker: share of the units, label rate and Likert mean against the "
                  "other annotators' on the same items, share of agreeing answer pairs with "
                  "them; the work is concentrated when the effective number of workers "
                  "(1 / sum of squared unit shares) is below 10",
    "review": "units the requester rejected or soft-rejected are left out of every figure; "
              "review.including_rejected holds the main figures with them",
    "quality": "screening pass rate and gold accuracy: units passed / units scored, per worker "
               "and overall; the main figures again without flagged or disqualified work "
               "(quality.excluding_flagged), with the same seed",
    "judges": "each LLM judge against the people on the same items (rejected work left out): "
              "accuracy against the human majority (the unique most frequent answer) with the "
              "dialogue-clustered interval, Cohen's kappa against it (quadratic weights for "
              "1-5 ratings), Krippendorff's alpha of the humans and with the judge as one more "
              "annotator on the items with >= 2 human answers, paired item bootstrap; verdict "
              "'worse than humans' when the interval of the alpha difference lies below 0, "
              "'too little data' below {min_items} such items; bias: the judge's rate or mean "
              "minus the humans' per bot, MOVER interval; rankings: Spearman's rank "
              "correlation of the bots' means or Bradley-Terry scores (3 bots or more)",
    "automatic_metrics": "the metrics registry through metrics.compute (as `evaluate`) over "
                         "collected chats, per bot: richness of bot turns, bot latency from "
                         "the stored latency_ms / first_piece_ms, worker response time from "
                         "sent_at",
}
# The figures computed once per pass: the main one, with rejected work (review), and without
# flagged or disqualified work (quality).
MAIN_SECTIONS = ("behaviour_rates", "likert", "differences", "comparisons", "ranking")
CHAT_NOTE = ("automatic metrics over collected chats are computed from the database only "
             "(an export file has no chat messages); analyze the chat task with "
             "--database-url or --data-dir")
PACKAGES = ("chat-evaluation-platform", "numpy", "scipy", "matplotlib")
STEPS = 9  # progress steps of compute_results


@dataclass(frozen=True)
class Settings:
    tasks: list[str]
    by: str = "bot"
    seed: int = 0
    resamples: int = 1000
    confidence: float = 0.95
    source: str = "database"
    max_failed_golds: int = 0
    adjust: str = "holm"  # multiplicity.METHODS


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def signature(tables: Tables, settings: Settings, behaviours: list[Behaviour],
              logs: list[ChatLog] | None, metric_signatures: dict[str, str],
              judges: dict[str, JudgeData]) -> dict[str, Any]:
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
        "methods": {**METHODS, "adjustment": METHODS["adjustment"].format(
            adjust=multiplicity.METHODS[settings.adjust]),
            "judges": METHODS["judges"].format(min_items=MIN_ITEMS)},
        "judges": judges_signature(judges),
        "metric_signatures": metric_signatures,
        "versions": _versions(),
        "seed": settings.seed,
    }


def _generators(seed: int) -> list[np.random.Generator]:
    """One generator per resampled section (ranking, agreement, judges), so adding rows to one
    section leaves the others' draws alone; the same for every pass over the main figures."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3)]


@dataclass(frozen=True)
class Pass:
    """One pass's tables and the answers every section reads."""

    tables: Tables
    labels: list[LabelAnswers]
    ratings: list[RatingAnswers]

    def without(self, units: set[str]) -> Pass:
        """The same pass with the rows of `units` left out (the answers are filtered, not
        read again)."""
        if not units:
            return self
        return Pass(self.tables.without(units), [t.without(units) for t in self.labels],
                    [t.without(units) for t in self.ratings])


def _pass(tables: Tables, behaviours: list[Behaviour]) -> Pass:
    return Pass(tables, label_answers(tables, behaviours), rating_answers(tables))


def main_figures(figures: Pass, settings: Settings, step: Any) -> dict[str, Any]:
    """The figures a study reports (MAIN_SECTIONS), their p-values adjusted as one family, and
    the ranking's notes."""
    b, c = settings.resamples, settings.confidence
    step("behaviour rates")
    rates = behaviour_rates(figures.labels, c)
    step("likert")
    likert = likert_summaries(figures.ratings, c)
    step("differences")
    diffs = differences(figures.labels, figures.ratings, c)
    step("comparisons and ranking")
    ranks, notes = ranking(figures.tables, b, _generators(settings.seed)[0], c)
    compared = pairwise(figures.tables, c)
    adjust_rows([*diffs, *compared], settings.adjust)
    return {"behaviour_rates": rates, "likert": likert, "differences": diffs,
            "comparisons": compared, "ranking": ranks, "notes": notes}


def _excluding_flagged(kept: Pass, settings: Settings, main: dict[str, Any]) -> dict[str, Any]:
    workers = worker_exclusions(kept.tables, settings.max_failed_golds)
    units = excluded_units(kept.tables, workers) - kept.tables.left_out
    # nothing left out: the same tables and seed give the same figures
    figures = main_figures(kept.without(units), settings, lambda name: None) if units else main
    return {"rule": EXCLUSION_RULE.format(max_failed_golds=settings.max_failed_golds),
            "units_left_out": len(units), "workers_left_out": workers,
            **{key: figures[key] for key in (*MAIN_SECTIONS, "notes")}}


def _review(everyone: Pass, rejected: set[str], settings: Settings,
            main: dict[str, Any]) -> dict[str, Any]:
    """How many units the review decisions leave out, and the main figures with them."""
    decisions = Counter(everyone.tables.units[u]["review"] for u in rejected)
    with_them = main_figures(everyone, settings, lambda name: None) if rejected else main
    return {"units_left_out": len(rejected), "rejected": decisions["reject"],
            "soft_rejected": decisions["soft_reject"],
            "including_rejected": {key: with_them[key] for key in (*MAIN_SECTIONS, "notes")}}


def _reading_notes(tables: Tables) -> list[str]:
    notes = []
    if tables.repeated:
        notes.append(f"{tables.repeated} submission(s) of a unit already read (the same "
                     "submission twice in the input) were counted once")
    if tables.unreadable:
        shown = "; ".join(tables.unreadable[:5])
        more = f" and {len(tables.unreadable) - 5} more" if len(tables.unreadable) > 5 else ""
        notes.append(f"{len(tables.unreadable)} submission(s) could not be read and are left "
                     f"out of every figure ({shown}{more})")
    return notes


def _coverage_notes(tables: Tables, labels: list[LabelAnswers],
                    ratings: list[RatingAnswers], shares: list[dict[str, Any]]) -> list[str]:
    """Name every answered bucket a section leaves out, and why."""
    rated = {t.bucket for t in labels}
    shared = {r["bucket"] for r in shares}
    figured = rated | shared | {r.bucket for r in ratings} | {c[0] for c in tables.comparisons} \
        | {bucket for bucket, kind in tables.texts if kind == "answer"}
    notes = []
    for bucket, definition in sorted(tables.buckets.items()):
        config = definition.get("config")
        if bucket not in figured:
            notes.append(f"bucket '{bucket}' ({config}) is in no figure: none of its answers "
                         "is on a bot turn (or at dialogue level for ratings, comparisons and "
                         "free text)")
        elif bucket in shared and bucket not in rated:
            notes.append(f"bucket '{bucket}' is not in the behaviour rates (no behaviour of "
                         "the mapping derives a label from it; add one with --behaviours): "
                         "its answers are in the answer shares")
    return notes


def compute_results(tables: Tables, behaviours: list[Behaviour], settings: Settings,
                    progress: Any = None, logs: list[ChatLog] | None = None,
                    judges: dict[str, JudgeData] | None = None) -> dict[str, Any]:
    """results.json as a dict (docs/analysis.md). `progress(step_name)` is called per step.
    `logs`: the collected chats of the tasks (None: not read, as from an export file);
    `judges`: the LLM judges' answers (`analysis.judges.without_judges` sets them aside)."""
    judges = judges or {}
    step = progress or (lambda name: None)
    rejected = tables.rejected_units()
    everyone = _pass(tables, behaviours)
    kept = everyone.without(rejected)
    main = main_figures(kept, settings, step)
    shares = answer_shares(kept.tables, settings.confidence)
    step("agreement")
    alpha = agreement(kept.tables, kept.labels, kept.ratings, settings.resamples,
                      _generators(settings.seed)[1], settings.confidence)
    step("judges")
    judged = judge_section(kept.tables, judges, behaviours, settings.resamples,
                           _generators(settings.seed)[2], settings.confidence)
    step("annotators")
    workers = annotators(kept.tables, kept.labels, kept.ratings)
    step("quality")
    figures = quality(tables, settings.max_failed_golds)
    figures["excluding_flagged"] = _excluding_flagged(kept, settings, main)
    review = _review(everyone, rejected, settings, main)
    step("automatic metrics")
    kept_logs = None if logs is None else [log for log in logs if log.unit not in rejected]
    automatic, metric_signatures, chat_notes = (automatic_metrics(kept_logs) if kept_logs
                                                else ([], {}, []))
    if logs is None and any(u["kind"] == CHAT_KIND for u in tables.units.values()):
        chat_notes = [CHAT_NOTE]
    return {
        "behaviour_rates": main["behaviour_rates"],
        "likert": main["likert"],
        "answer_shares": shares,
        "texts": text_summaries(kept.tables),
        "text_appendix": text_appendix(kept.tables),
        "differences": main["differences"],
        "comparisons": main["comparisons"],
        "position_bias": position_bias(kept.tables, settings.confidence),
        "ranking": main["ranking"],
        "agreement": alpha,
        "annotators": workers,
        "review": review,
        "quality": figures,
        "automatic_metrics": automatic,
        **judged,
        "notes": _reading_notes(tables) + main["notes"]
        + _coverage_notes(kept.tables, kept.labels, kept.ratings, shares) + chat_notes
        + ([workers["note"]] if workers["note"] else []),
        "signature": signature(tables, settings, behaviours, logs, metric_signatures, judges),
    }

"""compute_metrics: selection by name, per-tag breakdowns, ranking metric, clear errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sacrebleu

from collection_and_annotations.metrics import (
    Direction,
    Kind,
    MetricError,
    MetricSpec,
    compute_metrics,
    default_registry,
)
from collection_and_annotations.metrics.base import Metric, Progress, Score, Statistics
from collection_and_annotations.metrics.dst import DialogueStateTracking
from collection_and_annotations.metrics.inputs import Segments, segments_from_records

HYPOTHESES = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
REFERENCES = [
    ["The dog bit the man.", "The dog had bit the man."],
    ["It was not unexpected.", "No one was surprised."],
    ["The man bit him first.", "The man had bitten the dog."],
]
PREDICTIONS = [
    {"id": i, "hypothesis": h, "references": r, "tags": {"bot": bot, "tasks": tasks}}
    for i, (h, r, bot, tasks) in enumerate(
        zip(HYPOTHESES, REFERENCES, ["a", "b", "a"], [["x"], ["x", "y"], []], strict=True)
    )
]


def corpus_bleu(indices: list[int]) -> float:
    streams = [[REFERENCES[i][k] for i in indices] for k in range(2)]
    return sacrebleu.corpus_bleu([HYPOTHESES[i] for i in indices], streams).score


def test_overall_and_per_tag_values_equal_sacrebleu_on_each_subset() -> None:
    result = compute_metrics(PREDICTIONS, "bleu,chrf", by=["bot", "tasks"])
    bleu = result["metrics"]["bleu"]
    assert bleu["value"] == pytest.approx(corpus_bleu([0, 1, 2]), abs=1e-12)
    assert bleu["n"] == 3
    assert bleu["signature"].startswith("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|")
    assert bleu["direction"] == "higher" and bleu["kind"] == "reference-based"
    groups = bleu["by_tag"]["bot"]["groups"]
    assert groups["a"] == {"value": pytest.approx(corpus_bleu([0, 2]), abs=1e-12), "n": 2}
    assert groups["b"] == {"value": pytest.approx(corpus_bleu([1]), abs=1e-12), "n": 1}
    assert bleu["by_tag"]["bot"]["macro_average"] == pytest.approx(
        (corpus_bleu([0, 2]) + corpus_bleu([1])) / 2
    )
    # a record with several values of a tag counts in each; an empty list in none
    tasks = bleu["by_tag"]["tasks"]["groups"]
    assert (tasks["x"]["n"], tasks["y"]["n"]) == (2, 1)
    assert tasks["x"]["value"] == pytest.approx(corpus_bleu([0, 1]), abs=1e-12)
    assert result["perf_metric"] == "bleu" and result["perf"] == bleu["value"]
    assert result["perf_by_tag"]["bot"] == {"a": groups["a"]["value"], "b": groups["b"]["value"]}


def test_default_breakdown_is_by_the_declared_tags() -> None:
    result = compute_metrics(PREDICTIONS, ["richness"])
    assert result["by"] == ["bot", "tasks"]
    assert set(result["metrics"]["richness"]["by_tag"]["bot"]["groups"]) == {"a", "b"}
    assert compute_metrics(PREDICTIONS, ["richness"], by=[])["metrics"]["richness"]["by_tag"] == {}


def test_perf_metric_names_a_component_of_a_bundle() -> None:
    result = compute_metrics(PREDICTIONS, ["richness", "ter"], perf_metric="richness.msttr")
    assert result["perf"] == result["metrics"]["richness"]["value"]["msttr"]
    assert result["perf_direction"] == "higher"
    assert compute_metrics(PREDICTIONS, ["richness", "ter"])["perf_metric"] == "ter"
    assert "perf_metric" not in compute_metrics(PREDICTIONS, ["richness"])


@pytest.mark.parametrize(
    ("names", "perf", "by", "message"),
    [
        ("nope", None, None, "unknown metric 'nope'; available: bleu, "),
        ("bleu", "chrf", None, "perf_metric 'chrf' is not among the selected metrics (bleu)"),
        ("richness", "richness", None, "name one of them as richness.avg_turn_length"),
        ("bleu", "bleu.x", None, "perf_metric 'bleu.x': bleu has a single value"),
        ("bleu", None, ["model"], "no record has a tag or field 'model'"),
        (" , ", None, None, "no metric selected"),
    ],
)
def test_selection_errors(names: str, perf: str | None, by: list[str] | None, message: str) -> None:
    with pytest.raises(MetricError, match=message.replace("(", r"\(").replace(")", r"\)")):
        compute_metrics(PREDICTIONS, names, perf, by)


def test_reference_based_metric_without_references_names_the_line() -> None:
    records = [*PREDICTIONS, {"hypothesis": "no refs here"}]
    with pytest.raises(MetricError, match=r"<records>, line 4: chrf compares with references"):
        compute_metrics(records, ["chrf"])


def test_dialogues_score_their_system_turns_and_break_down_by_any_field() -> None:
    dialogues = [
        {"dialogue_id": "1", "bot": "x", "turns": [["user", "hi"], ["system", "hello there"]]},
        {"dialogue_id": "2", "bot": "y", "turns": [["user", "hi"], ["system", "hi hi hi"]]},
    ]
    result = compute_metrics(dialogues, ["richness"], by=["bot"])
    richness = result["metrics"]["richness"]
    assert richness["n"] == 2
    assert richness["value"]["num_unigrams"] == 3
    assert richness["by_tag"]["bot"]["groups"]["y"]["value"]["distinct_1"] == pytest.approx(1 / 3)
    average = richness["by_tag"]["bot"]["macro_average"]
    assert average["avg_turn_length"] == pytest.approx(2.5)


def test_latency_percentiles_per_bot_from_timestamps() -> None:
    def dialogue(bot: str, delays: list[float]) -> dict:
        turns, clock = [], 0.0
        for delay in delays:
            turns.append({"speaker": "user", "text": "q", "timestamp": clock})
            turns.append({"speaker": "system", "text": "a", "timestamp": clock + delay})
            clock += 10
        return {"bot": bot, "turns": turns}

    records = [dialogue("fast", [0.1, 0.2, 0.3]), dialogue("slow", [1.0, 3.0])]
    result = compute_metrics(records, ["latency"], by=["bot"])
    latency = result["metrics"]["latency"]
    assert latency["n"] == 5
    assert latency["direction"] == {"p50": "lower", "p90": "lower", "p99": "lower", "mean": "lower"}
    slow = latency["by_tag"]["bot"]["groups"]["slow"]["value"]
    assert slow["p50"] == pytest.approx(2.0) and slow["p90"] == pytest.approx(2.8)
    assert latency["by_tag"]["bot"]["groups"]["fast"]["value"]["mean"] == pytest.approx(0.2)


def test_metric_without_its_inputs_is_a_clear_error() -> None:
    with pytest.raises(MetricError, match="no response has what latency needs: a timestamp"):
        compute_metrics(PREDICTIONS, ["latency"])
    with pytest.raises(MetricError, match="nothing to score"):
        compute_metrics([{"turns": [["user", "hi"]]}], ["richness"])


def test_groups_without_units_report_null() -> None:
    records = [
        {"hypothesis": "a", "latency": 0.5, "tags": {"bot": "timed"}},
        {"hypothesis": "b", "tags": {"bot": "untimed"}},
    ]
    groups = compute_metrics(records, ["latency"])["metrics"]["latency"]["by_tag"]["bot"]
    assert groups["groups"]["untimed"] == {"value": None, "n": 0}
    assert groups["macro_average"]["p50"] == 0.5


def test_dst_with_a_normalization_hook() -> None:
    def record(text: str, state: dict | None, gold: dict | None) -> dict:
        return {"hypothesis": text, "state": state, "gold_state": gold}

    records = [
        record("x", {"hotel": {"area": "North "}}, {"hotel": {"area": "north"}}),
        record("y", {"hotel": {"area": "centre"}}, {"hotel": {"area": ["center", "centre"]}}),
        record("z", {"taxi": {"leave": "10:00"}}, {}),
        {"hypothesis": "no states"},
    ]
    value = compute_metrics(records, ["dst"])["metrics"]["dst"]
    assert value["n"] == 3
    assert value["value"] == {
        "joint_goal_accuracy": pytest.approx(2 / 3),
        "slot_precision": pytest.approx(2 / 3),
        "slot_recall": 1.0,
        "slot_f1": pytest.approx(0.8),
    }

    def times_only(raw: object) -> str:
        return str(raw) if ":" in str(raw) else ""  # only times count as set

    segments = segments_from_records(records)
    metric = DialogueStateTracking(normalize=times_only)
    statistics = metric.statistics(segments)
    score = metric.score(statistics.rows[statistics.present]).value
    assert score["slot_precision"] == 0.0 and score["joint_goal_accuracy"] == pytest.approx(2 / 3)
    assert metric.signature == "match:exact|normalize:times_only"


def test_dst_needs_both_states() -> None:
    with pytest.raises(MetricError, match=r"line 1: DST needs both 'state' and 'gold_state'"):
        compute_metrics([{"hypothesis": "x", "state": {"a": {"b": "c"}}}], ["dst"])


def test_simultaneous_latency_validates_its_fields() -> None:
    record = {"hypothesis": "x", "delays": [1, 2], "source_length": 0}
    with pytest.raises(MetricError, match="line 1: 'delays' needs 'source_length', a number > 0"):
        compute_metrics([record], ["simultaneous_latency"])


def test_undefined_values_become_null() -> None:
    registry = default_registry()
    registry.add("always_nan", MetricSpec("always_nan", Kind.RESPONSES, "nan", Direction.HIGHER,
                                          NanMetric))
    result = compute_metrics(PREDICTIONS, ["always_nan"], by=[], registry=registry)
    assert result["metrics"]["always_nan"]["value"] is None and result["perf"] is None


class NanMetric(Metric):
    """A metric whose value is undefined (as kappa is when everybody agrees by chance)."""

    signature = "nan"

    def statistics(self, segments: Segments, progress: Progress | None = None) -> Statistics:
        return Statistics.complete(np.zeros(len(segments)))

    def score(self, rows: np.ndarray) -> Score:
        return Score(math.nan)


def test_registry_refuses_duplicates_and_bad_names() -> None:
    registry = default_registry()
    spec = registry.get("bleu")
    with pytest.raises(MetricError, match="already registered"):
        registry.add(spec.name, spec)
    with pytest.raises(MetricError, match="invalid metric name"):
        registry.add("a.b", MetricSpec("a.b", Kind.RESPONSES, "", Direction.HIGHER, spec.factory))
    assert "bleu" in registry and [s.name for s in registry][0] == "bleu"
    registry.add("always_nan", MetricSpec("always_nan", Kind.RESPONSES, "nan", Direction.HIGHER,
                                          NanMetric))
    assert "a.b" not in registry and "always_nan" in registry
    assert "always_nan" not in default_registry()  # added for one use only

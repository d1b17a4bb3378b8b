"""The analysis end to end on generated studies: rates, ratings, ranking, agreement, the CLI
from an export file and from the database, and determinism."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from helpers import cli

from collection_and_annotations.analysis.behaviours import load_behaviours
from collection_and_annotations.analysis.load import Tables, add_records
from collection_and_annotations.analysis.report import render_report
from collection_and_annotations.analysis.results import Settings, compute_results

from .synthetic import BUCKETS, study


def _results(records, resamples=200, seed=0, behaviours=None):
    tables = add_records(Tables(), ((r, BUCKETS) for r in records))
    return compute_results(tables, behaviours or load_behaviours(),
                           Settings(tasks=["t"], seed=seed, resamples=resamples))


@pytest.fixture(scope="module")
def records():
    return study(np.random.default_rng(11), {"alpha": 0.1, "beta": 0.4}, dialogues=30,
                 strengths={"alpha": 0.8, "beta": 0.0, "gamma": -0.8}, comparisons=600,
                 spread=0.3)


@pytest.fixture(scope="module")
def computed(records):
    """The results of `records` (seed 0), computed once for the module."""
    return _results(records)


def test_behaviour_rates_per_bot_with_counts(results):
    rows = {(r["bucket"], r["label"], r["bot"]): r for r in results["behaviour_rates"]}
    # multiselect: label is the option value, named by the shipped ABC-Eval mapping
    row = rows[("consistency_label", "cont_s_ctxt", "alpha")]
    assert row["behaviour"] == "self contradiction"
    assert row["n_turns"] == 30 * 3 * 2 and row["n_dialogues"] == 30
    assert row["n_unique_turns"] == 30 * 3
    assert row["ci_low"] <= row["rate"] <= row["ci_high"]
    assert 0.03 < row["rate"] < 0.2
    assert rows[("consistency_label", "cont_s_ctxt", "beta")]["rate"] > 0.25
    # trees: derived behaviours; the same truth as cont_s_ctxt / cont_p_ctxt
    for bot in ("alpha", "beta"):
        assert rows[("grammar", "uninterpretable", bot)]["rate"] == pytest.approx(
            rows[("consistency_label", "cont_s_ctxt", bot)]["rate"])
        assert rows[("empathy", "empathetic", bot)]["rate"] == pytest.approx(
            rows[("consistency_label", "cont_p_ctxt", bot)]["rate"])
        assert rows[("empathy", "lack of empathy", bot)]["rate"] == pytest.approx(
            1 - rows[("empathy", "empathetic", bot)]["rate"])


def test_likert_comparisons_ranking_agreement(results):
    likert = {r["bot"]: r for r in results["likert"]}
    assert likert["alpha"]["n"] == 60 and sum(likert["alpha"]["distribution"].values()) == 60
    assert likert["alpha"]["ci_low"] <= likert["alpha"]["mean"] <= likert["alpha"]["ci_high"]
    ranking = [r for r in results["ranking"] if r["dimension"] == "all"]
    assert [r["bot"] for r in ranking] == ["alpha", "beta", "gamma"]
    assert [r["rank"] for r in ranking] == [1, 2, 3]
    pairs = {(r["bot_a"], r["bot_b"]): r for r in results["comparisons"]}
    ab = pairs[("alpha", "gamma")]
    assert ab["wins"] > ab["losses"] and ab["p_value"] < 0.05
    assert results["position_bias"][0]["n_decisive"] > 0
    alpha = {(r["bucket"], r["label"]): r for r in results["agreement"]}
    # both annotators see the same truth: perfect agreement on turn labels
    assert alpha[("consistency_label", "cont_s_ctxt")]["alpha"] == pytest.approx(1.0)
    assert alpha[("consistency_label", "cont_s_ctxt")]["n_items"] == 2 * 30 * 3
    assert alpha[("quality_likert", "Quality")]["level"] == "ordinal"
    # one annotator per comparison: no overlap, said so
    assert alpha[("quality_comparative", "chosen dialogue")]["alpha"] is None
    assert "no overlap" in alpha[("quality_comparative", "chosen dialogue")]["note"]


def test_results_are_deterministic_given_the_seed(records, computed):
    first = json.dumps(computed)
    assert first == json.dumps(_results(records, seed=0))
    assert first != json.dumps(_results(records, seed=4))
    assert render_report(json.loads(first)) == render_report(json.loads(first))


def test_user_behaviours_extend_the_mapping(tmp_path, records):
    extra = tmp_path / "mine.json"
    extra.write_text(json.dumps({"behaviours": [
        {"label": "any inconsistency", "bucket": "consistency_label",
         "any": [{"value": "cont_s_ctxt"}, {"value": "cont_p_ctxt"}]}]}))
    results = _results(records, resamples=0, behaviours=load_behaviours(extra))
    labels = {r["label"] for r in results["behaviour_rates"]}
    assert "any inconsistency" in labels and "cont_s_ctxt" in labels




def test_cli_from_an_export_file(tmp_path, records):
    export = tmp_path / "subs.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in records))
    buckets = tmp_path / "buckets.json"
    buckets.write_text(json.dumps({"config": BUCKETS}))
    out, js = tmp_path / "report.html", tmp_path / "results.json"
    result = cli("analyze", "--from", str(export), "--buckets", str(buckets), "--resamples",
                 "100", "--output", str(out), "--json", str(js))
    assert result.returncode == 0, result.stderr
    results = json.loads(js.read_text())
    for key, fields in {
        "behaviour_rates": {"bucket", "label", "bot", "rate", "ci_low", "ci_high", "n_turns",
                            "n_dialogues"},
        "likert": {"bucket", "dimension", "bot", "mean", "ci_low", "ci_high", "n"},
        "agreement": {"bucket", "label", "alpha", "ci_low", "ci_high", "n_items"},
        "ranking": {"bot", "score", "ci_low", "ci_high", "rank"},
    }.items():
        assert results[key] and fields <= set(results[key][0]), key
    assert results["signature"]["settings"]["resamples"] == 100
    assert len(results["signature"]["data_sha256"]) == 64
    html = out.read_text()
    assert html.count("<svg") >= 4 and "http://" not in html.replace(
        "http://www.w3.org", "") and "<script" not in html
    again = tmp_path / "again.json"  # the same in a process of its own (another hash seed)
    subprocess.run([sys.executable, "-m", "collection_and_annotations", "analyze", "--from",
                    str(export), "--buckets", str(buckets), "--resamples", "100", "--json",
                    str(again)], check=True, capture_output=True, timeout=120)
    assert again.read_text() == js.read_text()


def test_cli_needs_buckets_with_a_file(tmp_path):
    export = tmp_path / "subs.jsonl"
    export.write_text("")
    result = cli("analyze", "--from", str(export), "--json", str(tmp_path / "r.json"))
    assert result.returncode != 0 and "--buckets" in result.stderr

"""The report's sections on generated studies with known answers: differences between bots
(paired where one worker saw both), adjusted p-values, rankings that cannot separate bots,
annotators, comparisons stored before sides were recorded, and how the report prints
confidence levels, p-values and legends."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest

from collection_and_annotations.analysis import figures
from collection_and_annotations.analysis.behaviours import load_behaviours
from collection_and_annotations.analysis.load import Tables, add_records
from collection_and_annotations.analysis.report import render_report
from collection_and_annotations.analysis.results import Settings, compute_results
from collection_and_annotations.export.writers import json_safe

from .synthetic import BUCKETS, COMPARE, LABELS, _record, study


def _results(records, **settings):
    tables = add_records(Tables(), ((r, BUCKETS) for r in records))
    return json_safe(compute_results(tables, load_behaviours(),
                                     Settings(tasks=["t"], **{"resamples": 200, **settings})))


@pytest.fixture(scope="module")
def records():
    return study(np.random.default_rng(21), {"alpha": 0.1, "beta": 0.4, "gamma": 0.12},
                 dialogues=25, strengths={"alpha": 0.8, "beta": 0.0, "gamma": -0.8},
                 comparisons=400, spread=0.5)


@pytest.fixture(scope="module")
def computed(records):
    """The results of `records` with the default settings, computed once for the module."""
    return _results(records)


def test_differences_between_every_pair_of_bots(results):
    rates = {(r["bucket"], r["label"], r["bot"]): r for r in results["behaviour_rates"]}
    rows = [r for r in results["differences"] if r["section"] == "behaviour_rates"]
    pairs = {(r["bucket"], r["label"], r["bot_a"], r["bot_b"]): r for r in rows}
    assert len(rows) == len(rates) // 3 * 3  # 3 pairs of 3 bots per label
    row = pairs[("consistency_label", "cont_s_ctxt", "alpha", "beta")]
    alpha = rates[("consistency_label", "cont_s_ctxt", "alpha")]["rate"]
    beta = rates[("consistency_label", "cont_s_ctxt", "beta")]["rate"]
    assert (row["value_a"], row["value_b"]) == (alpha, beta)
    assert row["difference"] == pytest.approx(alpha - beta)
    assert row["ci_low"] < row["difference"] < row["ci_high"] < 0
    assert row["effect_size_name"] == "cohen_h"
    assert row["effect_size"] == pytest.approx(2 * np.arcsin(np.sqrt(alpha))
                                               - 2 * np.arcsin(np.sqrt(beta)))
    assert row["p_value"] < 0.001 and row["paired"] is False
    close = pairs[("consistency_label", "cont_s_ctxt", "alpha", "gamma")]
    assert close["ci_low"] < 0 < close["ci_high"] and close["p_value"] > 0.05
    # Likert: mean difference and Cliff's delta from the two bots' ratings
    likert = {r["bot"]: r for r in results["likert"]}
    [rated] = [r for r in results["differences"]
               if r["section"] == "likert" and (r["bot_a"], r["bot_b"]) == ("alpha", "beta")]
    assert rated["difference"] == pytest.approx(likert["alpha"]["mean"] - likert["beta"]["mean"])
    a = np.repeat(np.arange(1, 6), [likert["alpha"]["distribution"][str(s)] for s in range(1, 6)])
    b = np.repeat(np.arange(1, 6), [likert["beta"]["distribution"][str(s)] for s in range(1, 6)])
    delta = (np.sign(a[:, None] - b[None, :])).mean()
    assert rated["effect_size_name"] == "cliffs_delta"
    assert rated["effect_size"] == pytest.approx(delta)


def test_p_values_are_adjusted_across_the_family(records, results):
    holm = results
    family = [r for r in holm["differences"] + holm["comparisons"]]
    assert all(r["p_adjusted"] >= r["p_value"] for r in family)
    raw = sorted(r["p_value"] for r in family)
    smallest = min(family, key=lambda r: r["p_value"])
    assert smallest["p_adjusted"] == pytest.approx(min(1.0, raw[0] * len(raw)))
    bh = _results(records, adjust="bh")
    assert [r["p_value"] for r in bh["differences"]] == [r["p_value"]
                                                        for r in holm["differences"]]
    assert sum(r["p_adjusted"] for r in bh["differences"]) < sum(
        r["p_adjusted"] for r in holm["differences"])
    assert "Benjamini-Hochberg" in bh["signature"]["methods"]["adjustment"]


def _paired(rng, units=40):
    """Each unit: one dialogue of each bot, labelled by one worker whose own leniency shifts
    both (as in paired chats)."""
    records = []
    speakers = ["user", "system"] * 3
    for u in range(units):
        lenient = rng.normal(0, 1.5)
        record = None
        for bot, base in (("a", -1.5), ("b", -0.8)):
            key = f"k{u}{bot}"
            marked = rng.random(3) < 1 / (1 + np.exp(-(base + lenient)))
            answers = {"consistency_label": {str(t): [LABELS[0]] if marked[i] else []
                                             for i, t in enumerate((1, 3, 5))}}
            one = _record(u, f"w{u}", key, f"{bot}{u}", ["consistency_label"], speakers,
                          {"bot": bot}, answers)
            if record is None:
                record = one
            else:
                record["dialogues"] += one["dialogues"]
                record["answers"].update(one["answers"])
        records.append(record)
    return records


def test_paired_units_give_a_paired_difference():
    results = _results(_paired(np.random.default_rng(5)))
    [row] = [r for r in results["differences"] if r["label"] == LABELS[0]]
    assert row["paired"] is True and row["correlation"] > 0.2
    # the same answers with each bot's dialogues in units of their own: unpaired, wider
    unpaired = []
    for record in _paired(np.random.default_rng(5)):
        for d in record["dialogues"]:
            one = copy.deepcopy(record)
            one["unit_id"] = f"{record['unit_id']}-{d['key']}"
            one["dialogues"] = [d]
            one["answers"] = {d["key"]: record["answers"][d["key"]]}
            unpaired.append(one)
    [apart] = [r for r in _results(unpaired)["differences"] if r["label"] == LABELS[0]]
    assert apart["paired"] is False and apart["correlation"] == pytest.approx(0.0, abs=1e-9)
    assert apart["difference"] == pytest.approx(row["difference"])
    assert row["ci_high"] - row["ci_low"] < apart["ci_high"] - apart["ci_low"]


def test_a_ranking_that_cannot_separate_bots_says_so():
    rng = np.random.default_rng(2)
    records = study(rng, {"a": 0.1}, dialogues=2, comparisons=60,
                    strengths={"a": 0.0, "b": 0.05, "c": 3.0})
    results = _results(records)
    pooled = [r for r in results["ranking"] if r["dimension"] == "all"]
    assert pooled[0]["bot"] == "c" and pooled[0]["rank_low"] == pooled[0]["rank_high"] == 1
    unsure = {r["bot"]: (r["rank_low"], r["rank_high"]) for r in pooled}
    assert unsure["a"] == (2, 3) and unsure["b"] == (2, 3)
    assert any(n.startswith("all: the comparisons cannot separate") and "a (ranks 2-3)" in n
               for n in results["notes"])


def test_bare_options_stored_before_sides_are_the_dialogues_they_name():
    rng = np.random.default_rng(4)
    records = study(rng, {"a": 0.1}, dialogues=2, comparisons=50,
                    strengths={"a": 2.0, "b": -2.0})
    bare = copy.deepcopy(records)
    for record in bare:
        for answers in record["answers"].values():
            chosen = answers.get("quality_comparative")
            if chosen:  # the option that names the chosen dialogue, no side recorded
                name = chosen["dialogue"]["dialogue"]
                chosen["dialogue"] = COMPARE[{"turns": 0, "turns2": 1}.get(name, 2)]
        for dialogue in record["dialogues"]:
            dialogue["left"] = None
    [stored] = _results(records, resamples=0)["comparisons"]
    [read] = _results(bare, resamples=0)["comparisons"]
    assert (read["wins"], read["ties"], read["losses"]) == (
        stored["wins"], stored["ties"], stored["losses"])
    assert read["wins"] > read["losses"] > 0 and read["ties"] < 10


def test_few_workers_doing_most_of_the_work_and_a_lenient_one(records, results):
    assert results["annotators"]["concentrated"] is True  # study(): w0 and w1, 5 comparers
    assert "a few workers did most of the work" in results["annotators"]["note"]
    assert results["annotators"]["note"] in results["notes"]
    html = render_report(results)
    assert "rate [worker-aware CI]" in html and "mean [worker-aware CI]" in html
    for row in results["behaviour_rates"]:
        assert row["ci_low_workers"] <= row["ci_low"] + 1e-12
        assert row["ci_high_workers"] >= row["ci_high"] - 1e-12
    # w1 marks every label on every turn: a lenient annotator, far above the others
    lenient = copy.deepcopy(records)
    for record in lenient:
        for answers in record["answers"].values():
            if record["worker"] == "w1" and "consistency_label" in answers:
                answers["consistency_label"] = {t: list(LABELS)
                                                for t in answers["consistency_label"]}
    workers = {w["worker"]: w for w in _results(lenient)["annotators"]["workers"]}
    assert workers["w1"]["label_rate"] > workers["w1"]["others_label_rate"] + 0.3
    assert workers["w0"]["label_rate"] < workers["w0"]["others_label_rate"] - 0.3
    assert workers["w1"]["agreement"] < 0.9 < results["annotators"]["agreement"]
    # 75 labelled units and 80 of the 400 comparisons, of 150 + 400 units
    assert workers["w1"]["share"] == pytest.approx((75 + 80) / (150 + 400))


def test_report_follows_the_confidence_and_prints_small_p_values(records):
    results = _results(records, confidence=0.9)
    html = render_report(results)
    drawn = re.findall(r"<svg.*?</svg>", html, flags=re.S)
    text = re.sub(r"<svg.*?</svg>", "", html, flags=re.S)
    assert len(drawn) >= 4 and all("90 % intervals" in svg for svg in drawn
                                   if "intervals" in svg)
    assert text.count("90 % interval") >= 4 and not re.search(r"95 ?%", html)
    assert "&lt;\u00a00.001</td>" in text  # "< 0.001", escaped, on one line
    assert "e-0" not in text.split("<h2>Settings and signature</h2>")[0]


@pytest.mark.parametrize("plot", ["rates", "likert", "comparisons"])
def test_legends_never_cover_their_axes(results, plot):
    fig = {"rates": lambda: figures.rates_plot(results["behaviour_rates"], 0.95),
           "likert": lambda: figures.likert_plot(results["likert"]),
           "comparisons": lambda: figures.comparisons_plot(results["comparisons"])}[plot]()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    for covered in (ax.get_window_extent(renderer), ax.xaxis.get_tightbbox(renderer),
                    ax.yaxis.get_tightbbox(renderer)):
        assert not legend.overlaps(covered), plot


def test_few_dialogues_a_rate_of_zero_and_a_single_dialogue():
    rng = np.random.default_rng(9)
    records = study(rng, {"eight": 0.3}, dialogues=8)
    for record in study(rng, {"one": 0.3}, dialogues=1):  # units and keys of their own
        record["unit_id"] = f"one-{record['unit_id']}"
        record["answers"] = {f"one-{k}": v for k, v in record["answers"].items()}
        for dialogue in record["dialogues"]:
            dialogue["key"] = f"one-{dialogue['key']}"
        records.append(record)
    for record in records:  # nobody ever marks "redundant"
        for answers in record["answers"].values():
            for turn in answers.get("consistency_label", {}).values():
                if LABELS[2] in turn:
                    turn.remove(LABELS[2])
    rows = {(r["bot"], r["label"]): r for r in _results(records)["behaviour_rates"]}
    never = rows[("eight", LABELS[2])]
    assert never["rate"] == 0.0 and never["ci_low"] == 0.0 and 0.2 < never["ci_high"] < 0.5
    assert never["note"] == "8 dialogues (fewer than 20): the interval rests on few dialogues"
    single = rows[("one", LABELS[0])]
    assert single["ci_low"] is None and single["ci_high"] is None
    assert single["note"].startswith("a single dialogue: no interval")


def test_a_submission_read_twice_counts_once(records):
    once = _results(records, resamples=0)
    twice = _results(records + records[:40], resamples=0)
    assert twice["behaviour_rates"] == once["behaviour_rates"]
    assert twice["signature"]["submissions"] == once["signature"]["submissions"]
    assert "40 submission(s) of a unit already read" in twice["notes"][0]

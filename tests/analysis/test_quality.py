"""Quality figures and the results without flagged or disqualified work, on generated records
whose answers are known: screening and gold units never count, a worker whose answers are all
wrong moves the figures with everyone and not the ones without them."""

from __future__ import annotations

import copy
import json
import statistics

import numpy as np
import pytest
from helpers import cli

from collection_and_annotations.analysis.behaviours import load_behaviours
from collection_and_annotations.analysis.load import Tables, add_records
from collection_and_annotations.analysis.report import render_report
from collection_and_annotations.analysis.results import MAIN_SECTIONS, Settings, compute_results

from .synthetic import BUCKETS, COMPARE, LABELS, study


def _results(records, max_failed_golds=0):
    tables = add_records(Tables(), ((r, BUCKETS) for r in records))
    return compute_results(tables, load_behaviours(),
                           Settings(tasks=["t"], resamples=50, max_failed_golds=max_failed_golds))


def _renamed(record, worker, unit, **fields):
    out = copy.deepcopy(record)
    out.update(worker=worker, unit_id=unit, **fields)
    return out


def _all_wrong(record):
    """Every label on every bot turn, the lowest rating, the weaker dialogue chosen."""
    answers = next(iter(record["answers"].values()))
    for t in answers.get("consistency_label", {}):
        answers["consistency_label"][t] = list(LABELS)
    if "quality_likert" in answers:
        answers["quality_likert"]["dialogue"]["Quality"] = 1
    if "quality_comparative" in answers:
        beta = "turns" if record["dialogues"][0]["source_fields"]["bot"] == "beta" else "turns2"
        answers["quality_comparative"]["dialogue"] = {"option": COMPARE[1], "side": "right",
                                                      "dialogue": beta}
    return record


def _quality_unit(pool, worker, number, passed, mistakes):
    """A screening or gold unit whose answers, if they counted, would move every figure."""
    base = study(np.random.default_rng(number), {"alpha": 0.5}, dialogues=1, annotators=1)[0]
    return _all_wrong(_renamed(base, worker, f"{pool}-{number}", pool=pool,
                               quality_passed=passed, quality_mistakes=mistakes))


@pytest.fixture(scope="module")
def good():
    # comparisons: bot "alpha" (turns) against "beta" (turns2), alpha much stronger
    return study(np.random.default_rng(5), {"alpha": 0.1, "beta": 0.3}, dialogues=12,
                 strengths={"alpha": 1.5, "beta": 0.0}, comparisons=80)


@pytest.fixture(scope="module")
def quality_units():
    return [_quality_unit("screening", "w0", 1, True, 0),
            _quality_unit("screening", "dropped", 2, False, 6),
            _quality_unit("gold", "w1", 3, True, 0),
            _quality_unit("gold", "w1", 4, False, 1),
            _quality_unit("gold", "bad", 5, False, 3),
            _quality_unit("gold", "late", 6, False, 2),
            _quality_unit("gold", "late", 7, False, 2)]


def _bad_work(good):
    """Worker "bad" redoes every unit of w0 with every answer wrong, all flagged for review;
    worker "late" (two failed golds, not flagged) does the same on w1's units."""
    bad = [_all_wrong(_renamed(r, "bad", f"bad-{r['unit_id']}", flagged_for_review=True))
           for r in good if r["worker"] in ("w0", "w2", "w4")]
    late = [_all_wrong(_renamed(r, "late", f"late-{r['unit_id']}"))
            for r in good if r["worker"] in ("w1", "w3")]
    return bad + late


def _counts(records, bot):
    """(turns labelled cont_s_ctxt, bot turns annotated) and the ratings of `bot`, by hand."""
    labelled = turns = 0
    ratings = []
    for r in records:
        if r["dialogues"][0]["source_fields"].get("bot") != bot or "pool" in r:
            continue
        answers = next(iter(r["answers"].values()))
        for labels in answers.get("consistency_label", {}).values():
            turns += 1
            labelled += "cont_s_ctxt" in labels
        if "quality_likert" in answers:
            ratings.append(answers["quality_likert"]["dialogue"]["Quality"])
    return labelled, turns, ratings


def _wins(records):
    """alpha's wins and losses against beta, by hand."""
    wins = losses = 0
    for r in records:
        answers = next(iter(r["answers"].values()))
        value = answers.get("quality_comparative", {}).get("dialogue")
        fields = r["dialogues"][0]["source_fields"]
        if value is None or value["dialogue"] is None:
            continue
        alpha_won = (fields["bot"] == "alpha") == (value["dialogue"] == "turns")
        wins, losses = wins + alpha_won, losses + (not alpha_won)
    return wins, losses


def test_screening_and_gold_units_never_count(good, quality_units):
    plain, mixed = _results(good), _results(good + quality_units)
    for section in MAIN_SECTIONS:
        assert mixed[section] == plain[section], section
    assert mixed["signature"]["answer_rows"] == plain["signature"]["answer_rows"]


def test_quality_figures(good, quality_units):
    work = good + _bad_work(good)
    quality = _results(work + quality_units, max_failed_golds=1)["quality"]
    assert quality["screening_pass_rate"] == {"passed": 1, "scored": 2, "rate": 0.5}
    assert quality["gold_accuracy"] == {"passed": 1, "scored": 5, "rate": 0.2,
                                        "mean_mistakes": statistics.mean([0, 1, 3, 2, 2])}
    assert quality["units"] == len(work)
    assert quality["units_by_pool"] == {"gold": 5, "main": len(work), "screening": 2}
    durations = [r["timings"]["server"]["duration_seconds"] for r in work]
    assert quality["seconds_per_unit"]["median"] == statistics.median(durations)
    workers = {w["worker"]: w for w in quality["per_worker"]}
    assert workers["w1"]["gold_accuracy"] == 0.5 and workers["w1"]["gold_mean_mistakes"] == 0.5
    assert workers["w1"]["excluded"] is None  # one failed gold is allowed here
    assert workers["dropped"]["screening_pass_rate"] == 0.0 and workers["dropped"]["units"] == 0
    assert workers["dropped"]["excluded"] == "failed screening"
    assert workers["late"]["excluded"] == "failed 2 gold unit(s)"
    assert workers["bad"]["excluded"] == "flagged units only"  # one failed gold is allowed
    assert workers["bad"]["flagged_units"] == workers["bad"]["units"] > 0
    left_out = quality["excluding_flagged"]
    assert left_out["workers_left_out"] == {"dropped": "failed screening",
                                            "late": "failed 2 gold unit(s)"}
    assert left_out["units_left_out"] == len(work) - len(good)  # bad's flagged, late's all


def test_without_flagged_and_disqualified_work(good, quality_units):
    bad = _bad_work(good)
    results = _results(good + bad + quality_units, max_failed_golds=1)
    without = results["quality"]["excluding_flagged"]
    assert "flagged for review" in without["rule"] and "more than 1 gold" in without["rule"]
    for bot in ("alpha", "beta"):
        labelled, turns, ratings = _counts(good, bot)
        bad_labelled, bad_turns, bad_ratings = _counts(bad, bot)
        assert bad_labelled == bad_turns > 0
        row = next(r for r in results["behaviour_rates"]
                   if r["label"] == "cont_s_ctxt" and r["bot"] == bot)
        kept = next(r for r in without["behaviour_rates"]
                    if r["label"] == "cont_s_ctxt" and r["bot"] == bot)
        assert row["rate"] == pytest.approx((labelled + bad_labelled) / (turns + bad_turns))
        assert row["n_turns"] == turns + bad_turns
        assert kept["rate"] == pytest.approx(labelled / turns) and kept["n_turns"] == turns
        mean = next(r for r in results["likert"] if r["bot"] == bot)
        kept_mean = next(r for r in without["likert"] if r["bot"] == bot)
        assert mean["mean"] == pytest.approx(statistics.mean(ratings + bad_ratings))
        assert kept_mean["mean"] == pytest.approx(statistics.mean(ratings))
        assert kept_mean["n"] == len(ratings)
    # every wrong comparison picks beta: with everyone beta ranks first, without it alpha
    wins, losses = _wins(good)
    bad_wins, bad_losses = _wins(bad)
    assert bad_wins == 0 and bad_losses > wins
    everyone = next(r for r in results["comparisons"] if r["bot_a"] == "alpha")
    assert (everyone["wins"], everyone["losses"]) == (wins, losses + bad_losses)
    kept = next(r for r in without["comparisons"] if r["bot_a"] == "alpha")
    assert (kept["wins"], kept["losses"]) == (wins, losses)

    def first(rows):
        return next(r["bot"] for r in rows if r["dimension"] == "all" and r["rank"] == 1)

    assert first(results["ranking"]) == "beta" and first(without["ranking"]) == "alpha"
    html = render_report(json.loads(json.dumps(results)))
    assert "Without flagged or disqualified workers" in html
    assert "without flagged [CI]" in html and "late: failed 2 gold unit(s)" in html


def test_nothing_left_out_gives_the_same_figures(good):
    results = _results(good)
    without = results["quality"]["excluding_flagged"]
    assert without["units_left_out"] == 0 and without["workers_left_out"] == {}
    for section in MAIN_SECTIONS:
        assert without[section] == results[section]
    assert results["quality"]["screening_pass_rate"]["rate"] is None
    assert "are the same" in render_report(json.loads(json.dumps(results)))


def test_cli_max_failed_golds(tmp_path, good, quality_units):
    export = tmp_path / "subs.jsonl"
    export.write_text("".join(json.dumps(r) + "\n"
                              for r in good + _bad_work(good) + quality_units))
    buckets = tmp_path / "buckets.json"
    buckets.write_text(json.dumps({"config": BUCKETS}))
    left_out = {}
    for allowed in (0, 2):
        out = tmp_path / f"results{allowed}.json"
        result = cli("analyze", "--from", str(export), "--buckets", str(buckets), "--resamples",
                     "20", "--max-failed-golds", str(allowed), "--json", str(out))
        assert result.returncode == 0, result.stderr
        results = json.loads(out.read_text())
        left_out[allowed] = results["quality"]["excluding_flagged"]["workers_left_out"]
        assert results["signature"]["settings"]["max_failed_golds"] == allowed
    assert set(left_out[0]) == {"dropped", "w1", "bad", "late"}
    assert set(left_out[2]) == {"dropped"}

"""Every reference vector of ../shared/fixtures/metrics/vectors.json, checked or skipped by name.

A vector whose metric has neither a check nor an explicit skip fails, so none is dropped silently.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
import sacrebleu

from collection_and_annotations.metrics import compute_metrics, default_registry, macro_average
from collection_and_annotations.metrics.agreement import (
    cohens_kappa,
    cohens_kappa_from_table,
    fleiss_kappa,
    krippendorff_alpha,
    krippendorff_alpha_from_counts,
    ratings_to_table,
)
from collection_and_annotations.metrics.latency import simultaneous_latency
from collection_and_annotations.metrics.richness import multiwoz_tokenize
from collection_and_annotations.metrics.sacrebleu_metrics import Bleu, Chrf, Ter

Vector = dict[str, Any]

_MULTIWOZ_RICHNESS = (
    "MultiWOZ lexical richness (avg turn length, conditional bigram entropy, #unique unigrams, "
    "#unique trigrams)"
)
SKIPPED = {
    _MULTIWOZ_RICHNESS: (
        "needs external data: a MultiWOZ predictions file (not in ../shared), normalized by "
        "mwzeval's MultiWOZ-specific code (slot-name delexicalisation, Moses tokenize and "
        "detokenize) that the platform does not replicate; the same formulas and tokenizer are "
        "checked by the 'MultiWOZ lexical richness (toy)' and 'lexical_diversity' vectors"
    ),
    "MultiWOZ BLEU (mwz22 refs) + Inform/Success total": (
        "out of scope and needs external data: the MultiWOZ 2.2 references, goals and venue "
        "database (Inform/Success are MultiWOZ task metrics)"
    ),
    "Dynabench get_macro_f1": "out of scope: classification macro-F1 of Dynabench tasks",
    "Dynabench fairness/robustness delta metric (get_unperturbed_percent with accuracy)": (
        "out of scope: Dynabench robustness over perturbed classification predictions"
    ),
    "Dynabench get_dataperf_f1 (multilabel, per-tag)": (
        "out of scope: Dynabench multilabel classification F1"
    ),
}

CHECKS: dict[str, Callable[[Vector], None]] = {}


def check(*metrics: str) -> Callable[[Callable[[Vector], None]], Callable[[Vector], None]]:
    def register(function: Callable[[Vector], None]) -> Callable[[Vector], None]:
        for metric in metrics:
            CHECKS[metric] = function
        return function

    return register


def test_vector(vector: Vector) -> None:
    metric = vector["metric"]
    if metric in SKIPPED:
        pytest.skip(f"{metric}: {SKIPPED[metric]}")
    assert metric in CHECKS, f"no check for {metric!r}: add one, or an explicit skip with reason"
    CHECKS[metric](vector)


def by_segment(streams: list[list[str | None]]) -> list[list[str]]:
    """sacrebleu's reference streams -> one reference list per segment (None = no reference)."""
    return [[ref for ref in refs if ref is not None] for refs in zip(*streams, strict=True)]


def close(actual: float, expected: float, tolerance: float) -> None:
    assert actual == pytest.approx(expected, abs=tolerance, rel=0)


# --- sacrebleu: BLEU, chrF, TER ----------------------------------------------------------------


@check(
    "BLEU (corpus, raw: tokenize=none, floor smoothing, effective order)",
    "BLEU (raw, floor smoothing value 0.0)",
    "BLEU (raw, effective order)",
)
def _raw_bleu(vector: Vector) -> None:
    # sacrebleu.raw_corpus_bleu(hyps, refs, smooth_value) = these BLEU settings
    smooth = float(re.search(r"refs, (?:smooth_value=)?([\d.]+)\)", vector["inputs"]["call"])[1])
    metric = Bleu(
        tokenize="none",
        smooth_method="floor",
        smooth_value=smooth,
        force=True,
        effective_order=True,
    )
    inputs = vector["inputs"]
    score = metric.corpus_score(inputs["hyps"], by_segment(inputs["refs"]))
    close(score.value / 100, vector["expected"], vector["tolerance"])


@check("BLEU (corpus, multi-reference)")
def _corpus_bleu(vector: Vector) -> None:
    inputs = vector["inputs"]
    score = Bleu(**inputs["kwargs"]).corpus_score(inputs["hyps"], by_segment(inputs["refs"]))
    close(score.value, vector["expected"], vector["tolerance"])


@check("BLEU (corpus, multi-reference) sufficient statistics")
def _readme_statistics(vector: Vector) -> None:
    inputs, expected = vector["inputs"], vector["expected"]
    metric = Bleu()
    score = metric.corpus_score(inputs["hyps"], by_segment(inputs["refs"]))
    details = score.details
    assert f"{score.value:.2f}" == expected["score_2dp"]
    assert "/".join(f"{p:.1f}" for p in details["precisions"]) == expected["precisions_1dp"]
    assert f"{details['bp']:.3f}" == expected["bp_3dp"]
    assert f"{details['sys_len'] / details['ref_len']:.3f}" == expected["ratio_3dp"]
    assert (details["sys_len"], details["ref_len"]) == (expected["sys_len"], expected["ref_len"])
    assert (details["counts"], details["totals"]) == (expected["counts"], expected["totals"])
    assert metric.signature == expected["signature"].replace("<ver>", sacrebleu.__version__)


@check("BLEU (corpus, variable number of references)")
def _variable_references(vector: Vector) -> None:
    inputs, expected = vector["inputs"], vector["expected"]
    metric = Bleu()
    score = metric.corpus_score(inputs["hyps"], by_segment(inputs["refs"]))
    close(score.value, float(expected["score_2dp"]), vector["tolerance"])
    assert (score.details["sys_len"], score.details["ref_len"]) == (
        expected["sys_len"],
        expected["ref_len"],
    )
    assert f"nrefs:{expected['signature_nrefs']}|" in metric.signature


def _cdec_row(correct: list[int], total: list[int], sys_len: int, ref_len: int) -> list[int]:
    """Our BLEU rows follow cdec's mteval layout: correct, total, hyp length, ref length."""
    return [*correct, *total, sys_len, ref_len]


@check("BLEU from sufficient statistics")
def _bleu_from_statistics(vector: Vector) -> None:
    inputs = vector["inputs"]
    row = _cdec_row(inputs["correct"], inputs["total"], inputs["sys_len"], inputs["ref_len"])
    score = Bleu(smooth_method="none").score_from_sum(row)
    close(score.value / 100, vector["expected"], vector["tolerance"])


@check("BLEU from degenerate statistics (floor smoothing)")
def _degenerate(vector: Vector) -> None:
    inputs = vector["inputs"]
    row = _cdec_row(inputs["correct"], inputs["total"], inputs["sys_len"], inputs["ref_len"])
    metric = Bleu(smooth_method="floor", smooth_value=inputs["offset"])
    assert metric.score_from_sum(row).value / 100 == vector["expected"]


@check("BLEU (corpus, max_ngram_order)")
def _max_order(vector: Vector) -> None:
    inputs = vector["inputs"]
    metric = Bleu(max_ngram_order=inputs["order"])
    score = metric.corpus_score(inputs["hyps"], by_segment(inputs["refs"]))
    assert f"{score.value:.2f}" == vector["expected"]


@check("BLEU (sentence, smoothing/tokenizer variants)", "BLEU (sentence, no matching n-grams)")
def _sentence_bleu(vector: Vector) -> None:
    inputs = vector["inputs"]
    metric = Bleu(
        lowercase=inputs.get("lowercase", False),
        tokenize=inputs.get("tokenize", "13a"),
        smooth_method=inputs["smooth_method"],
        smooth_value=inputs.get("smooth_value"),
        effective_order=True,
    )
    score = metric.sentence_score(inputs["hyp"], inputs["refs"])
    close(score.value, vector["expected"], vector["tolerance"])
    # the additive statistics of the one segment give the same value
    row = metric.segment_statistics([inputs["hyp"]], [inputs["refs"]])[0]
    close(metric.score_from_sum(row).value, vector["expected"], vector["tolerance"])


@check(
    "chrF (beta=3, eps smoothing)",
    "chrF (beta=3, effective-order averaging; sacreBLEU default)",
    "chrF (beta=3, keep whitespace)",
)
def _chrf_beta3(vector: Vector) -> None:
    inputs = vector["inputs"]
    call = inputs["call"]
    metric = Chrf(
        char_order=6,
        word_order=0,
        beta=3,
        eps_smoothing="eps_smoothing=True" in call,
        whitespace="remove_whitespace=False" in call,
    )
    score = metric.corpus_score(inputs["hyps"], [[r] for r in inputs["refs_single_stream"]])
    close(score.value, vector["expected"], vector["tolerance"])


@check("chrF2 (sentence, eps smoothing)")
def _chrf_sentence(vector: Vector) -> None:
    inputs = vector["inputs"]
    score = Chrf(eps_smoothing=True).sentence_score(inputs["hyp"], inputs["refs"])
    close(score.value, vector["expected"], vector["tolerance"])


@check("chrF2 (corpus, multi-reference, defaults)")
def _chrf_readme(vector: Vector) -> None:
    inputs = vector["inputs"]
    metric = Chrf()
    score = metric.corpus_score(inputs["hyps"], by_segment(inputs["refs"]))
    close(score.value, vector["expected"], vector["tolerance"])
    assert metric.signature.startswith("nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|")


@check("TER")
def _ter(vector: Vector) -> None:
    inputs = vector["inputs"]
    score = Ter().corpus_score(inputs["hyps"], [[r] for r in inputs["refs_single_stream"]])
    close(score.value / 100, vector["expected"], vector["tolerance"])


@check("BLEU per-segment sufficient statistics (sacrebleu layout, 13a)")
def _segment_statistics(vector: Vector) -> None:
    inputs = vector["inputs"]
    (sys_len, ref_len, *counts) = vector["expected"][
        "stats_[sys_len,ref_len,correct1..4,total1..4]"
    ]
    row = Bleu(tokenize=inputs["tokenize"]).segment_statistics([inputs["hyp"]], [inputs["refs"]])
    assert row[0].tolist() == _cdec_row(counts[:4], counts[4:], sys_len, ref_len)


@check("sacreBLEU tokenizer 13a (mteval-v13a equivalent)")
def _tokenizer_13a(vector: Vector) -> None:
    assert Bleu().tokenize(vector["inputs"]["line"]) == vector["expected"]


@check("Dynabench get_bleu (sacrebleu.corpus_bleu, 13a)")
def _dynabench_bleu(vector: Vector) -> None:
    inputs = vector["inputs"]
    records = [
        {"hypothesis": p, "references": [t]}
        for p, t in zip(inputs["predictions"], inputs["targets"], strict=True)
    ]
    result = compute_metrics(records, ["bleu"])
    close(result["metrics"]["bleu"]["value"], vector["expected"], vector["tolerance"])


@check("Dynabench get_accuracy (target may be list of acceptable labels)")
def _exact_match(vector: Vector) -> None:
    inputs = vector["inputs"]
    records = [
        {"hypothesis": p, "references": t if isinstance(t, list) else [t]}
        for p, t in zip(inputs["predictions"], inputs["targets"], strict=True)
    ]
    value = compute_metrics(records, ["exact_match"])["metrics"]["exact_match"]["value"]
    assert round(value, 2) == vector["expected"]  # Dynabench: round(accuracy * 100, 2)


@check("Dynabench per-tag average (flores compute_averages)")
def _per_tag_average(vector: Vector) -> None:
    average = macro_average(vector["inputs"]["perf_by_tag_perf_dict_sp_bleu"].values())
    close(average, vector["expected"]["perf"], vector["tolerance"])
    assert f"{average:.2f}" == vector["expected"]["pretty_perf"]


# --- IBM BLEU and the mteval protocol (cdec) --------------------------------------------------


@check("IBM BLEU (sentence, 4 references, closest ref length)")
def _ibm_bleu_segment(vector: Vector) -> None:
    inputs = vector["inputs"]
    score = (
        default_registry().get("ibm_bleu").factory().corpus_score([inputs["hyp"]], [inputs["refs"]])
    )
    close(score.value / 100, vector["expected"], vector["tolerance"])


@check("IBM BLEU (corpus = sum of the two segments' statistics)")
def _ibm_bleu_corpus(vector: Vector) -> None:
    segments = vector["inputs"]["segments"]
    metric = default_registry().get("ibm_bleu").factory()
    score = metric.corpus_score([s["hyp"] for s in segments], [s["refs"] for s in segments])
    close(score.value / 100, vector["expected"], vector["tolerance"])


def _serve(metric: str, line: str) -> str:
    """One request to `python -m collection_and_annotations.metrics.serve METRIC`."""
    command = [sys.executable, "-m", "collection_and_annotations.metrics.serve", metric]
    done = subprocess.run(
        command, input=line + "\n", capture_output=True, text=True, timeout=60, check=True
    )
    (answer,) = done.stdout.splitlines()
    return answer


@check("mteval external-evaluator EVAL (IBM BLEU from additive stats)")
def _mteval_eval(vector: Vector) -> None:
    answer = _serve("ibm_bleu", vector["inputs"]["stdin_line"])
    close(float(answer), vector["expected"]["stdout_line_float"], vector["tolerance"])


@check("mteval external-evaluator SCORE (IBM BLEU stats)")
def _mteval_score(vector: Vector) -> None:
    answer = _serve("ibm_bleu", vector["inputs"]["stdin_line"])
    assert answer == " ".join(str(s) for s in vector["expected"]["stats"])


# --- latency of incremental outputs (SimulEval >= 1.1) ----------------------------------------


@check("AP (text, no reference => |Y| = len(delays))")
def _average_proportion(vector: Vector) -> None:
    inputs = vector["inputs"]
    assert len(inputs["delays"]) == inputs["tgt_len"]
    value = simultaneous_latency(inputs["delays"], inputs["src_len"])["AP"]
    close(value, vector["expected"], vector["tolerance"])


@check(
    "LAAL (hypothesis shorter than reference)",
    "LAAL (hypothesis longer than reference)",
    "AL with reference length, SimulEval v1.1.x formula",
)
def _lagging(vector: Vector) -> None:
    inputs = vector["inputs"]
    name = "LAAL" if vector["metric"].startswith("LAAL") else "AL"
    value = simultaneous_latency(inputs["delays"], inputs["src_len"], inputs["ref_len"])[name]
    close(value, vector["expected"], vector["tolerance"])


@check("corpus AL/DAL (mean of sentence scores), wait-3 dummy agent")
def _wait_three(vector: Vector) -> None:
    records = [
        {
            "hypothesis": "",
            "delays": [min(i + 2, length) for i in range(1, length + 1)],
            "source_length": length,
            "reference_length": length,
        }
        for length in vector["inputs"]["source_lengths"]
    ]
    value = compute_metrics(records, ["simultaneous_latency"])["metrics"]["simultaneous_latency"]
    for name, expected in vector["expected"].items():
        close(value["value"][name], expected, vector["tolerance"])


# --- richness and DST (MultiWOZ evaluation) ---------------------------------------------------


@check("MultiWOZ lexical richness (toy)")
def _richness(vector: Vector) -> None:
    records = [{"hypothesis": text} for text in vector["inputs"]["normalized_responses"]]
    value = compute_metrics(records, ["richness"])["metrics"]["richness"]["value"]
    for name, expected in vector["expected"].items():
        ours = value["avg_turn_length" if name == "avg_lengths" else name]
        close(ours, expected, vector["tolerance"])


@check("lexical_diversity.lex_div.tokenize (used by mwzeval richness)")
def _multiwoz_tokenizer(vector: Vector) -> None:
    assert multiwoz_tokenize(vector["inputs"]["raw_text"]) == vector["expected"]


@check("MultiWOZ DST joint accuracy / slot P,R,F1 (get_dst, fuzzy ratio 95)")
def _dst(vector: Vector) -> None:
    inputs = vector["inputs"]
    records = [
        {"hypothesis": turn["response"], "state": turn["state"], "gold_state": gold}
        for dialogue, turns in inputs["hyp"].items()
        for turn, gold in zip(turns, inputs["gold_states"][dialogue], strict=True)
    ]
    value = compute_metrics(records, ["dst"])["metrics"]["dst"]["value"]
    ours = {
        "joint_accuracy": value["joint_goal_accuracy"] * 100,  # mwzeval: percent
        "slot_f1": value["slot_f1"] * 100,  # mwzeval: percent
        "slot_precision": value["slot_precision"],
        "slot_recall": value["slot_recall"],
    }
    for name, expected in vector["expected"].items():
        # mwzeval adds 1e-10 to every denominator: its values are low by ~1e-10 relative
        close(ours[name], expected, vector["tolerance"] + 1e-9 * abs(expected))


# --- agreement --------------------------------------------------------------------------------


@check(
    "Krippendorff's alpha (interval)",
    "Krippendorff's alpha (ordinal)",
    "Krippendorff's alpha (ratio)",
    "Krippendorff's alpha (nominal)",
)
def _alpha(vector: Vector) -> None:
    inputs = vector["inputs"]
    value = krippendorff_alpha(
        inputs["reliability_data"], inputs["level_of_measurement"], inputs["value_domain"]
    )
    close(value, vector["expected"], vector["tolerance"])


@check("Krippendorff's alpha (nominal) from value counts")
def _alpha_counts(vector: Vector) -> None:
    inputs = vector["inputs"]
    value = krippendorff_alpha_from_counts(
        inputs["value_counts_units_x_values"], inputs["level_of_measurement"]
    )
    close(value, vector["expected"], vector["tolerance"])


@check("Krippendorff's alpha (ordinal, ratio) on the Wikipedia data")
def _alpha_levels(vector: Vector) -> None:
    for level, expected in vector["expected"].items():
        value = krippendorff_alpha(vector["inputs"]["reliability_data"], level)
        close(value, expected, vector["tolerance"])


@check(
    "Fleiss' kappa (method=unif)",
    "Fleiss' kappa (method=fleiss)",
    "Fleiss' kappa (method=randolph)",
    "Fleiss' kappa (method=uniform)",
    "Fleiss' kappa (method=rand)",
)
def _fleiss(vector: Vector) -> None:
    inputs = vector["inputs"]
    value = fleiss_kappa(inputs["table_subjects_x_categories"], inputs["method"])
    close(value, vector["expected"], vector["tolerance"])


@check("Fleiss' kappa (Fleiss 1971 diagnoses; R irr kappam.fleiss)")
def _fleiss_diagnoses(vector: Vector) -> None:
    table, _ = ratings_to_table(vector["inputs"]["ratings_subjects_x_raters"])
    close(fleiss_kappa(table), vector["expected"], vector["tolerance"])


@check("Cohen's kappa (contingency table; SAS reference)")
def _cohen_sas(vector: Vector) -> None:
    result = cohens_kappa_from_table(vector["inputs"]["contingency_table"])
    fields = {
        "kappa": result.kappa,
        "ase": result.std_err,
        "ci95_low": result.ci_low,
        "ci95_upp": result.ci_high,
        "ase_h0": result.std_err_h0,
        "z": result.z,
        "p_one_sided": result.p_one_sided,
        "p_two_sided": result.p_two_sided,
    }
    for name, expected in vector["expected"].items():
        close(fields[name], expected, vector["tolerance"])


@check("Cohen's kappa (R irr kappa2, anxiety raters 2 and 3)")
def _cohen_irr(vector: Vector) -> None:
    inputs = vector["inputs"]
    weights = inputs["weights"] if inputs["wt"] == "toeplitz" else inputs["wt"]
    result = cohens_kappa(inputs["rater_a"], inputs["rater_b"], weights)
    fields = {"kappa": result.kappa, "z": result.z, "p": result.p_two_sided}
    for name, expected in vector["expected"].items():
        close(fields[name], expected, vector["tolerance"][name])


@check("Cohen's kappa (sklearn cohen_kappa_score)")
def _cohen_sklearn(vector: Vector) -> None:
    inputs = vector["inputs"]
    result = cohens_kappa(inputs["y1_run_length"], inputs["y2_run_length"], inputs["weights"])
    close(result.kappa, vector["expected"], vector["tolerance"])


@check("agreement edge case")
def _edge_case(vector: Vector) -> None:
    case = vector["id"]
    if case == "edge.fleiss.all_same_category":
        assert math.isnan(fleiss_kappa([[7, 0], [7, 0]]))  # chance agreement 1: undefined
    elif case == "edge.krippendorff.no_pairable_unit":
        with pytest.raises(ValueError, match="at least two coders"):
            krippendorff_alpha([[1, 2, None], [None, None, 3]], "nominal")
    elif case == "edge.krippendorff.default_is_interval":
        data = [[1, 2, 3, 3], [1, 2, 3, 1]]
        expected = vector["expected"]
        close(krippendorff_alpha(data), expected["default(interval)"], vector["tolerance"])
        close(krippendorff_alpha(data, "nominal"), expected["nominal"], vector["tolerance"])
    elif case == "edge.sklearn.cohen_all_same":
        assert math.isnan(cohens_kappa([1, 1, 1], [1, 1, 1]).kappa)
    else:
        pytest.fail(f"agreement edge case {case!r} has no check")

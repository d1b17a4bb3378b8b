"""Generated studies with known answers, as whole-submission records (the export's shape)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

LABELS = ["cont_s_ctxt", "cont_p_ctxt", "redundant"]
GRAMMAR_Q, GRAMMAR_A = "grammar_q", "This response is uninterpretable."
EMPATHY_Q = "Is this response empathetic?"
EMPATHY_YES = "Yes, the speaker demonstrates an understanding of their partner's emotions."
EMPATHY_NO = ("No, the speaker misinterprets their partner's emotions or inappropriately ignores "
              "their partner's feelings.")
COMPARE = ["Dialogue 1 (left)", "Dialogue 2 (right)", "There is no difference"]

BUCKETS: dict[str, Any] = {
    "consistency_label": {"config": "multiselect", "indices": "odd",
                          "task_title": "consistency_label",
                          "options": [{"value": v, "label": v} for v in LABELS]},
    "grammar": {"config": "nondetails_nonhelp_button_flow", "indices": "odd",
                "options": {GRAMMAR_Q: {"_type_": {"checkbox": {}}, GRAMMAR_A: {}}}},
    "empathy": {"config": "nondetails_nonhelp_button_flow", "indices": "odd",
                "options": {EMPATHY_Q: {EMPATHY_YES: {}, EMPATHY_NO: {}, "Not applicable": {}}}},
    "quality_likert": {"config": "likert-5-dialogue", "indices": "no_indices",
                       "options": [{"label": "Quality", "question": "How good?"}]},
    "quality_comparative": {"config": "comparative", "indices": "no_indices",
                            "question": "Which is better?", "options": COMPARE},
}


def study(rng: np.random.Generator, bots: dict[str, float], dialogues: int = 20,
          turns: int = 6, annotators: int = 2, strengths: dict[str, float] | None = None,
          comparisons: int = 0, spread: float = 0.0) -> list[dict[str, Any]]:
    """Submissions: each bot's dialogues (bot turns at odd indices) labelled by `annotators`
    workers; a label holds on a turn with probability `bots[bot]` (dialogue-level logit noise
    `spread`), which every annotator sees; plus `comparisons` comparative units between random
    bot pairs won by BT `strengths`, one per unit."""
    records = []
    speakers = ["user" if i % 2 == 0 else "system" for i in range(turns)]
    unit = 0
    for bot, rate in bots.items():
        for d in range(dialogues):
            logit = np.log(rate / (1 - rate)) + spread * rng.standard_normal()
            p = 1 / (1 + np.exp(-logit))
            truth = rng.random((turns, 3)) < p
            rating = int(rng.integers(1, 6))
            for a in range(annotators):
                unit += 1
                key = f"k{unit}"
                answers = {
                    "consistency_label": {str(t): [LABELS[j] for j in range(3) if truth[t, j]]
                                          for t in range(1, turns, 2)},
                    "grammar": {str(t): {GRAMMAR_Q: {GRAMMAR_A: {}} if truth[t, 0] else {}}
                                for t in range(1, turns, 2)},
                    "empathy": {
                        str(t): {EMPATHY_Q: {EMPATHY_YES if truth[t, 1] else EMPATHY_NO: {}}}
                        for t in range(1, turns, 2)},
                    "quality_likert": {"dialogue": {"Quality": rating}},
                }
                records.append(_record(unit, f"w{a}", key, f"{bot}-d{d}",
                                       list(answers), speakers, {"bot": bot}, answers))
    names = sorted(strengths or {})
    for c in range(comparisons):
        unit += 1
        i, j = rng.choice(len(names), 2, replace=False)
        a, b = names[i], names[j]
        pa = 1 / (1 + np.exp(strengths[b] - strengths[a]))
        left = "turns" if rng.random() < 0.5 else "turns2"
        won = "turns" if rng.random() < pa else "turns2"
        side = "left" if won == left else "right"
        value = {"option": COMPARE[0 if side == "left" else 1], "side": side, "dialogue": won}
        if rng.random() < 0.1:
            value = {"option": COMPARE[2], "side": None, "dialogue": None}
        answers = {"quality_comparative": {"dialogue": value}}
        records.append(_record(unit, f"w{c % 5}", f"k{unit}", f"cmp{c}",
                               ["quality_comparative"], speakers, {"bot": a, "bot2": b},
                               answers, left=left))
    return records


def _record(unit: int, worker: str, key: str, dialogue_id: str, tasks: list[str],
            speakers: list[str], fields: dict[str, str], answers: dict[str, Any],
            left: str | None = None) -> dict[str, Any]:
    return {
        "task": "t", "task_kind": "static_annotation", "run_id": 1, "unit_id": f"u{unit}",
        "worker": worker, "submitted_at": "2026-01-01T00:00:00Z",
        "timings": {"server": {"duration_seconds": 30.0 + unit % 7}, "client": None},
        "layout": None,
        "dialogues": [{"key": key, "dialogue_id": dialogue_id, "group_id": f"g-{dialogue_id}",
                       "speakers": speakers, "position": 1, "tasks": tasks, "left": left,
                       "source_fields": fields}],
        "answers": {key: answers},
    }


def clustered_answers(rng: np.random.Generator, dialogues: int, rate: float = 0.2,
                      spread: float = 1.5, annotators: int = 2, flip: float = 0.05
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """0/1 answers of `annotators` on 2-6 bot turns per dialogue, each dialogue's rate drawn on
    the logit scale around `rate` with sd `spread` (strong within-dialogue correlation), each
    annotator flipping an answer with probability `flip`; returns the answers and their
    dialogue and worker codes."""
    effects = math.log(rate / (1 - rate)) + spread * rng.standard_normal(dialogues)
    turns = rng.integers(2, 7, dialogues)
    truth = rng.random(turns.sum()) < np.repeat(1 / (1 + np.exp(-effects)), turns)
    values = np.concatenate([np.where(rng.random(len(truth)) < flip, ~truth, truth)
                             for _ in range(annotators)]).astype(float)
    workers = np.repeat(np.arange(annotators), len(truth))
    return values, np.tile(np.repeat(np.arange(dialogues), turns), annotators), workers


def true_rate(rate: float = 0.2, spread: float = 1.5, flip: float = 0.05) -> float:
    """The rate `clustered_answers` estimates: the mean over dialogues of their (noisy) rate,
    from 2,000,000 draws."""
    effects = math.log(rate / (1 - rate)) + spread * np.random.default_rng(0).standard_normal(
        2_000_000)
    p = 1 / (1 + np.exp(-effects))
    return float(np.mean(p * (1 - flip) + (1 - p) * flip))


def clustered_ratings(rng: np.random.Generator, dialogues: int, spread: float = 1.0
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Turn-level 1-5 ratings of 2 annotators on 2-6 bot turns per dialogue: a dialogue's
    quality (sd `spread`) shared by its turns, turn and annotator noise; answers and dialogue
    codes."""
    quality = spread * rng.standard_normal(dialogues)
    turns = rng.integers(2, 7, dialogues)
    latent = np.repeat(quality, turns) + 0.5 * rng.standard_normal(turns.sum())
    values = np.concatenate([np.clip(np.round(3 + latent + 0.7 * rng.standard_normal(
        len(latent))), 1, 5) for _ in range(2)])
    return values, np.tile(np.repeat(np.arange(dialogues), turns), 2)


def true_rating(spread: float = 1.0) -> float:
    """The mean `clustered_ratings` estimates, from 2,000,000 draws."""
    big = np.random.default_rng(1)
    latent = spread * big.standard_normal(2_000_000) + 0.5 * big.standard_normal(2_000_000)
    return float(np.clip(np.round(3 + latent + 0.7 * big.standard_normal(2_000_000)), 1,
                         5).mean())


def dialogue_bootstrap(values: np.ndarray, dialogues: np.ndarray, rng: np.random.Generator,
                       resamples: int = 400, confidence: float = 0.95) -> np.ndarray:
    """The interval the analysis used before issue 24: dialogues resampled with replacement,
    the percentile interval of the resampled rates."""
    sums = np.bincount(dialogues, weights=values)
    sizes = np.bincount(dialogues).astype(float)
    picks = rng.integers(0, len(sums), (resamples, len(sums)))
    rates = sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)
    tail = (1 - confidence) / 2 * 100
    return np.percentile(rates, [tail, 100 - tail])


FEW_WORKERS_BASE = math.log(0.2 / 0.8)


def few_workers_answers(rng: np.random.Generator, bias: float, dialogues: int = 25
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """4 workers, each with their own logit bias (sd `bias`), did all the work: 2 of them on
    each dialogue, 4 bot turns each; answers, dialogue and worker codes."""
    effects = bias * rng.standard_normal(4)
    quality = FEW_WORKERS_BASE + rng.standard_normal(dialogues)
    pairs = np.array([rng.choice(4, 2, replace=False) for _ in range(dialogues)])
    workers = np.repeat(pairs.ravel(), 4)
    groups = np.repeat(np.arange(dialogues), 8)
    p = 1 / (1 + np.exp(-(quality[groups] + effects[workers])))
    return (rng.random(len(p)) < p).astype(float), groups, workers


def few_workers_truth(bias: float) -> float:
    """The rate `few_workers_answers` estimates: over the population of dialogues and
    workers."""
    big = np.random.default_rng(0).standard_normal((2, 2_000_000))
    return float(np.mean(1 / (1 + np.exp(-(FEW_WORKERS_BASE + big[0] + bias * big[1])))))

"""Generated studies with known answers, as whole-submission records (the export's shape)."""

from __future__ import annotations

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

"""Behaviour rates per bot (the ABC-Eval table): the share of annotated bot turn x annotator
pairs whose answer holds the label, with the dialogue-clustered interval of
`analysis.intervals` and its worker-aware variant (dialogues and workers both as clusters)."""

from __future__ import annotations

from typing import Any

import numpy as np

from collection_and_annotations.analysis.answers import LabelAnswers
from collection_and_annotations.analysis.intervals import clustered_means, few_clusters_note


def behaviour_rates(labels: list[LabelAnswers], confidence: float) -> list[dict[str, Any]]:
    rows = []
    for table in labels:
        answers = table.answers
        for bot in sorted(set(answers.bots.tolist())):
            mine = answers.where(answers.bots == bot)
            rates, _ = clustered_means(mine.values, [mine.dialogues], confidence)
            aware, _ = clustered_means(mine.values, [mine.dialogues, mine.workers], confidence)
            dialogues = len(np.unique(mine.dialogues))
            counts = {"n_turns": len(mine.values), "n_unique_turns": len(np.unique(mine.items)),
                      "n_dialogues": dialogues, "n_workers": len(np.unique(mine.workers)),
                      "note": few_clusters_note(dialogues)}
            for j, (label, behaviour, _) in enumerate(table.columns):
                rows.append({
                    "bucket": table.bucket, "label": label, "behaviour": behaviour, "bot": bot,
                    "rate": rates[j].value, "ci_low": rates[j].ci_low,
                    "ci_high": rates[j].ci_high, "ci_low_workers": aware[j].ci_low,
                    "ci_high_workers": aware[j].ci_high,
                    "n_with_label": int(mine.values[:, j].sum()), **counts,
                })
    return rows

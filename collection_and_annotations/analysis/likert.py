"""Likert and per-option 1-5 ratings: mean with the dialogue-clustered interval of
`analysis.intervals` (and its worker-aware variant), median, sd and distribution per bucket,
dimension and bot."""

from __future__ import annotations

from typing import Any

import numpy as np

from collection_and_annotations.analysis.answers import RatingAnswers
from collection_and_annotations.analysis.intervals import clustered_means, few_clusters_note

SCALE = (1, 2, 3, 4, 5)
BOUNDS = (1.0, 5.0)


def likert_summaries(ratings: list[RatingAnswers], confidence: float) -> list[dict[str, Any]]:
    rows = []
    for table in ratings:
        answers = table.answers
        for bot in sorted(set(answers.bots.tolist())):
            mine = answers.where(answers.bots == bot)
            values = mine.values
            [mean], _ = clustered_means(values, [mine.dialogues], confidence, BOUNDS)
            [aware], _ = clustered_means(values, [mine.dialogues, mine.workers], confidence,
                                         BOUNDS)
            dialogues = len(np.unique(mine.dialogues))
            rows.append({
                "bucket": table.bucket, "dimension": table.dimension, "level": table.level,
                "bot": bot, "mean": mean.value, "ci_low": mean.ci_low,
                "ci_high": mean.ci_high, "ci_low_workers": aware.ci_low,
                "ci_high_workers": aware.ci_high, "median": float(np.median(values)),
                "sd": float(values.std(ddof=1)) if len(values) > 1 else None,
                "distribution": {str(s): int((values == s).sum()) for s in SCALE},
                "n": len(values), "n_dialogues": dialogues,
                "n_workers": len(np.unique(mine.workers)),
                "note": few_clusters_note(dialogues),
            })
    return rows

"""Free text: per text bucket (and per bucket whose answers carry an explanation) and bot,
how many texts were given and left empty and how long they are; and every text, for the
report's appendix."""

from __future__ import annotations

import statistics
from typing import Any

from collection_and_annotations.analysis.load import Tables


def text_summaries(tables: Tables) -> list[dict[str, Any]]:
    """`[{"bucket", "kind": "answer"|"explanation", "bot", "n", "answered", "missing",
    "chars_mean", "chars_median", "chars_min", "chars_max", "words_mean"}]`: `n` targets
    with a stored text, `missing` those left empty; lengths of the answered ones."""
    rows = []
    for (bucket, kind), answers in sorted(tables.texts.items()):
        for bot in sorted({a.bot for a in answers.values()}):
            texts = [a.text.strip() for a in answers.values() if a.bot == bot]
            given = [t for t in texts if t]
            chars = [len(t) for t in given]
            rows.append({
                "bucket": bucket, "kind": kind, "bot": bot, "n": len(texts),
                "answered": len(given), "missing": len(texts) - len(given),
                "chars_mean": statistics.fmean(chars) if chars else None,
                "chars_median": statistics.median(chars) if chars else None,
                "chars_min": min(chars, default=None), "chars_max": max(chars, default=None),
                "words_mean": statistics.fmean(len(t.split()) for t in given) if given else None,
            })
    return rows


def text_appendix(tables: Tables) -> list[dict[str, Any]]:
    """Every non-empty text with where it was given: `[{"bucket", "kind", "bot", "dialogue",
    "turn", "worker", "text"}]`, by bucket, kind, bot, dialogue and turn."""
    rows = [{"bucket": bucket, "kind": kind, "bot": a.bot, "dialogue": a.dialogue,
             "turn": a.turn, "worker": a.worker, "text": a.text.strip()}
            for (bucket, kind), answers in tables.texts.items() for a in answers.values()
            if a.text.strip()]
    return sorted(rows, key=lambda r: (r["bucket"], r["kind"], r["bot"], r["dialogue"],
                                       -1 if r["turn"] is None else r["turn"], r["worker"]))

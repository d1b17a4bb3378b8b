"""Answer shares of question trees (radio and checkbox questions, such as the demo's
`relevance`): per question, bot and answer, the share of annotated bot turns x annotators
giving that answer, with the dialogue-clustered interval of the behaviour rates. Needs no
behaviour mapping, so every tree bucket a study asks has figures."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from collection_and_annotations.analysis.intervals import clustered_means, few_clusters_note
from collection_and_annotations.analysis.load import AnnotatedTurn, Tables
from collection_and_annotations.blueprints.static_annotation.buckets import TREE_CONFIGS
from collection_and_annotations.blueprints.static_annotation.dependencies import RESERVED


@dataclass(frozen=True)
class Question:
    """A question of a tree, its answers and when it is asked: always (top level), or after
    one of `after` (question, answer) was chosen."""

    text: str
    answers: tuple[str, ...]
    checkbox: bool
    after: tuple[tuple[str, str], ...]


def tree_questions(options: Any, parent: tuple[str, str] | None = None) -> Iterator[Question]:
    """Every question of a bucket's question tree, depth first."""
    if not isinstance(options, dict):
        return
    for text, answers in options.items():
        if text in RESERVED or not isinstance(answers, dict):
            continue
        offered = tuple(a for a in answers if a not in RESERVED)
        yield Question(text, offered, "checkbox" in (answers.get("_type_") or {}),
                       (parent,) if parent else ())
        for answer in offered:
            yield from tree_questions(answers[answer], (text, answer))


def _merged(questions: Iterator[Question]) -> list[Question]:
    """One entry per question text (a text asked after several answers is asked after any)."""
    merged: dict[str, Question] = {}
    for q in questions:
        seen = merged.get(q.text)
        merged[q.text] = q if seen is None else Question(
            q.text, tuple(dict.fromkeys(seen.answers + q.answers)), seen.checkbox or q.checkbox,
            seen.after + q.after if seen.after and q.after else ())
    return list(merged.values())


def _asked(turn: AnnotatedTurn, question: Question) -> bool:
    """Whether the annotator was asked the question on this turn: a radio question when it got
    an answer; a checkbox question (which may be left empty) when its parent answer was
    chosen, or always at the top level."""
    if not question.checkbox:
        return any(q == question.text for q, _ in turn.answers)
    return not question.after or any(pair in turn.answers for pair in question.after)


def answer_shares(tables: Tables, confidence: float) -> list[dict[str, Any]]:
    """`[{"bucket", "question", "answer", "bot", "share", "ci_low", "ci_high", "n",
    "n_with_answer", "n_dialogues", "note"}]`, buckets by name, questions in tree order."""
    rows = []
    for bucket in sorted(tables.turns):
        definition = tables.buckets.get(bucket, {})
        if definition.get("config") not in TREE_CONFIGS:
            continue
        turns = list(tables.turns[bucket].values())
        for question in _merged(tree_questions(definition.get("options"))):
            asked = [t for t in turns if _asked(t, question)]
            chosen = [{a for q, a in t.answers if q == question.text} for t in asked]
            answers = list(question.answers) + sorted(set().union(*chosen) - set(question.answers))
            for bot in sorted({t.bot for t in asked}):
                mine = [i for i, t in enumerate(asked) if t.bot == bot]
                values = np.array([[a in chosen[i] for a in answers] for i in mine], dtype=float)
                _, dialogues = np.unique([asked[i].cluster for i in mine], return_inverse=True)
                means, _ = clustered_means(values, [dialogues], confidence)
                n_dialogues = int(dialogues.max()) + 1
                for j, answer in enumerate(answers):
                    rows.append({
                        "bucket": bucket, "question": question.text, "answer": answer,
                        "bot": bot, "share": means[j].value, "ci_low": means[j].ci_low,
                        "ci_high": means[j].ci_high, "n": len(mine),
                        "n_with_answer": int(values[:, j].sum()), "n_dialogues": n_dialogues,
                        "note": few_clusters_note(n_dialogues)})
    return rows

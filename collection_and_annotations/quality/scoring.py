"""Score one dialogue's answers against its expected ones (screening and gold alike)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from collection_and_annotations.blueprints.static_annotation.buckets import Bucket
from collection_and_annotations.quality.comparator import matches
from collection_and_annotations.quality.files import ScoredTurn, scored_turns
from collection_and_annotations.quality.translation import flatten, readable, turn_keys


@dataclass(frozen=True)
class WrongTurn:
    turn: ScoredTurn
    given: dict[str, frozenset[str]]


def given_flat(source: Mapping[str, Any], buckets: Mapping[str, Bucket], answers: Any,
               turn: int) -> dict[str, frozenset[str]]:
    """What the worker chose for one turn over all the dialogue's buckets, in flat form."""
    flat: dict[str, frozenset[str]] = {}
    if not isinstance(answers, dict):
        return flat
    for name in source["annotation_tasks"]:
        targets = answers.get(name)
        if isinstance(targets, dict) and str(turn) in targets:
            flat.update(flatten(buckets[name], targets[str(turn)]))
    return flat


def wrong_turns(source: Mapping[str, Any], buckets: Mapping[str, Bucket], answers: Any
                ) -> list[WrongTurn]:
    """The scored turns the answers (`{bucket: {target: value}}`) get wrong, in turn order.
    The expected answers are read from `source` (the stored dialogue), never from the page."""
    wrong = []
    for turn in scored_turns(source, buckets):
        given = given_flat(source, buckets, answers, turn.index)
        if not matches(turn.expected, given):
            wrong.append(WrongTurn(turn, given))
    return wrong


def feedback(source: Mapping[str, Any], buckets: Mapping[str, Bucket],
             wrong: list[WrongTurn]) -> list[dict[str, Any]]:
    """What the worker sees of their mistakes, after submitting the dialogue: the turn, what
    they chose, the correct selection (the first acceptable one) and the explanation."""
    speakers = [t[0] for t in source["turns"]]
    tasks = [buckets[name] for name in source["annotation_tasks"]]
    shown = []
    for item in wrong:
        keys = turn_keys(tasks, item.turn.index, speakers)
        first = item.turn.expected.alternatives[0]
        shown.append({
            "turn": item.turn.index,
            "yours": readable(keys, buckets, item.given),
            "correct": [] if first.nothing else readable(keys, buckets, first.required),
            "explanation": item.turn.explanation,
        })
    return shown

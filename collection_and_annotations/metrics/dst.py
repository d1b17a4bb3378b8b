"""Dialogue state tracking: joint goal accuracy and slot precision, recall and F1.

A state is `{domain: {slot: value}}` (any depth, or flat `{slot: value}`). Per turn, a slot is a
true positive when both states have it with matching values; a predicted slot that is missing or
different in the gold state is a false positive, a gold slot that is missing or different in the
prediction a false negative (as `mwzeval.metrics.get_dst`, with exact matching of normalized
values instead of fuzzy matching). A turn counts for joint goal accuracy when every slot matches.
Values go through a normalization hook first; a value normalized to "" means "not set". A list
value is a set of acceptable alternatives: two values match when they share one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from collection_and_annotations.metrics.base import (
    Direction,
    Kind,
    Metric,
    MetricError,
    MetricSpec,
    Progress,
    Score,
    Statistics,
)

if TYPE_CHECKING:
    from collection_and_annotations.metrics.inputs import Segments

Normalizer = Callable[[Any], str]
"""Maps a slot value to the string compared (the hook for canonical values)."""

FlatState = dict[tuple[str, ...], frozenset[str]]


def normalize_value(value: Any) -> str:
    """Default normalization: case and runs of whitespace do not matter."""
    return " ".join(str(value).lower().split())


def flatten_state(state: Mapping[str, Any], normalize: Normalizer = normalize_value) -> FlatState:
    """Slot path -> acceptable normalized values, leaving out slots that are not set."""
    flat: FlatState = {}
    for key, value in state.items():
        if isinstance(value, Mapping):
            flat.update({(key, *path): v for path, v in flatten_state(value, normalize).items()})
            continue
        alternatives = value if isinstance(value, list) else [value]
        values = frozenset(normalize(v) for v in alternatives if v is not None) - {""}
        if values:
            flat[(key,)] = values
    return flat


def turn_counts(predicted: FlatState, gold: FlatState) -> tuple[int, int, int, int]:
    """(joint match, true positives, false positives, false negatives) of one turn."""
    true_positives = sum(
        1 for slot, values in predicted.items() if slot in gold and values & gold[slot]
    )
    false_positives = len(predicted) - true_positives
    false_negatives = len(gold) - true_positives
    joint = int(false_positives == 0 and false_negatives == 0)
    return joint, true_positives, false_positives, false_negatives


def state_scores(joint: float, tp: float, fp: float, fn: float, turns: int) -> dict[str, float]:
    """The four DST measures (fractions in [0, 1]) from summed turn counts."""
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "joint_goal_accuracy": joint / turns,
        "slot_precision": precision,
        "slot_recall": recall,
        "slot_f1": f1,
    }


class DialogueStateTracking(Metric):
    """DST over the turns that carry both a predicted `state` and a `gold_state`."""

    needs = "a predicted 'state' and a 'gold_state'"

    def __init__(self, normalize: Normalizer = normalize_value) -> None:
        self.normalize = normalize

    @property
    def signature(self) -> str:
        hook = "default" if self.normalize is normalize_value else self.normalize.__name__
        return f"match:exact|normalize:{hook}"

    def statistics(self, segments: Segments, progress: Progress | None = None) -> Statistics:
        rows = np.zeros((len(segments), 4))
        present = np.zeros(len(segments), dtype=bool)
        for index, extra in enumerate(segments.fields):
            states = [extra.get("state"), extra.get("gold_state")]
            if states == [None, None]:
                continue
            if not all(isinstance(state, Mapping) for state in states):
                raise MetricError(
                    f"{segments.where(index)}: DST needs both 'state' and 'gold_state' as "
                    "objects ({domain: {slot: value}}); this segment has "
                    f"state={_kind(states[0])}, gold_state={_kind(states[1])}"
                )
            predicted, gold = (flatten_state(state, self.normalize) for state in states)
            rows[index] = turn_counts(predicted, gold)
            present[index] = True
        if progress is not None:
            progress(len(segments))
        return Statistics(rows, present)

    def score(self, rows: np.ndarray) -> Score:
        return Score(state_scores(*rows.sum(axis=0), turns=len(rows)))


def _kind(value: Any) -> str:
    return "missing" if value is None else type(value).__name__


SPECS = (
    MetricSpec(
        "dst",
        Kind.DIALOGUES,
        "Dialogue state tracking: joint goal accuracy and slot precision/recall/F1 (fractions), "
        "over turns with a predicted 'state' and a 'gold_state'.",
        dict.fromkeys(
            ("joint_goal_accuracy", "slot_precision", "slot_recall", "slot_f1"), Direction.HIGHER
        ),
        DialogueStateTracking,
    ),
)

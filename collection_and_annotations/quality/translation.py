"""The translation between the platform's nested answers and the original's flat answers.

The platform stores, per dialogue, `{bucket: {target: value}}` with a value shaped by the
bucket's config. The original's screening and gold files give, per turn, one flat object over
all the dialogue's buckets. The mapping, per config (the *key* is what the flat object names):

- question trees (`*button_flow`): key = the question text at any depth, value = the chosen
  answer(s); nested `{question: {answer: {sub-question: ...}}}`;
- `multiselect`: key `<task_title>_labels` (or `<bucket>_labels`), value = list of option
  values; nested: the list;
- `likert-5-turn`: key = option `label` (or its `question`), value `"1"`..`"5"`; nested
  `{label: 1..5}`;
- `foreach-5-select`: key = option `label` (or `value`), value `"1"`..`"5"`; nested
  `{value: 1..5}`.

Flat values become sets of strings (`""` is the empty set: "must be absent"). Expected answers
may only name turn-level buckets of their dialogue that ask about that turn; dialogue-level and
comparative buckets are not scored. Every expected key must be a question (or label) the
bucket offers and every value an answer it offers, else `BadExpected` says which.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from collection_and_annotations.blueprints.static_annotation.buckets import TREE_CONFIGS, Bucket
from collection_and_annotations.quality.comparator import Alternative, Expected

RATINGS = frozenset(str(r) for r in range(1, 6))
SCORED_CONFIGS = TREE_CONFIGS | {"multiselect", "likert-5-turn", "foreach-5-select"}


class BadExpected(ValueError):
    """An expected answer the buckets cannot express; the message says why."""


@dataclass(frozen=True)
class FlatKey:
    """One key a bucket answers in flat form: what it offers and, for a nested question, the
    (question, answer) that must be chosen for it to be asked."""

    bucket: str
    key: str
    offered: frozenset[str]
    parents: tuple[tuple[str, str] | None, ...] = (None,)


def _tree_keys(bucket: str, options: Mapping[str, Any], parent: tuple[str, str] | None,
               into: dict[str, FlatKey]) -> None:
    for question, answers in options.items():
        offered = frozenset(a for a in answers if a not in ("_type_", "_dep_"))
        known = into.get(question)
        into[question] = FlatKey(bucket, question, offered | (known.offered if known else
                                                               frozenset()),
                                 (known.parents if known else ()) + (parent,))
        for answer in offered:
            nested = answers[answer]
            if isinstance(nested, dict) and nested:
                _tree_keys(bucket, nested, (question, answer), into)


def flat_keys(bucket: Bucket) -> dict[str, FlatKey]:
    """Every key (with its aliases) the bucket answers in flat form."""
    keys: dict[str, FlatKey] = {}
    if bucket.config in TREE_CONFIGS:
        _tree_keys(bucket.name, bucket.options, None, keys)
    elif bucket.config == "multiselect":
        values = frozenset(o["value"] for o in bucket.options)
        for alias in (f"{bucket.task_title}_labels", f"{bucket.name}_labels"):
            keys[alias] = FlatKey(bucket.name, f"{bucket.task_title}_labels", values)
    elif bucket.config in ("likert-5-turn", "foreach-5-select"):
        alias_field = "question" if bucket.config == "likert-5-turn" else "value"
        for option in bucket.options:
            for alias in filter(None, (option["label"], option.get(alias_field))):
                keys[alias] = FlatKey(bucket.name, option["label"], RATINGS)
    return keys


def _value_set(value: Any, key: str) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset({value}) if value else frozenset()
    if isinstance(value, int) and not isinstance(value, bool):
        return frozenset({str(value)})
    if isinstance(value, list) and all(isinstance(v, str | int) for v in value):
        return frozenset(str(v) for v in value)
    raise BadExpected(f"'{key}': expected a string or a list of strings, not "
                      f"{type(value).__name__}")


def _alternative(flat: Any, keys: Mapping[str, FlatKey]) -> Alternative:
    if not isinstance(flat, dict):
        raise BadExpected("an expected answer must be an object")
    if not flat:
        return Alternative({}, nothing=True)
    required: dict[str, frozenset[str]] = {}
    for key, value in flat.items():
        if key not in keys:
            raise BadExpected(f"'{key}' is not a question any bucket of this dialogue asks "
                              "about this turn")
        spec = keys[key]
        values = _value_set(value, key)
        unknown = sorted(values - spec.offered)
        if unknown:
            raise BadExpected(f"'{unknown[0]}' is not an answer bucket '{spec.bucket}' offers "
                              f"for '{key}'")
        required[spec.key] = values
    for key, values in required.items():
        parents = keys[key].parents if key in keys else (None,)
        if values and None not in parents and not any(
            answer in required.get(question, ()) for question, answer in parents  # type: ignore[misc]
        ):
            question, answer = parents[0]  # type: ignore[misc]
            raise BadExpected(f"'{key}' is only asked after '{question}' is answered "
                              f"'{answer}', which this expected answer does not choose")
    return Alternative(required)


def turn_keys(buckets: Iterable[Bucket], turn: int, speakers: list[str]) -> dict[str, FlatKey]:
    """The flat keys of the buckets that ask about this turn (turn-level, scorable ones)."""
    keys: dict[str, FlatKey] = {}
    for bucket in buckets:
        if bucket.config not in SCORED_CONFIGS:
            continue
        if turn not in bucket.target_turns([[s] for s in speakers]):
            continue
        for alias, spec in flat_keys(bucket).items():
            if alias in keys and keys[alias].bucket != spec.bucket:
                raise BadExpected(f"'{alias}' is asked by both bucket '{keys[alias].bucket}' "
                                  f"and bucket '{spec.bucket}'; the answer is ambiguous")
            keys[alias] = spec
    return keys


def parse_expected(raw: Any, buckets: Iterable[Bucket], turn: int,
                   speakers: list[str]) -> Expected:
    """The expected answer of a turn as the comparator reads it (file format -> sets)."""
    keys = turn_keys(list(buckets), turn, speakers)
    if not keys:
        raise BadExpected("no scorable turn-level bucket of this dialogue asks about this turn")
    if isinstance(raw, dict) and raw.get("_disjunction") is True:
        options = raw.get("options")
        if not isinstance(options, list) or not options:
            raise BadExpected("a '_disjunction' needs a non-empty list 'options'")
        return Expected(tuple(_alternative(option, keys) for option in options))
    return Expected((_alternative(raw, keys),))


def _flatten_tree(value: Any, into: dict[str, set[str]]) -> None:
    if not isinstance(value, dict):
        return
    for question, chosen in value.items():
        if not isinstance(chosen, dict):
            continue
        into.setdefault(question, set()).update(str(a) for a in chosen)
        for nested in chosen.values():
            _flatten_tree(nested, into)


def flatten(bucket: Bucket, value: Any) -> dict[str, frozenset[str]]:
    """A stored (nested) value of one bucket at one target, in flat form (never raises: the
    check endpoint scores answers before they are validated)."""
    flat: dict[str, set[str]] = {}
    if bucket.config in TREE_CONFIGS:
        _flatten_tree(value, flat)
    elif bucket.config == "multiselect" and isinstance(value, list):
        flat[f"{bucket.task_title}_labels"] = {str(v) for v in value}
    elif bucket.config in ("likert-5-turn", "foreach-5-select") and isinstance(value, dict):
        key = "label" if bucket.config == "likert-5-turn" else "value"
        labels = {o[key]: o["label"] for o in bucket.options}
        for name, rating in value.items():
            if name in labels:
                flat[labels[name]] = {str(rating)}
    return {key: frozenset(values) for key, values in flat.items()}


def readable(bucket_keys: Mapping[str, FlatKey], buckets: Mapping[str, Bucket],
             flat: Mapping[str, frozenset[str]]) -> list[dict[str, Any]]:
    """A flat answer as the worker page shows it: question and chosen answers (option labels
    rather than values for multiselect), in a stable order."""
    shown = []
    for key, values in flat.items():
        if not values or key not in bucket_keys:
            continue
        bucket = buckets[bucket_keys[key].bucket]
        answers = sorted(values)
        if bucket.config == "multiselect":
            labels = {o["value"]: o["label"] for o in bucket.options}
            answers = [labels.get(v, v) for v in answers]
            key = bucket.question or bucket.task_title
        shown.append({"question": key, "answers": answers})
    return shown


def _nest_tree(options: Mapping[str, Any], required: Mapping[str, frozenset[str]]
               ) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for question, answers in options.items():
        for answer in sorted(required.get(question, ())):
            below = answers.get(answer)
            nested.setdefault(question, {})[answer] = (
                _nest_tree(below, required) if isinstance(below, dict) and below else {})
    return nested


def nest(bucket: Bucket, alternative: Alternative) -> Any:
    """An expected alternative as the stored value of one bucket (the flat -> nested way):
    what a worker who answers exactly as expected submits for this bucket and turn."""
    required = {} if alternative.nothing else alternative.required
    if bucket.config in TREE_CONFIGS:
        return _nest_tree(bucket.options, required)
    if bucket.config == "multiselect":
        return sorted(required.get(f"{bucket.task_title}_labels", ()))
    key = "label" if bucket.config == "likert-5-turn" else "value"
    return {option[key]: int(next(iter(required[option["label"]])))
            for option in bucket.options if required.get(option["label"])}

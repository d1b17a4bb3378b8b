"""Server-side check of submitted answers against the buckets and their `require` rules.

The worker page mirrors these rules for gating, but only this module decides what is stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from collection_and_annotations.blueprints.static_annotation.buckets import (
    TREE_CONFIGS,
    Bucket,
    TextLimits,
)
from collection_and_annotations.blueprints.static_annotation.dependencies import (
    TurnContext,
    is_shown,
)

DIALOGUE_TARGET = "dialogue"
EXPLANATION_KEY = "explanation"  # beside the targets: {target: "the worker's reason"}
EXPLAIN_QUESTION = "Explain your answer"
LIKERT_RANGE = range(1, 6)


@dataclass
class Problem:
    dialogue: str
    bucket: str | None
    turn: int | None
    question: str | None
    message: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DialogueView:
    """What validation needs of one dialogue: its key, speakers per turn and its buckets."""

    key: str
    speakers: list[str]
    annotation_tasks: list[str]


def _is_rating(rating: Any) -> bool:
    return isinstance(rating, int) and not isinstance(rating, bool) and rating in LIKERT_RANGE


def text_long_enough(text: str, limits: TextLimits) -> bool:
    """A text counts as an answer once it has `min_chars` characters (at least one) besides
    the whitespace around it."""
    return len(text.strip()) >= max(limits.min_chars, 1)


class _Checker:
    def __init__(self, dialogue: str, bucket: Bucket, turn: int | None):
        self.dialogue, self.bucket, self.turn = dialogue, bucket, turn
        self.problems: list[Problem] = []

    def fail(self, message: str, question: str | None = None) -> None:
        self.problems.append(Problem(self.dialogue, self.bucket.name, self.turn, question, message))

    # Each check_* returns whether the value is complete; invalid parts are recorded as problems.
    def check_tree(self, options: Mapping[str, Any], value: Any, turn: TurnContext) -> bool:
        if not isinstance(value, dict):
            self.fail("expected an object of question -> chosen answers")
            return False
        complete = True
        for question in value:
            if question not in options:
                self.fail("this question is not offered here", question)
        for question, answers in options.items():
            shown = is_shown(answers, value, turn)
            chosen = value.get(question)
            if not shown:
                if chosen is not None:
                    self.fail("this question is not shown for these answers", question)
                continue
            if chosen is None:
                complete = False
                continue
            if not isinstance(chosen, dict):
                self.fail("expected an object of chosen answers", question)
                continue
            checkbox = "checkbox" in answers.get("_type_", {})
            offered = [a for a in answers if a not in ("_type_", "_dep_")]
            for answer in chosen:
                if answer not in offered:
                    self.fail(f"'{answer}' is not an offered answer", question)
            if not checkbox and len(chosen) > 1:
                self.fail("only one answer may be chosen", question)
            if not checkbox and not chosen:
                complete = False
            for answer, nested in chosen.items():
                sub_options = answers.get(answer)
                if isinstance(sub_options, dict) and sub_options:
                    complete &= self.check_tree(sub_options, nested, turn)
                elif nested not in ({}, None):
                    self.fail(f"answer '{answer}' has no follow-up questions", question)
        return complete

    def check_ratings(self, keys: list[str], value: Any) -> bool:
        if not isinstance(value, dict):
            self.fail("expected an object of option -> rating 1-5")
            return False
        for key, rating in value.items():
            if key not in keys:
                self.fail(f"'{key}' is not an offered option")
            elif not _is_rating(rating):
                self.fail(f"rating for '{key}' must be an integer from 1 to 5", key)
        return all(_is_rating(value.get(key)) for key in keys)

    def check_multiselect(self, value: Any, speaker: str | None) -> bool:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail("expected a list of option values")
            return False
        offered = {
            o["value"] for o in self.bucket.options
            if o.get("speaker") in (None, speaker)
        }
        for choice in value:
            if choice not in offered:
                self.fail(f"'{choice}' is not an offered option")
        if len(set(value)) != len(value):
            self.fail("an option is listed twice")
        return True

    def check_text(self, value: Any, limits: TextLimits, question: str | None) -> bool:
        if not isinstance(value, str):
            self.fail("expected a text", question)
            return False
        if len(value) > limits.max_chars:
            self.fail(f"the text has {len(value)} characters; at most {limits.max_chars} are "
                      "allowed", question)
        return text_long_enough(value, limits)

    def check_value(self, value: Any, turn: TurnContext) -> bool:
        bucket = self.bucket
        if bucket.text is not None:
            return self.check_text(value, bucket.text, bucket.question)
        if bucket.config in TREE_CONFIGS:
            return self.check_tree(bucket.options, value, turn)
        if bucket.config == "multiselect":
            return self.check_multiselect(value, turn.speaker)
        if bucket.config == "comparative":
            if value not in bucket.options:
                self.fail("expected one of the offered options", bucket.question)
                return False
            return True
        key = "label" if bucket.config.startswith("likert") else "value"
        return self.check_ratings([o[key] for o in bucket.options], value)


def _missing_message(bucket: Bucket) -> str:
    if bucket.text is not None and bucket.text.min_chars > 1:
        return f"answer '{bucket.question}' in at least {bucket.text.min_chars} characters"
    if bucket.question:
        return f"answer '{bucket.question}'"
    if bucket.config in TREE_CONFIGS:
        return "answer: " + "; ".join(f"'{q}'" for q in bucket.options)
    if bucket.config.startswith("likert"):
        return "rate: " + "; ".join(f"'{o.get('question', o['label'])}'" for o in bucket.options)
    return f"complete '{bucket.task_title}'"


NO_ANSWER = "answer at least one question about this dialogue"


def check_answers(
    answers: Any, dialogues: list[DialogueView], buckets: Mapping[str, Bucket],
    answer_each_dialogue: bool = True,
) -> list[Problem]:
    """All problems of a submission: invalid values always, missing ones per `require`, and
    with `answer_each_dialogue` (the conf's `allow_unanswered_dialogues: false`) a dialogue
    with something to ask and no answer at all."""
    if not isinstance(answers, dict):
        return [Problem("", None, None, None, "answers must be an object keyed by dialogue")]
    by_key = {d.key: d for d in dialogues}
    problems = [
        Problem(key, None, None, None, "unknown dialogue") for key in answers if key not in by_key
    ]
    for dialogue in dialogues:
        given = answers.get(dialogue.key, {})
        if not isinstance(given, dict):
            problems.append(
                Problem(dialogue.key, None, None, None, "expected an object of buckets")
            )
            continue
        for name in given:
            if name not in dialogue.annotation_tasks:
                problems.append(Problem(dialogue.key, name, None, None,
                                        "this bucket is not asked for this dialogue"))
        results = [check_bucket(dialogue, buckets[name], given.get(name, {}))
                   for name in dialogue.annotation_tasks]
        for result in results:
            problems += result.invalid + result.missing
        if answer_each_dialogue and not any(r.missing or r.answered for r in results) and \
                any(r.answerable for r in results):
            problems.append(Problem(dialogue.key, dialogue.annotation_tasks[0], None, None,
                                    NO_ANSWER))
    return problems


@dataclass
class BucketCheck:
    """One bucket of one dialogue: what is invalid, what `require` still asks for, and how
    many of its targets have something to ask (`answerable`) and got an answer (`answered`:
    complete, or partly answered)."""

    invalid: list[Problem] = field(default_factory=list)
    missing: list[Problem] = field(default_factory=list)
    answerable: int = 0
    answered: int = 0


def check_bucket(dialogue: DialogueView, bucket: Bucket, given: Any) -> BucketCheck:
    """Check the bucket's values of one dialogue (`{target: value}`) in target order, each turn
    seeing the values before it (`_dep_` conditions on the previous turn).

    An absent tree value counts as `{}`: a turn whose every question is hidden has nothing to
    answer and is complete even when the page sends nothing for it. Such turns do not satisfy
    `require.level: dialogue` ("at least one turn") unless no target turn has anything to ask."""
    result = BucketCheck()
    if not isinstance(given, dict):
        result.invalid.append(
            Problem(dialogue.key, bucket.name, None, None, "expected an object of targets"))
        return result
    problems = result.invalid
    if bucket.level == "dialogue":
        targets: list[int | None] = [None]
        allowed = {DIALOGUE_TARGET}
    else:
        targets = list(bucket.target_turns([[s] for s in dialogue.speakers]))
        allowed = {str(t) for t in targets}
    for target in given:
        if target == EXPLANATION_KEY and bucket.explain is None:
            problems.append(Problem(dialogue.key, bucket.name, None, None,
                                    "this bucket asks for no explanation"))
        elif target not in allowed and target != EXPLANATION_KEY:
            problems.append(Problem(dialogue.key, bucket.name, None, None,
                                    f"'{target}' is not a target of this bucket"))
    explanations = _explanations(dialogue, bucket, given, allowed, problems)
    answerable_complete = 0
    answerable = 0
    missing: list[int | None] = []
    turn_targets = [t for t in targets if t is not None]
    for turn in targets:
        key = DIALOGUE_TARGET if turn is None else str(turn)
        context = TurnContext(
            dialogue.speakers[turn] if turn is not None else None, turn, turn_targets, given
        )
        checker = _Checker(dialogue.key, bucket, turn)
        value = given.get(key)
        if key in given:
            complete = checker.check_value(value, context)
            problems += checker.problems
        else:
            complete = bucket.config in TREE_CONFIGS and checker.check_tree(
                bucket.options, {}, context
            )
        nothing_to_ask = complete and bucket.config in TREE_CONFIGS and value in (None, {})
        if not nothing_to_ask:
            answerable += 1
            answerable_complete += complete
            result.answered += complete or _partly_answered(value)
        if not complete:
            missing.append(turn)
        if bucket.explain is not None:
            result.missing += _explanation_missing(
                dialogue, bucket, bucket.explain, turn, explanations.get(key),
                complete and key in given and not nothing_to_ask, problems)
    result.answerable = answerable
    level = bucket.require_level
    if level == "turn" or (level == "dialogue" and bucket.level == "dialogue"):
        for turn in missing:
            result.missing.append(Problem(dialogue.key, bucket.name, turn, bucket.question,
                                          f"missing: {_missing_message(bucket)}"))
    elif level == "dialogue" and answerable and not answerable_complete:
        result.missing.append(Problem(dialogue.key, bucket.name, None, bucket.question,
                                      f"answer at least one turn: {_missing_message(bucket)}"))
    return result


def _partly_answered(value: Any) -> bool:
    """Some of a target's questions answered (a rating of one option of several, a chosen
    answer whose follow-up is open, a text shorter than asked): an answer, though not a
    complete one."""
    if isinstance(value, str):
        return bool(value.strip())
    return isinstance(value, dict) and any(v not in (None, {}, []) for v in value.values())


def _explanations(dialogue: DialogueView, bucket: Bucket, given: dict[str, Any],
                  allowed: set[str], problems: list[Problem]) -> dict[str, Any]:
    """The bucket's `explanation` object (`{target: text}`); its unknown targets are
    problems."""
    explanations = given.get(EXPLANATION_KEY, {}) if bucket.explain is not None else {}
    if not isinstance(explanations, dict):
        problems.append(Problem(dialogue.key, bucket.name, None, EXPLAIN_QUESTION,
                                "expected an object of target -> explanation text"))
        return {}
    for target in explanations:
        if target not in allowed:
            problems.append(Problem(dialogue.key, bucket.name, None, EXPLAIN_QUESTION,
                                    f"'{target}' is not a target of this bucket"))
    return explanations


def _explanation_missing(dialogue: DialogueView, bucket: Bucket, limits: TextLimits,
                         turn: int | None, text: Any, answered: bool,
                         problems: list[Problem]) -> list[Problem]:
    """Checks one target's explanation (invalid ones go to `problems`); returns it as missing
    when the target is answered and `explain_min_chars` asks for more than was written."""
    checker = _Checker(dialogue.key, bucket, turn)
    long_enough = text is not None and checker.check_text(text, limits, EXPLAIN_QUESTION)
    problems += checker.problems
    if not answered or limits.min_chars == 0 or long_enough:
        return []
    return [Problem(dialogue.key, bucket.name, turn, EXPLAIN_QUESTION,
                    f"missing: explain your answer in at least {limits.min_chars} characters")]

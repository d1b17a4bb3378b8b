"""One bucket asked of a judge about one dialogue: the bucket's questions as the prompt shows
them, the JSON schema of the answer built from them (an enum per question, one object per
annotated turn), and the model's JSON turned into the value a worker submits for the bucket
(`{target: value}`, docs/worker-api.md). The task's own checker judges that value; this module
only reads the shape."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from collection_and_annotations.blueprints.static_annotation.answers import DIALOGUE_TARGET
from collection_and_annotations.blueprints.static_annotation.buckets import TREE_CONFIGS, Bucket
from collection_and_annotations.blueprints.static_annotation.dependencies import (
    RESERVED,
    TurnContext,
    is_shown,
    prev_turn_pairs,
)

RATINGS = [1, 2, 3, 4, 5]
Show = Callable[[str], str]  # placeholders (SPEAKER_X, SPEAKER_Y) -> display names
Schema = dict[str, Any]


class FormError(ValueError):
    """The reply does not have the form's shape; the message tells the model what to fix."""


def target_name(target: int | None) -> str:
    """How the reply names a target: `turn 2` (numbered from 1, as the prompt shows turns)."""
    return "dialogue" if target is None else f"turn {target + 1}"


def _nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


def _object(properties: dict[str, Schema]) -> Schema:
    """A closed object whose every property is required (what strict structured outputs
    accept)."""
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


@dataclass(frozen=True)
class Form:
    """The bucket's questions about one dialogue, for one call."""

    bucket: Bucket
    targets: list[int | None]  # annotated turns (data indices), [None] for the dialogue
    text: str
    schema: Schema
    convert: Callable[[Any, int | None], Any]  # one target's reply -> its stored value
    finish: Callable[[dict[str, Any]], dict[str, Any]] = lambda value: value

    def value(self, reply: Any) -> dict[str, Any]:
        """`{target: value}` from the model's JSON (FormError when its shape is wrong)."""
        if not isinstance(reply, dict):
            raise FormError("the reply must be one JSON object")
        names = {target_name(t): t for t in self.targets}
        unknown = [name for name in reply if name not in names]
        if unknown:
            raise FormError(f"unknown keys {', '.join(map(_quoted, unknown))}; the keys are "
                            + ", ".join(map(_quoted, names)))
        missing = [name for name in names if name not in reply]
        if missing:
            raise FormError(f"missing keys {', '.join(map(_quoted, missing))}")
        value = {}
        for name, target in names.items():
            try:
                value[DIALOGUE_TARGET if target is None else str(target)] = \
                    self.convert(reply[name], target)
            except FormError as exc:
                raise FormError(f"{name}: {exc}") from None
        return self.finish(value)


def make_form(bucket: Bucket, speakers: list[str], names: Mapping[str, str]) -> Form:
    """The form of `bucket` on a dialogue whose turns are by `speakers` (`user`/`system`),
    shown with `names` (speaker -> display name)."""
    targets: list[int | None] = [None] if bucket.level == "dialogue" else list(
        bucket.target_turns([[s] for s in speakers]))
    show = _show(bucket, [speakers[t] for t in targets if t is not None], names)
    header = _turns_line(targets, speakers, names)
    if bucket.config in TREE_CONFIGS:
        tree = _Tree(bucket, show, names)
        lines, one, convert, finish = tree.lines(), tree.schema, tree.convert, \
            tree.pruner(speakers, targets)
    elif bucket.config == "multiselect":
        lines, one, convert, finish = _multiselect(bucket, show, names, speakers)
    elif bucket.config == "comparative":
        lines, one, convert, finish = _comparative(bucket, show)
    elif bucket.text is not None:
        lines, one, convert, finish = _text(bucket, show)
    else:
        lines, one, convert, finish = _ratings(bucket, show)
    schema = _object({target_name(t): one(t) for t in targets})
    return Form(bucket, targets, "\n".join([*header, *lines]), schema, convert, finish)


def _show(bucket: Bucket, target_speakers: list[str], names: Mapping[str, str]) -> Show:
    """SPEAKER_X is the annotated turn's speaker (the bot for a dialogue-level bucket),
    SPEAKER_Y the other one, as the worker page substitutes them."""
    kinds = set(target_speakers) if bucket.level == "turn" else {"system"}
    if len(kinds) == 1:
        (x,) = kinds
        x_name, y_name = names[x], names["user" if x == "system" else "system"]
    else:
        x_name, y_name = "the speaker of the annotated turn", "the other speaker"
    return lambda text: text.replace("SPEAKER_X", x_name).replace("SPEAKER_Y", y_name)


def _turns_line(targets: list[int | None], speakers: list[str],
                names: Mapping[str, str]) -> list[str]:
    if targets == [None]:
        return ["Answer about the whole conversation, under the key \"dialogue\"."]
    turns = ", ".join(f"turn {t + 1} ({names[speakers[t]]})" for t in targets
                      if t is not None)
    return [f"Answer for each of these turns, under its key (\"turn N\"): {turns}."]


# -- multiselect ----------------------------------------------------------------------------

def _multiselect(bucket: Bucket, show: Show, names: Mapping[str, str], speakers: list[str]):
    def offered(target: int | None) -> list[str]:
        speaker = speakers[target] if target is not None else None
        return [o["value"] for o in bucket.options if o.get("speaker") in (None, speaker)]

    lines = [show(bucket.question or "Which of these labels apply?"),
             "Give a list of the values that apply ([] when none does):"]
    for option in bucket.options:
        only = f" (only for turns by {names[option['speaker']]})" if option.get("speaker") else ""
        lines.append(f"- {_quoted(option['value'])}: {show(option.get('label', ''))}{only}")

    def schema(target: int | None) -> Schema:
        return {"type": "array", "items": {"type": "string", "enum": offered(target)}}

    def convert(reply: Any, _target: int | None) -> list[str]:
        if not isinstance(reply, list) or not all(isinstance(v, str) for v in reply):
            raise FormError("expected a list of option values")
        return list(reply)

    return lines, schema, convert, _same


def _same(value: dict[str, Any]) -> dict[str, Any]:
    return value


# -- 1-5 ratings -----------------------------------------------------------------------------

def _ratings(bucket: Bucket, show: Show):
    likert = bucket.config.startswith("likert")
    key = "label" if likert else "value"
    keys = [o[key] for o in bucket.options]
    lines = [show(bucket.question)] if bucket.question else []
    lines.append("Rate each of these from 1 (least) to 5 (most), a whole number:")
    for option in bucket.options:
        asked = option.get("question") if likert else option.get("label")
        lines.append(f"- {_quoted(option[key])}" + (f": {show(asked)}" if asked else ""))
    if bucket.label_details:
        lines.append("Scale: " + "; ".join(f"{point} = {show(str(meaning))}"
                                           for point, meaning in bucket.label_details.items()))
    one = _object({k: {"type": "integer", "enum": RATINGS} for k in keys})

    def convert(reply: Any, _target: int | None) -> dict[str, Any]:
        if not isinstance(reply, dict):
            raise FormError(f"expected an object rating {', '.join(map(_quoted, keys))}")
        return dict(reply)

    return lines, lambda _target: one, convert, _same


# -- comparisons -----------------------------------------------------------------------------

def _comparative(bucket: Bucket, show: Show):
    shown = {show(option): option for option in bucket.options}
    lines = [show(bucket.question or "Which conversation is better?"), "Choose one of:",
             *(f"- {_quoted(text)}" for text in shown)]

    def convert(reply: Any, _target: int | None) -> str:
        if reply not in shown:
            raise FormError(f"expected one of {', '.join(map(_quoted, shown))}")
        return shown[reply]

    return lines, lambda _target: {"type": "string", "enum": list(shown)}, convert, _same


# -- free text -------------------------------------------------------------------------------

def _text(bucket: Bucket, show: Show):
    limits = bucket.text
    assert limits is not None
    least = max(limits.min_chars, 1)
    lines = [show(bucket.question or "Your answer:"),
             f"Answer in words: a string of {least} to {limits.max_chars} characters"
             + ("." if limits.multiline else ", on one line.")]
    one = {"type": "string", "minLength": least, "maxLength": limits.max_chars}

    def convert(reply: Any, _target: int | None) -> str:
        if not isinstance(reply, str) or len(reply.strip()) < least:
            raise FormError(f"expected a text of at least {least} characters")
        if len(reply) > limits.max_chars:
            raise FormError(f"expected a text of at most {limits.max_chars} characters")
        if not limits.multiline and "\n" in reply:
            raise FormError("expected a text on one line")
        return reply

    return lines, lambda _target: one, convert, _same


# -- question trees --------------------------------------------------------------------------

@dataclass
class _Question:
    qid: str
    text: str  # as the bucket has it
    answers: dict[str, str]  # as shown -> as the bucket has it
    checkbox: bool
    dependency: Any  # the `_dep_` spec, or None
    parent: tuple[str, str] | None  # (qid, shown answer) it follows
    follow_ups: dict[str, list[_Question]] = field(default_factory=dict)  # by bucket answer

    @property
    def conditional(self) -> bool:
        return self.parent is not None or self.dependency is not None


class _Tree:
    """A question tree as numbered questions (`q1`, `q2`, ... depth first): the reply gives
    one flat object per turn, `qN` -> the chosen answer (a list for checkbox questions, null
    for a question not asked), and becomes the nested value the page stores."""

    def __init__(self, bucket: Bucket, show: Show, names: Mapping[str, str]):
        self.show, self.names = show, names
        self.options = bucket.options
        self.all: list[_Question] = []
        self.top = self._walk(bucket.options, None)

    def _walk(self, options: Mapping[str, Any], parent: tuple[str, str] | None
              ) -> list[_Question]:
        level = []
        for text, answers in options.items():
            offered = [a for a in answers if a not in RESERVED]
            question = _Question(f"q{len(self.all) + 1}", text,
                                 {self.show(a): a for a in offered},
                                 "checkbox" in answers.get("_type_", {}), answers.get("_dep_"),
                                 parent)
            self.all.append(question)
            level.append(question)
            for answer in offered:
                if answers[answer]:
                    question.follow_ups[answer] = self._walk(
                        answers[answer], (question.qid, self.show(answer)))
        return level

    def lines(self) -> list[str]:
        lines = ["Answer these questions with one object per turn: each key (q1, q2, ...) "
                 "holds the chosen answer, copied exactly; a question not asked is null."]
        by_text = {q.text: q.qid for q in self.all}
        for question in self.all:
            kind = ("Choose any number of these answers (a list; [] when none applies)"
                    if question.checkbox else "Choose one of")
            when = []
            if question.parent is not None:
                when.append(f"only when {question.parent[0]} is {_quoted(question.parent[1])}")
            if question.dependency is not None:
                when.append(self._condition(question.dependency, by_text))
            condition = f" ({'; '.join(when)}; otherwise null)" if when else ""
            lines += [f"{question.qid}. {self.show(question.text)}{condition}", f"   {kind}:"]
            for shown, answer in question.answers.items():
                follow = question.follow_ups.get(answer)
                then = f" (then answer {', '.join(q.qid for q in follow)})" if follow else ""
                lines.append(f"   - {_quoted(shown)}{then}")
        return lines

    def _condition(self, spec: Mapping[str, Any], by_text: Mapping[str, str]) -> str:
        (name, args), = spec.items()
        if name == "speaker":
            return f"only for turns by {self.names.get(args, args)}"
        if name in ("answered", "not_answered"):
            asked = by_text.get(args["question"], _quoted(self.show(args["question"])))
            with_answer = (f" with {_quoted(self.show(args['answer']))}" if "answer" in args
                           else "")
            return (f"only when {asked} is answered{with_answer}" if name == "answered"
                    else f"only when {asked} is not answered{with_answer}")
        pairs = "; or ".join(
            f"{by_text.get(q, _quoted(self.show(q)))} was answered with an answer starting "
            f"{_quoted(self.show(a))}" for q, a in prev_turn_pairs(args))
        return ("only for the first annotated turn, or when for the annotated turn before it "
                f"{pairs}")

    def schema(self, _target: int | None) -> Schema:
        properties = {}
        for question in self.all:
            one: Schema = {"type": "string", "enum": list(question.answers)}
            if question.checkbox:
                one = {"type": "array", "items": one}
            properties[question.qid] = _nullable(one) if question.conditional else one
        return _object(properties)

    def convert(self, reply: Any, _target: int | None) -> dict[str, Any]:
        if not isinstance(reply, dict):
            raise FormError("expected an object of q1, q2, ... -> the chosen answer")
        unknown = [key for key in reply if key not in {q.qid for q in self.all}]
        if unknown:
            raise FormError(f"no question {', '.join(map(_quoted, unknown))}")
        return self._nest(self.top, reply)

    def _nest(self, questions: list[_Question], reply: Mapping[str, Any]) -> dict[str, Any]:
        value: dict[str, Any] = {}
        for question in questions:
            chosen = reply.get(question.qid)
            if chosen is None:
                continue
            picks = chosen if question.checkbox else [chosen]
            if not isinstance(picks, list) or not all(isinstance(p, str) for p in picks):
                raise FormError(f"{question.qid}: expected "
                                + ("a list of answers" if question.checkbox else "one answer"))
            wrong = [p for p in picks if p not in question.answers]
            if wrong:
                raise FormError(f"{question.qid}: {_quoted(wrong[0])} is not one of its "
                                "answers (copy an answer exactly)")
            value[question.text] = {
                question.answers[p]: self._nest(question.follow_ups.get(question.answers[p], []),
                                                reply) for p in picks}
        return value

    def pruner(self, speakers: list[str], targets: list[int | None]
               ) -> Callable[[dict[str, Any]], dict[str, Any]]:
        """An empty checkbox list given for a question its condition hides is no answer
        (the page never shows that question); anything else stays for the checker."""
        turns = [t for t in targets if t is not None]

        def finish(value: dict[str, Any]) -> dict[str, Any]:
            for target in targets:
                key = DIALOGUE_TARGET if target is None else str(target)
                context = TurnContext(speakers[target] if target is not None else None, target,
                                      turns, value)
                _prune(self.options, value[key], context)
            return value

        return finish


def _prune(options: Mapping[str, Any], value: dict[str, Any], turn: TurnContext) -> None:
    for question, answers in options.items():
        chosen = value.get(question)
        if chosen == {} and "_dep_" in answers and not is_shown(answers, value, turn):
            del value[question]
        elif isinstance(chosen, dict):
            for answer, nested in chosen.items():
                if isinstance(answers.get(answer), dict) and isinstance(nested, dict):
                    _prune(answers[answer], nested, turn)

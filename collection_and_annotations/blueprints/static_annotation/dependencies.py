"""Named `_dep_` conditions: a question is shown only when its condition holds.

The worker page has the same registry (frontend/src/dependencies.ts); keep the two in step
(docs/worker-api.md, "Conditional questions"). Each function also checks its arguments against
the bucket at launch, so a misspelt question or answer fails there instead of hiding a question
from every worker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collection_and_annotations.errors import UserError

RESERVED = ("_type_", "_dep_")

# The original platform's pairs for `boolPrevTurnExpect` (transitions: did the previous bot turn
# leave the partner something to answer?). Used when the conf gives no `any_of`.
PREV_TURN_PAIRS: tuple[tuple[str, str], ...] = (
    ("If you were to respond to what SPEAKER_X just said (as SPEAKER_Y), would you think it is "
     "appropriate to move on to a new talking point WITHOUT directly acknowledging what SPEAKER_X "
     "just said?", "No"),
    ("Did SPEAKER_X prompt SPEAKER_Y for information?", "Yes"),
    ("Is SPEAKER_X following up on what SPEAKER_Y just said last turn?", "No"),
)


@dataclass(frozen=True)
class TurnContext:
    """What a condition may look at besides the question's siblings: the annotated turn (`index`
    None for a dialogue-level value), the bucket's target turns in this dialogue and the values
    given for them so far (target string -> value)."""

    speaker: str | None
    index: int | None = None
    targets: Sequence[int] = ()
    values: Mapping[str, Any] = field(default_factory=dict)

    def previous_target(self) -> int | None:
        """The closest target turn before this one, None for the first (or no turn)."""
        if self.index is None:
            return None
        earlier = [t for t in self.targets if t < self.index]
        return max(earlier) if earlier else None


def answer_matches(chosen: str, expected: str) -> bool:
    """`expected` is the chosen answer or its first words: "No" matches "No" and "No, SPEAKER_X
    ignored…" but not "Not applicable…" (the next character must not be a letter or digit)."""
    if not chosen.startswith(expected):
        return False
    rest = chosen[len(expected):]
    return not rest or not rest[0].isalnum()


def _chosen_anywhere(value: Any, question: str, answer: str) -> bool:
    """Whether `question`, at any depth of a stored tree value, has a matching answer chosen."""
    if not isinstance(value, dict):
        return False
    for asked, chosen in value.items():
        if not isinstance(chosen, dict):
            continue
        if asked == question and any(answer_matches(a, answer) for a in chosen):
            return True
        if any(_chosen_anywhere(nested, question, answer) for nested in chosen.values()):
            return True
    return False


# --- the functions: (args, sibling values at the question's level, turn context) -> shown? ---

def _answered(args: Mapping[str, Any], siblings: Mapping[str, Any], _turn: TurnContext) -> bool:
    chosen = siblings.get(args["question"])
    if not isinstance(chosen, dict) or not chosen:
        return False
    return "answer" not in args or args["answer"] in chosen


def _not_answered(args: Mapping[str, Any], siblings: Mapping[str, Any], turn: TurnContext) -> bool:
    return not _answered(args, siblings, turn)


def _speaker(args: Any, _siblings: Mapping[str, Any], turn: TurnContext) -> bool:
    return turn.speaker == args


def prev_turn_pairs(args: Any) -> list[tuple[str, str]]:
    """The (question, answer) pairs of a `boolPrevTurnExpect` (the original's three by default)."""
    if isinstance(args, dict) and "any_of" in args:
        return [(q, a) for q, a in args["any_of"]]
    return list(PREV_TURN_PAIRS)


def _bool_prev_turn_expect(args: Any, _siblings: Mapping[str, Any], turn: TurnContext) -> bool:
    previous = turn.previous_target()
    if previous is None:
        return True
    value = turn.values.get(str(previous))
    return any(_chosen_anywhere(value, q, a) for q, a in prev_turn_pairs(args))


# --- launch checks: (args, the question's level of the tree, the whole tree, question) -> error ---

def _offered(answers: Any) -> list[str]:
    return [a for a in answers if a not in RESERVED] if isinstance(answers, dict) else []


def _check_answered(args: Any, level: Mapping[str, Any], _tree: Mapping[str, Any],
                    question: str) -> str | None:
    if not isinstance(args, dict) or not isinstance(args.get("question"), str) or (
        set(args) - {"question", "answer"}
    ) or ("answer" in args and not isinstance(args["answer"], str)):
        return 'takes {"question": "...", "answer": "..."} ("answer" optional)'
    target = args["question"]
    if target == question:
        return "a question cannot depend on its own answer"
    if target not in level:
        return f"question '{target}' is not a sibling of this question (same level of the tree)"
    if "answer" in args and args["answer"] not in _offered(level[target]):
        return f"'{args['answer']}' is not an answer of '{target}'"
    return None


def _check_speaker(args: Any, _level: Mapping[str, Any], _tree: Mapping[str, Any],
                   _question: str) -> str | None:
    return None if args in ("user", "system") else 'takes "user" or "system"'


def _questions(tree: Any) -> dict[str, list[list[str]]]:
    """Every question of a tree spec (any depth) -> the offered answers of each occurrence."""
    found: dict[str, list[list[str]]] = {}
    if not isinstance(tree, dict):
        return found
    for question, answers in tree.items():
        if not isinstance(answers, dict):
            continue
        found.setdefault(question, []).append(_offered(answers))
        for answer in _offered(answers):
            for nested, offered in _questions(answers[answer]).items():
                found.setdefault(nested, []).extend(offered)
    return found


def _check_prev_turn(args: Any, _level: Mapping[str, Any], tree: Mapping[str, Any],
                     _question: str) -> str | None:
    usage = 'takes {} (the original pairs) or {"any_of": [["question", "answer"], ...]}'
    if args is not None and not isinstance(args, dict):
        return usage
    if args:
        pairs = args.get("any_of")
        if set(args) != {"any_of"} or not isinstance(pairs, list) or not pairs or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) for s in p)
            for p in pairs
        ):
            return usage
    questions = _questions(tree)
    for q, a in prev_turn_pairs(args):
        if q not in questions:
            return f"question '{q}' is not in this bucket"
        if not any(answer_matches(offered, a) for group in questions[q] for offered in group):
            return f"no answer of '{q}' is '{a}' or starts with '{a}'"
    return None


@dataclass(frozen=True)
class Dependency:
    holds: Callable[[Any, Mapping[str, Any], TurnContext], bool]
    check: Callable[[Any, Mapping[str, Any], Mapping[str, Any], str], str | None]


DEPENDENCIES: dict[str, Dependency] = {
    "answered": Dependency(_answered, _check_answered),
    "not_answered": Dependency(_not_answered, _check_answered),
    "speaker": Dependency(_speaker, _check_speaker),
    "boolPrevTurnExpect": Dependency(_bool_prev_turn_expect, _check_prev_turn),
}


def check_dependency(spec: Any, question: str, level: Mapping[str, Any],
                     tree: Mapping[str, Any], where: str, path: Path) -> None:
    """Fail at launch on an unknown function, malformed arguments, or arguments naming a question
    or an answer the bucket does not have (`level` holds `question` and its siblings)."""
    where = f"{where}: '_dep_' of '{question}'"
    if not isinstance(spec, dict) or len(spec) != 1:
        raise UserError(f"{where} must be one {{\"function\": args}} pair; functions: "
                        f"{', '.join(DEPENDENCIES)}", path)
    (name, args), = spec.items()
    if name not in DEPENDENCIES:
        raise UserError(f"{where}: unknown function '{name}' (known: "
                        f"{', '.join(DEPENDENCIES)})", path)
    reason = DEPENDENCIES[name].check(args, level, tree, question)
    if reason:
        raise UserError(f"{where}: {name}: {reason}", path)


def is_shown(answers: Mapping[str, Any], siblings: Mapping[str, Any], turn: TurnContext) -> bool:
    """Whether a question whose answer object is `answers` is shown, given its siblings' values."""
    spec = answers.get("_dep_")
    if spec is None:
        return True
    (name, args), = spec.items()
    return DEPENDENCIES[name].holds(args, siblings, turn)

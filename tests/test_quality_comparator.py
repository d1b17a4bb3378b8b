"""The comparator, one table per rule, and the flat <-> nested translation against every
onboarding and gold file of the fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collection_and_annotations.blueprints.static_annotation.buckets import load_buckets
from collection_and_annotations.errors import UserError
from collection_and_annotations.quality.comparator import Alternative, Expected, matches
from collection_and_annotations.quality.files import read_gold, read_screening
from collection_and_annotations.quality.scoring import wrong_turns
from collection_and_annotations.quality.translation import nest


def s(*values: str) -> frozenset[str]:
    return frozenset(values)


def one(required: dict, nothing: bool = False) -> Expected:
    return Expected((Alternative(required, nothing),))


RULES = {
    # rule: [(expected, given, correct?)]
    "empty_means_no_selection": [
        (one({}, nothing=True), {}, True),
        (one({}, nothing=True), {"labels": s()}, True),  # an empty list is no selection
        (one({}, nothing=True), {"labels": s("redundant")}, False),
        (one({}, nothing=True), {"q": s("a")}, False),
    ],
    "disjunction_any_option": [
        (Expected((Alternative({"q": s("a")}), Alternative({"q": s("b")}))), {"q": s("b")}, True),
        (Expected((Alternative({"q": s("a")}), Alternative({"q": s("b")}))), {"q": s("c")}, False),
        (Expected((Alternative({}, True), Alternative({"q": s("a")}))), {}, True),
    ],
    "empty_string_must_be_absent": [
        (one({"q": s(), "r": s("x")}), {"r": s("x")}, True),
        (one({"q": s(), "r": s("x")}), {"r": s("x"), "q": s("a")}, False),
    ],
    "lists_compare_as_sets": [
        (one({"l": s("a", "b")}), {"l": s("b", "a")}, True),
        (one({"l": s("a", "b")}), {"l": s("a")}, False),
        (one({"l": s("a")}), {"l": s("a", "b")}, False),
    ],
    "strings_equal": [
        (one({"q": s("Yes")}), {"q": s("Yes")}, True),
        (one({"q": s("Yes")}), {"q": s("yes")}, False),
        (one({"q": s("Yes")}), {}, False),
    ],
    "extra_keys_are_not_mistakes": [
        (one({"q": s("Yes")}), {"q": s("Yes"), "other": s("z")}, True),
    ],
}


@pytest.mark.parametrize("rule,case", [(rule, case) for rule, cases in RULES.items()
                                       for case in cases])
def test_comparator_rule(rule, case):
    expected, given, correct = case
    assert matches(expected, given) is correct, rule


def test_turn_without_expected_answer_is_not_scored(cep_fixtures):
    buckets = load_buckets(cep_fixtures / "task_config" / "annotation_buckets.json")
    source = {"annotation_tasks": ["consistency_label"], "turns": [
        ["user", "hi"], ["system", "hello"], ["user", "x"], ["system", "y", {}, "fine"]]}
    # turn 1 has no expected answer: anything there is fine; turn 3 expects nothing
    answers = {"consistency_label": {"1": ["redundant"], "3": []}}
    assert wrong_turns(source, buckets, answers) == []
    assert [w.turn.index for w in wrong_turns(
        source, buckets, {"consistency_label": {"3": ["redundant"]}})] == [3]


def _fixture_files(cep):
    config = cep / "task_config"
    return ([("screening", p) for p in sorted((config / "onboarding_data").glob("*.json"))]
            + [("gold", p) for p in sorted((config / "gold_data").glob("*.jsonl"))])


def test_translation_round_trips_every_fixture_answer(cep_fixtures):
    """Each expected alternative, nested as a worker would submit it, scores as correct; a
    different answer on that turn scores as wrong."""
    buckets = load_buckets(cep_fixtures / "task_config" / "annotation_buckets.json")
    files = _fixture_files(cep_fixtures)
    assert len(files) == 6
    checked = 0
    for kind, path in files:
        dialogues = read_screening(path, buckets)[0] if kind == "screening" else read_gold(
            path, buckets)
        for dialogue in dialogues:
            tasks = dialogue.source["annotation_tasks"]
            for turn in dialogue.turns:
                for alternative in turn.expected.alternatives:
                    answers = {name: {str(turn.index): nest(buckets[name], alternative)}
                               for name in tasks}
                    wrong = [w.turn.index for w in wrong_turns(dialogue.source, buckets,
                                                                 answers)]
                    assert turn.index not in wrong, (path.name, dialogue.name, turn.index)
                    checked += 1
                # a wrong answer: expected nothing -> choose something; else choose nothing
                first = turn.expected.alternatives[0]
                if any(a.nothing for a in turn.expected.alternatives):
                    other = _some_answer(buckets[tasks[0]])
                else:
                    other = nest(buckets[tasks[0]], Alternative({}, True))
                answers = {tasks[0]: {str(turn.index): other}}
                if not first.nothing or other not in ({}, []):
                    wrong = [w.turn.index for w in wrong_turns(dialogue.source, buckets,
                                                                 answers)]
                    assert turn.index in wrong, (path.name, dialogue.name, turn.index)
    assert checked > 200


def _some_answer(bucket):
    if bucket.config == "multiselect":
        return [bucket.options[0]["value"]]
    question = next(iter(bucket.options))
    answer = next(a for a in bucket.options[question] if a not in ("_type_", "_dep_"))
    return {question: {answer: {}}}


def _write(tmp_path, name: str, document) -> str:
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("\n".join(json.dumps(line) for line in document) + "\n")
    else:
        path.write_text(json.dumps(document, indent=1))
    return str(path)


def _training(expected, **extra):
    return {"annotation_tasks": ["transitions"], "pass_criteria": 1, **extra, "turns": [
        ["user", "hi"], ["system", "hello", expected, "why"]]}


Q = "Is SPEAKER_X introducing a new topic?"
BAD_FILES = [
    ({"a": _training({"No such question?": "x"})},
     "'No such question?' is not a question any bucket"),
    ({"a": _training({Q: "Maybe"})}, "'Maybe' is not an answer bucket 'transitions' offers"),
    ({"a": {"annotation_tasks": ["transitions"], "pass_criteria": 1,
            "turns": [["user", "hi"], ["system", "hello"]]}}, "no turn has an expected answer"),
    ({"a": _training({}, pass_criteria="two")}, "'pass_criteria' must be a number"),
    ({"a": _training({}, pass_criteria=None)}, "has no 'pass_criteria'"),
    ({"a": {"annotation_tasks": ["transitions"], "pass_criteria": 1, "turns": [
        ["user", "hi", {}, "x"], ["system", "hello"]]}}, "no scorable turn-level bucket"),
    ({"a": _training({"_disjunction": True, "options": []})}, "non-empty list 'options'"),
]


@pytest.mark.parametrize("document,reason", BAD_FILES)
def test_bad_screening_file_names_file_line_and_reason(tmp_path, cep_fixtures, document,
                                                       reason):
    buckets = load_buckets(cep_fixtures / "task_config" / "annotation_buckets.json")
    path = _write(tmp_path, "screen.json", {"first": _training({}), **document})
    with pytest.raises(UserError) as error:
        read_screening(path, buckets)
    assert reason in error.value.reason
    key_line = Path(path).read_text().splitlines().index(' "a": {') + 1
    assert error.value.path == path and error.value.line == key_line


def test_bad_gold_file_names_its_line(tmp_path, cep_fixtures):
    buckets = load_buckets(cep_fixtures / "task_config" / "annotation_buckets.json")
    good = {"data": [_training({Q: "Yes, SPEAKER_X is changing the topic of the conversation."})]}
    path = _write(tmp_path, "gold.jsonl", [good, {"data": [_training({Q: "Maybe"})]}])
    with pytest.raises(UserError) as error:
        read_gold(path, buckets)
    assert error.value.line == 2 and "'Maybe'" in error.value.reason


def test_every_bad_gold_line_is_reported_at_once(tmp_path, cep_fixtures):
    buckets = load_buckets(cep_fixtures / "task_config" / "annotation_buckets.json")
    good = {"data": [_training({Q: "Yes, SPEAKER_X is changing the topic of the conversation."})]}
    path = _write(tmp_path, "gold.jsonl", [{"data": [_training({Q: "Maybe"})]}, good,
                                           {"data": [_training({Q: "Perhaps"})]}])
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"data": [\n')
    with pytest.raises(UserError) as error:
        read_gold(path, buckets)
    shown = str(error.value)
    assert shown.startswith("3 problems:")
    assert f"{path}:1: gold dialogue" in shown and "'Maybe'" in shown
    assert f"{path}:3: gold dialogue" in shown and "'Perhaps'" in shown
    assert f"{path}:4: malformed JSON" in shown and f"{path}:2:" not in shown


def test_nested_question_needs_its_parent_answer(tmp_path, cep_fixtures):
    buckets = load_buckets(cep_fixtures / "task_config" / "annotation_buckets.json")
    nested = ("Do you know whether ALL of the facts that SPEAKER_X uses or assumes are "
              "accurate?")
    document = {"a": {"annotation_tasks": ["knowledge"], "pass_criteria": 0, "turns": [
        ["user", "hi"], ["system", "x", {nested: "Yes, I know for sure ALL facts are accurate."},
                         "e"]]}}
    with pytest.raises(UserError, match="is only asked after"):
        read_screening(_write(tmp_path, "s.json", document), buckets)

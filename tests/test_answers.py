"""Server-side answer checks for every bucket config, `require` levels and `_dep_` conditions."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import BUCKETS

from collection_and_annotations.blueprints.static_annotation.answers import (
    DialogueView,
    check_answers,
)
from collection_and_annotations.blueprints.static_annotation.buckets import (
    load_buckets,
    parse_bucket,
)
from collection_and_annotations.errors import UserError

SPEAKERS = ["user", "system", "user", "system"]
HERE = Path("inline.json")


def _check(bucket_spec, value, target="1", speakers=SPEAKERS, answer_each_dialogue=True):
    bucket = parse_bucket("b", bucket_spec, HERE)
    answers = {"d": {"b": {target: value}}} if value is not None else {"d": {}}
    return check_answers(answers, [DialogueView("d", speakers, ["b"])], {"b": bucket},
                         answer_each_dialogue)


TREE = {
    "config": "nondetails_button_flow", "indices": "odd", "require": {"level": "turn"},
    "options": {
        "Q1": {"A": {}, "B": {"Q2": {"B1": {}, "B2": {}}}},
        "Q3": {"_type_": {"checkbox": {}}, "C1": {}, "C2": {}},
        "Q4": {"_dep_": {"answered": {"question": "Q1", "answer": "A"}}, "D1": {}, "D2": {}},
    },
}


def _tree_value(q1, q3=(), q4=None):
    value = {"Q1": q1, "Q3": {c: {} for c in q3}}
    if q4:
        value["Q4"] = {q4: {}}
    return value


def test_tree_complete_with_nested_and_dependency():
    full = {"1": _tree_value({"B": {"Q2": {"B2": {}}}}, ["C1", "C2"]),
            "3": _tree_value({"A": {}}, [], "D1")}
    bucket = parse_bucket("b", TREE, HERE)
    assert check_answers({"d": {"b": full}}, [DialogueView("d", SPEAKERS, ["b"])],
                         {"b": bucket}) == []


@pytest.mark.parametrize("value, message", [
    (_tree_value({"B": {}}), "missing"),                          # nested Q2 unanswered
    (_tree_value({"A": {}}), "missing"),                          # Q4 shown but unanswered
    (_tree_value({"B": {"Q2": {"B1": {}}}}, [], "D1"), "not shown"),  # Q4 hidden
    (_tree_value({"A": {}, "B": {}}, [], "D1"), "only one answer"),
    (_tree_value({"Z": {}}), "'Z' is not an offered answer"),
    ({"Q9": {"A": {}}}, "not offered here"),
])
def test_tree_problems(value, message):
    problems = _check(TREE, value)
    assert any(message in p.message for p in problems), problems


def test_require_turn_counts_every_target_turn_and_dialogue_level():
    problems = _check(TREE, _tree_value({"A": {}}, [], "D2"), target="1")
    assert [(p.turn, p.message.split(":")[0]) for p in problems] == [(3, "missing")]
    dialogue_level = {**TREE, "require": {"level": "dialogue"}}
    assert _check(dialogue_level, _tree_value({"A": {}}, [], "D2")) == []
    assert "answer at least one turn" in _check(dialogue_level, None)[0].message


def test_no_require_accepts_partial_values_but_not_nothing():
    spec = {k: v for k, v in TREE.items() if k != "require"}
    assert _check(spec, {"Q1": {"B": {}}}) == []
    (problem,) = _check(spec, None)
    assert (problem.dialogue, problem.bucket, problem.message) == \
        ("d", "b", "answer at least one question about this dialogue")
    assert _check(spec, None, answer_each_dialogue=False) == []  # allow_unanswered_dialogues


@pytest.mark.parametrize(("spec", "value", "answered"), [
    ({"config": "multiselect", "indices": "all", "options": [{"value": "x", "label": "X"}]},
     [], True),  # "none apply" is an answer
    ({"config": "foreach-5-select", "indices": "system",
      "options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}]},
     {"a": 4}, True),  # one rating of two
    ({"config": "foreach-5-select", "indices": "system",
      "options": [{"value": "a", "label": "A"}]}, {}, False),
    ({"config": "nondetails_button_flow", "indices": "odd",
      "options": {"Q1": {"A": {}, "B": {}}}}, {"Q1": {}}, False),  # a radio left open
    ({"config": "nondetails_button_flow", "indices": "odd",
      "options": {"Q3": {"_type_": {"checkbox": {}}, "C1": {}}}}, {"Q3": {}}, True),
])
def test_what_counts_as_an_answer_to_a_dialogue(spec, value, answered):
    problems = _check(spec, value)
    assert problems == [] if answered else [p.message for p in problems] == [
        "answer at least one question about this dialogue"]


def test_multiselect_values_and_speaker_filter():
    spec = {"config": "multiselect", "indices": "all", "require": {"level": "turn"},
            "options": [{"value": "x", "label": "X"},
                        {"value": "y", "label": "Y", "speaker": "system"}]}
    assert _check(spec, ["x", "y"], target="1")[0].turn == 0  # turn 0 missing, turn 1 fine
    problems = _check(spec, ["y"], target="0")
    assert any("'y' is not an offered option" in p.message for p in problems)
    assert any("list of option values" in p.message for p in _check(spec, "x", target="1"))


@pytest.mark.parametrize("config, options, good, bad", [
    ("likert-5-dialogue", [{"label": "Q", "question": "How?"}], {"Q": 5}, {"Q": 0}),
    ("foreach-5-select-dialogue", [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}],
     {"a": 1, "b": 2}, {"a": 1, "b": True}),
    ("comparative", ["left", "right"], "left", "middle"),
])
def test_dialogue_level_values(config, options, good, bad):
    spec = {"config": config, "options": options, "require": {"level": "dialogue"}}
    assert _check(spec, good, target="dialogue") == []
    assert _check(spec, bad, target="dialogue")
    assert "missing" in _check(spec, None)[0].message


def test_foreach_turn_needs_every_option_when_required():
    spec = {"config": "foreach-5-select", "indices": "system", "require": {"level": "turn"},
            "options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}]}
    problems = _check(spec, {"a": 3}, target="1")
    assert {p.turn for p in problems} == {1, 3}


@pytest.mark.parametrize("spec, message", [
    ({"config": "radio_grid", "options": {}}, "unknown config 'radio_grid'"),
    ({"config": "multiselect", "indices": "every_other", "options": []}, "unknown indices"),
    ({"config": "comparative", "options": [1, 2]}, "list of strings"),
    ({**TREE, "options": {"Q": {"_dep_": {"when_sunny": {}}, "A": {}}}},
     "unknown function 'when_sunny'"),
    ({**TREE, "require": {"level": "page"}}, "require.level"),
    ({"config": "text"}, "a text bucket needs a 'question'"),
    ({"config": "text", "question": "Why?", "options": []}, "a text bucket has no 'options'"),
    ({"config": "text", "question": "Why?", "min_chars": -1}, "'min_chars' must be a whole"),
    ({"config": "text", "question": "Why?", "min_chars": 30, "max_chars": 20},
     r"'max_chars' \(20\) must be at least 1 and at least 'min_chars' \(30\)"),
    ({"config": "text", "question": "Why?", "multiline": "yes"}, "'multiline' must be true"),
    ({"config": "text", "question": "Why?", "explain": True}, "not on text"),
    ({**TREE, "explain": "yes"}, "'explain' must be true or false"),
    ({**TREE, "explain_min_chars": 10}, "'explain_min_chars' needs \"explain\": true"),
    ({**TREE, "explain": True, "explain_max_chars": 0}, "'explain_max_chars' \\(0\\)"),
])
def test_bad_bucket_definitions_fail_at_launch(spec, message):
    with pytest.raises(UserError, match=message):
        parse_bucket("b", spec, HERE)


def test_builtin_buckets_cover_every_config():
    configs = {b.config for b in load_buckets(BUCKETS).values()}
    assert configs == {"button_flow", "nondetails_button_flow", "nondetails_nonhelp_button_flow",
                       "multiselect", "likert-5-turn", "foreach-5-select",
                       "foreach-5-select-dialogue", "likert-5-dialogue", "comparative"}


def test_fixture_buckets_parse(cep_fixtures):
    buckets = load_buckets(cep_fixtures / "task_config" / "annotation_buckets.json")
    assert len(buckets) == 35
    assert buckets["transitions"].target_turns([["user", ""], ["system", ""]] * 3) == [1, 3, 5]


PROMPT = "Did SPEAKER_X prompt SPEAKER_Y for information?"
MOVE_ON = ("If you were to respond to what SPEAKER_X just said (as SPEAKER_Y), would you think it "
           "is appropriate to move on to a new talking point WITHOUT directly acknowledging what "
           "SPEAKER_X just said?")


def _tree(options):
    return {"config": "nondetails_button_flow", "indices": "odd", "options": options}


def _dep(dep, **extra):
    return _tree({"Q1": {"Yes, it does.": {"Deep": {"Not applicable.": {}, "Yes.": {}}},
                         "No.": {}},
                  "Q2": {"_dep_": dep, "A": {}}, **extra})


@pytest.mark.parametrize("spec, message", [
    (_dep({"answered": {"question": "Q9"}}), "question 'Q9' is not a sibling"),
    (_dep({"answered": {"question": "Deep"}}), "question 'Deep' is not a sibling"),
    (_dep({"not_answered": {"question": "Q1", "answer": "Maybe."}}),
     "'Maybe.' is not an answer of 'Q1'"),
    (_dep({"answered": {"question": "Q2"}}), "cannot depend on its own answer"),
    (_dep({"answered": {"question": "Q1", "answr": "No."}}), "takes"),
    (_dep({"speaker": "bot"}), "takes \"user\" or \"system\""),
    (_dep({"boolPrevTurnExpect": {}}), f"question '{MOVE_ON}' is not in this bucket"),
    (_dep({"boolPrevTurnExpect": {"any_of": [["Q9", "Yes"]]}}), "question 'Q9' is not in"),
    (_dep({"boolPrevTurnExpect": {"any_of": [["Deep", "No"]]}}),
     "no answer of 'Deep' is 'No' or starts with 'No'"),
    (_dep({"boolPrevTurnExpect": {"any_of": []}}), "any_of"),
    (_dep({"boolPrevTurnExpect": {"any_of": [["Q1"]]}}), "any_of"),
    (_dep({"boolPrevTurnExpect": {"pairs": [["Q1", "Yes"]]}}), "any_of"),
    (_dep({"speaker": "user", "answered": {"question": "Q1"}}), "must be one"),
])
def test_dependencies_naming_what_the_bucket_lacks_fail_at_launch(spec, message):
    with pytest.raises(UserError) as raised:
        parse_bucket("b", spec, HERE)
    text = str(raised.value)
    assert message in text and "inline.json" in text and "bucket 'b'" in text, text
    assert "'_dep_' of 'Q2'" in text, text


@pytest.mark.parametrize("dep", [
    {"answered": {"question": "Q1", "answer": "No."}},
    {"boolPrevTurnExpect": {"any_of": [["Q1", "Yes"], ["Deep", "Yes"]]}},  # any depth, prefix
    {"boolPrevTurnExpect": {"any_of": [["Deep", "Not applicable."]]}},
])
def test_dependencies_on_existing_questions_load(dep):
    parse_bucket("b", _dep(dep), HERE)


def test_default_pairs_need_the_original_questions():
    original = {MOVE_ON: {"Yes.": {}, "No, an answer is expected.": {}},
                PROMPT: {"Yes, a question.": {}, "No.": {}},
                "Is SPEAKER_X following up on what SPEAKER_Y just said last turn?": {
                    "Yes.": {}, "No.": {}}}
    parse_bucket("b", _dep({"boolPrevTurnExpect": {}}, **original), HERE)
    del original[PROMPT]
    with pytest.raises(UserError, match="prompt SPEAKER_Y for information"):
        parse_bucket("b", _dep({"boolPrevTurnExpect": {}}, **original), HERE)

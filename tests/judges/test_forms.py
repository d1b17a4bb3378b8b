"""What a judge is asked and how its JSON becomes a worker's answer: built from the bucket's
own questions, options and `_dep_` rules, the dialogue with turn numbers and the page's
speaker names, and the prompt template (checked, versioned by hash)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from collection_and_annotations.blueprints.static_annotation.answers import (
    DialogueView,
    check_bucket,
)
from collection_and_annotations.blueprints.static_annotation.buckets import parse_bucket
from collection_and_annotations.errors import UserError
from collection_and_annotations.judges.forms import FormError, make_form
from collection_and_annotations.judges.prompt import PromptTemplate, transcript
from collection_and_annotations.judges.reply import reply_json

NAMES = {"system": "Assistant", "user": "Visitor"}
SPEAKERS = ["user", "system", "user", "system"]
ACK = "Does SPEAKER_X acknowledge SPEAKER_Y?"
TREE = {
    "config": "button_flow", "indices": "system", "require": {"level": "turn"},
    "options": {
        ACK: {"Yes": {}, "No, SPEAKER_X ignores it.": {
            "Why?": {"Off topic": {}, "Rude": {}}}},
        "Extra problems?": {"_type_": {"checkbox": {}}, "_dep_": {"answered": {
            "question": ACK, "answer": "No, SPEAKER_X ignores it."}},
            "Repeats": {}, "Too long": {}},
        "Follows up?": {"_dep_": {"boolPrevTurnExpect": {"any_of": [[ACK, "No"]]}},
                        "Yes": {}, "No": {}},
    },
}


def _bucket(spec: dict, name: str = "b"):
    return parse_bucket(name, spec, Path("buckets.json"))


def test_a_question_tree_with_follow_ups_conditions_and_checkboxes():
    bucket = _bucket(TREE)
    form = make_form(bucket, SPEAKERS, NAMES)
    assert "q1. Does Assistant acknowledge Visitor?" in form.text
    assert '"No, Assistant ignores it." (then answer q2)' in form.text
    assert 'q2. Why? (only when q1 is "No, Assistant ignores it."; otherwise null)' in form.text
    assert ('q3. Extra problems? (only when q1 is answered with "No, Assistant ignores it."; '
            "otherwise null)") in form.text
    assert "q4. Follows up? (only for the first annotated turn, or when for the annotated turn " \
           'before it q1 was answered with an answer starting "No"' in form.text
    turn = form.schema["properties"]["turn 2"]
    assert turn["required"] == ["q1", "q2", "q3", "q4"]
    assert turn["properties"]["q1"] == {"type": "string", "enum": [
        "Yes", "No, Assistant ignores it."]}
    assert turn["properties"]["q3"]["anyOf"][0]["type"] == "array"
    value = form.value({
        "turn 2": {"q1": "No, Assistant ignores it.", "q2": "Rude", "q3": ["Repeats"],
                   "q4": "Yes"},
        "turn 4": {"q1": "Yes", "q2": None, "q3": [], "q4": "No"}})
    assert value == {
        "1": {ACK: {"No, SPEAKER_X ignores it.": {"Why?": {"Rude": {}}}},
              "Extra problems?": {"Repeats": {}}, "Follows up?": {"Yes": {}}},
        # [] for a question its condition hides is no answer, as on the page
        "3": {ACK: {"Yes": {}}, "Follows up?": {"No": {}}}}
    check = check_bucket(DialogueView("d", SPEAKERS, ["b"]), bucket, value)
    assert check.invalid == [] and check.missing == []
    # a hidden question answered is left for the checker to refuse
    shown = form.value({"turn 2": {"q1": "Yes", "q2": None, "q3": ["Too long"], "q4": "No"},
                        "turn 4": {"q1": "Yes", "q2": None, "q3": None, "q4": None}})
    problems = check_bucket(DialogueView("d", SPEAKERS, ["b"]), bucket, shown)
    assert [p.message for p in problems.invalid] == [
        "this question is not shown for these answers"]
    assert problems.missing == []
    # ... and a shown one left null is missing (q4 follows a "No" on the turn before)
    unanswered = form.value({
        "turn 2": {"q1": "No, Assistant ignores it.", "q2": "Rude", "q3": [], "q4": "No"},
        "turn 4": {"q1": "Yes", "q2": None, "q3": None, "q4": None}})
    assert unanswered["1"]["Extra problems?"] == {}  # shown, none ticked: kept
    problems = check_bucket(DialogueView("d", SPEAKERS, ["b"]), bucket, unanswered)
    assert problems.invalid == [] and [p.turn for p in problems.missing] == [3]


@pytest.mark.parametrize(("reply", "message"), [
    ([], "the reply must be one JSON object"),
    ({"turn 2": {"q1": "Yes"}}, 'missing keys "turn 4"'),
    ({"turn 2": {}, "turn 4": {}, "turn 6": {}}, 'unknown keys "turn 6"'),
    ({"turn 2": {"q1": "Maybe"}, "turn 4": {}}, 'turn 2: q1: "Maybe" is not one of its answers'),
    ({"turn 2": {"q3": "Repeats"}, "turn 4": {}}, "turn 2: q3: expected a list of answers"),
    ({"turn 2": {"q9": "Yes"}, "turn 4": {}}, 'turn 2: no question "q9"'),
])
def test_a_reply_of_the_wrong_shape_says_what_to_fix(reply, message):
    form = make_form(_bucket(TREE), SPEAKERS, NAMES)
    with pytest.raises(FormError, match=message.replace("(", r"\(")):
        form.value(reply)


def test_multiselect_ratings_and_comparisons():
    labels = _bucket({"config": "multiselect", "indices": "all", "question": "Which apply?",
                      "options": [{"value": "rude", "label": "Rude"},
                                  {"value": "asks", "label": "Asks back", "speaker": "system"}]})
    form = make_form(labels, SPEAKERS, NAMES)
    # turns of both speakers: SPEAKER_X cannot be one name, and options follow the speaker
    assert form.schema["properties"]["turn 1"]["items"]["enum"] == ["rude"]
    assert form.schema["properties"]["turn 2"]["items"]["enum"] == ["rude", "asks"]
    assert '- "asks": Asks back (only for turns by Assistant)' in form.text
    with pytest.raises(FormError, match="turn 3: expected a list of option values"):
        form.value({"turn 1": [], "turn 2": [], "turn 3": "rude", "turn 4": []})
    mixed = make_form(_bucket({"config": "multiselect", "indices": "all",
                               "question": "Did SPEAKER_X help SPEAKER_Y?",
                               "options": [{"value": "v", "label": "v"}]}), SPEAKERS, NAMES)
    assert "Did the speaker of the annotated turn help the other speaker?" in mixed.text
    rating = make_form(_bucket({"config": "likert-5-dialogue", "options": [
        {"label": "Overall", "question": "How good was SPEAKER_X?"}],
        "label_details": {"1": "bad", "5": "great"}}), SPEAKERS, NAMES)
    assert '- "Overall": How good was Assistant?' in rating.text
    assert "Scale: 1 = bad; 5 = great" in rating.text
    assert rating.value({"dialogue": {"Overall": 4}}) == {"dialogue": {"Overall": 4}}
    compare = make_form(_bucket({"config": "comparative", "question": "Better SPEAKER_X?",
                                 "options": ["Left SPEAKER_X", "Right", "Same"]}), SPEAKERS,
                        NAMES)
    assert compare.schema["properties"]["dialogue"]["enum"] == ["Left Assistant", "Right",
                                                                "Same"]
    assert compare.value({"dialogue": "Left Assistant"}) == {"dialogue": "Left SPEAKER_X"}


def test_the_template_is_checked_and_versioned_by_its_hash(tmp_path):
    own = tmp_path / "prompt.txt"
    own.write_text("Judge carefully. It costs $$0.\n---\n${dialogue}\n${questions}\n")
    template = PromptTemplate.load(own)
    assert template.sha256 == hashlib.sha256(own.read_bytes()).hexdigest()
    assert template.messages(dialogue="D", questions="Q", task_title="", bucket="",
                             instructions="", answer_format="") == [
        {"role": "system", "content": "Judge carefully. It costs $0."},
        {"role": "user", "content": "D\nQ"}]
    user_only = tmp_path / "user.txt"
    user_only.write_text("${dialogue}")
    assert PromptTemplate.load(user_only).messages(dialogue="D") == [
        {"role": "user", "content": "D"}]
    wrong = tmp_path / "wrong.txt"
    wrong.write_text("${dialog}\n")
    with pytest.raises(UserError, match="unknown placeholder.*dialog.*known: task_title"):
        PromptTemplate.load(wrong)
    wrong.write_text("costs $5\n")
    with pytest.raises(UserError, match=r"write \$\$ for a dollar sign"):
        PromptTemplate.load(wrong)


def test_the_dialogue_as_the_prompt_shows_it():
    turns = [["user", "Hi"], ["system", "Hello!"]]
    assert transcript(turns, NAMES, "Dialogue 1 (left)", "likes tea") == (
        "Dialogue 1 (left)\nAssistant's persona: likes tea\nTurn 1 (Visitor): Hi\n"
        "Turn 2 (Assistant): Hello!")


@pytest.mark.parametrize("text", [
    '{"a": 1}', '```json\n{"a": 1}\n```', 'Here you go: {"a": 1} Hope it helps.'])
def test_the_json_of_a_reply(text):
    assert reply_json(text) == {"a": 1}


@pytest.mark.parametrize(("text", "message"), [
    ("no json", "holds no JSON object"), ('{"a": 1,}', "not valid JSON")])
def test_a_reply_without_json(text, message):
    with pytest.raises(FormError, match=message):
        reply_json(text)


def test_every_bucket_of_the_original_study_has_a_form(cep_fixtures):
    buckets = json.loads((cep_fixtures / "task_config" / "annotation_buckets.json")
                         .read_text())["config"]
    speakers = ["user", "system"] * 3
    for name, spec in buckets.items():
        form = make_form(_bucket(spec, name), speakers, NAMES)
        assert form.targets and form.schema["required"], name
        assert "SPEAKER_" not in form.text + json.dumps(form.schema), name


def test_a_text_bucket_asks_for_words_and_keeps_them_as_given():
    bucket = _bucket({"config": "text", "indices": "no_indices", "min_chars": 5,
                      "max_chars": 40, "question": "Why did SPEAKER_X answer so?"})
    form = make_form(bucket, SPEAKERS, NAMES)
    assert "Why did Assistant answer so?" in form.text
    assert form.schema["properties"]["dialogue"] == {"type": "string", "minLength": 5,
                                                     "maxLength": 40}
    value = form.value({"dialogue": "It was asked twice."})
    assert value == {"dialogue": "It was asked twice."}
    check = check_bucket(DialogueView("d", SPEAKERS, ["b"]), bucket, value)
    assert check.invalid == [] and check.missing == []
    for reply in ("ok", "x" * 41, 3):
        with pytest.raises(FormError):
            form.value({"dialogue": reply})

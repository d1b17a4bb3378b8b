"""`python -m collection_and_annotations export`: item rows and whole submissions."""

from __future__ import annotations

import csv
import io
import json

from helpers import cli, dialogue, write_task

from collection_and_annotations.engine.allocation import claim_unit
from collection_and_annotations.engine.work import submit, unit_view

RELEVANCE_Q = "Does SPEAKER_X's reply follow from what SPEAKER_Y just said?"
PROBLEMS_Q = "Which problems does the reply have?"


def _submit_one(served, worker):
    claim = claim_unit(served.db, served.task_id, served.run_id, "local", worker, "1",
                       served.limits)
    view = unit_view(served.db, served.blueprint, claim.unit_public_id, claim.worker_id)
    key = view["dialogues"][0]["key"]
    answers = {key: {
        "relevance": {
            "1": {RELEVANCE_Q: {"Partly, it responds but drifts away.": {
                "Where does it drift?": {"To something unrelated.": {}}}},
                  PROBLEMS_Q: {"It repeats an earlier reply.": {},
                               "It is hard to understand.": {}}},
            "3": {RELEVANCE_Q: {"Yes, it responds to it directly.": {}}, PROBLEMS_Q: {}},
        },
        "issues": {"1": ["off_topic"]},
        "overall_quality": {"dialogue": {"Overall": 2}},
    }}
    submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id, answers,
           {"duration_ms": 1}, None)
    return answers


def _export(database_url, *args):
    result = cli("export", "--task", "t", "--database-url", database_url, *args)
    assert result.returncode == 0, result.stderr
    return result


def test_export_items_csv_jsonl_and_whole_submissions(tmp_path, database_url, open_conf):
    tasks = ["relevance", "issues", "overall_quality"]
    conf = write_task(tmp_path, [{"data": [dialogue("d1", "g1", tasks, origin="author")]}],
                      {"g1": 2})
    served = open_conf(str(conf), database_url)
    answers = _submit_one(served, "alice")

    rows = list(csv.DictReader(io.StringIO(_export(database_url, "--format", "csv").stdout)))
    summary = {(r["turn_index"], r["bucket"], r["question"], r["answer"]) for r in rows}
    assert summary == {
        ("1", "relevance", RELEVANCE_Q, "Partly, it responds but drifts away."),
        ("1", "relevance", "Where does it drift?", "To something unrelated."),
        ("1", "relevance", PROBLEMS_Q, ""),  # in its 0/1 option columns
        ("3", "relevance", RELEVANCE_Q, "Yes, it responds to it directly."),
        ("3", "relevance", PROBLEMS_Q, ""),
        ("1", "issues", "issues_labels", ""),
        ("", "overall_quality", "Overall, how good a conversation partner was SPEAKER_X?", "2"),
    }
    # the questions as the worker read them: speakers named, a nested one after its parents
    texts = {r["question"]: r["question_text"] for r in rows}
    assert texts[RELEVANCE_Q] == "Does Bot's reply follow from what User just said?"
    assert texts["Where does it drift?"] == ("Does Bot's reply follow from what User just "
                                             "said? > Partly, it responds but drifts away. > "
                                             "Where does it drift?")
    assert texts["Overall, how good a conversation partner was SPEAKER_X?"] == \
        "Overall, how good a conversation partner was Bot?"
    # one 0/1 column per option of a checkbox or multiselect question, for pandas
    ticked = {(r["turn_index"], r["question"]): r for r in rows}
    problems = f"relevance / {PROBLEMS_Q} / "
    assert {k[len(problems):]: v for k, v in ticked[("1", PROBLEMS_Q)].items()
            if k.startswith(problems)} == {"It repeats an earlier reply.": "1",
                                            "It contradicts something said before.": "0",
                                            "It is hard to understand.": "1"}
    assert {v for k, v in ticked[("3", PROBLEMS_Q)].items() if k.startswith(problems)} == {"0"}
    assert {k: v for k, v in ticked[("1", "issues_labels")].items()
            if k.startswith("issues / ")} == {
        "issues / off_topic": "1", "issues / repetitive": "0", "issues / factual_error": "0",
        "issues / asks_question": "0"}
    assert ticked[("1", RELEVANCE_Q)]["issues / off_topic"] == ""  # another question's
    assert {r["dialogue_id"] for r in rows} == {"d1"} and {r["speaker"] for r in rows} == {
        "system", ""}
    worker = rows[0]["worker"]
    assert worker.startswith("w_") and "alice" not in json.dumps(rows)
    assert all(float(r["duration_seconds"]) >= 0 for r in rows)

    items = [json.loads(line) for line in _export(database_url).stdout.splitlines()]
    assert len(items) == len(rows) and items[0]["dialogue_id"] == "d1"
    # JSONL keeps a set of options as its list
    assert {(i["question"], json.dumps(i["answer"])) for i in items if i["turn_index"] == 1
            and i["question"] in (PROBLEMS_Q, "issues_labels")} == {
        (PROBLEMS_Q, json.dumps(["It is hard to understand.", "It repeats an earlier reply."])),
        ("issues_labels", '["off_topic"]')}
    assert not any(k.startswith("issues / ") for i in items for k in i)

    out = tmp_path / "whole.jsonl"
    result = _export(database_url, "--format", "submissions", "-o", str(out))
    assert "exported 1 submissions" in result.stderr
    (whole,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert whole["answers"] == answers and whole["worker"] == worker
    assert whole["timings"]["client"] == {"duration_ms": 1}
    assert (whole["pool"], whole["quality_passed"], whole["flagged_for_review"]) == (
        "main", None, False)
    result = _export(database_url, "--format", "submissions", "--exclude-quality")
    assert "exported 1 submissions" in result.stderr  # real work stays


def test_export_unknown_task(tmp_path, database_url, open_conf):
    open_conf(str(write_task(tmp_path, [{"data": [dialogue("d1", "g1", ["issues"])]}],
                             {"g1": 1})), database_url)
    result = cli("export", "--task", "nope", "--database-url", database_url)
    assert result.returncode == 1 and "no task named 'nope'" in result.stderr
    assert "tasks: t" in result.stderr

"""Free text and explanations as they are stored (`config: "text"` answers are strings; an
"explain" bucket keeps `{"explanation": {target: text}}` beside its targets): exports write
them as columns, and `analyze` counts, measures and lists them. Hand-made submissions in the
stored format, read by the real export and analysis code."""

from __future__ import annotations

import csv
import io
import json

from collection_and_annotations.analysis.behaviours import load_behaviours
from collection_and_annotations.analysis.load import Tables, add_records
from collection_and_annotations.analysis.report import render_report
from collection_and_annotations.analysis.results import Settings, compute_results
from collection_and_annotations.export.writers import json_safe, write_export

BUCKETS = {
    "why_text": {"config": "text", "level": "dialogue", "question": "What did SPEAKER_X do "
                 "well?", "task_title": "why_text", "options": None},
    "turn_note": {"config": "text", "level": "turn", "question": "Anything odd here?",
                  "task_title": "turn_note", "options": None},
    "overall_quality": {"config": "likert-5-dialogue", "level": "dialogue",
                        "task_title": "overall_quality", "question": None,
                        "options": [{"label": "Overall", "question": "How good?"}]},
    "preference": {"config": "comparative", "level": "dialogue", "question": "Which one?",
                   "task_title": "preference",
                   "options": ["Dialogue 1 (left)", "Dialogue 2 (right)", "No real difference"]},
}
REASON = 'It answered the question <b>directly</b> & "kindly".'


def _record(unit: str, worker: str, bot: str, texts: dict, explanation: str | None) -> dict:
    overall = {"dialogue": {"Overall": 4}}
    if explanation is not None:
        overall["explanation"] = {"dialogue": explanation}
    return {
        "task": "t", "task_kind": "static_annotation", "run_id": 1, "unit_id": unit,
        "worker": worker, "submitted_at": "2026-01-01T00:00:00Z",
        "timings": {"server": {"duration_seconds": 30}}, "layout": None,
        "dialogues": [{"key": "k1", "dialogue_id": f"d-{bot}", "group_id": f"g-{bot}",
                       "speakers": ["user", "system", "user", "system"], "position": 1,
                       "tasks": ["why_text", "turn_note", "overall_quality"], "left": None,
                       "source_fields": {"bot": bot}}],
        "answers": {"k1": {**texts, "overall_quality": overall}},
        "pool": "main", "quality_mistakes": None, "quality_passed": None,
        "flagged_for_review": False, "review": None,
        "speaker_names": {"system": "Robo", "user": "You"},
    }


def _records() -> list[dict]:
    return [
        _record("u1", "w_a", "alpha", {"why_text": {"dialogue": "Clear and kind answers."},
                                       "turn_note": {"1": "Too long.", "3": ""}}, REASON),
        _record("u2", "w_b", "alpha", {"why_text": {"dialogue": "  "}}, None),
        _record("u3", "w_a", "beta", {"why_text": {"dialogue": "It\nrepeated itself."}},
                "Too short."),
    ]


def test_exports_write_texts_and_explanations_as_columns():
    out = io.StringIO()
    write_export(((r, BUCKETS) for r in _records()), "items-csv", out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    by = {(r["unit_id"], r["bucket"], r["turn_index"]): r for r in rows}
    assert by[("u1", "why_text", "")]["answer"] == "Clear and kind answers."
    assert by[("u1", "why_text", "")]["question_text"] == "What did Robo do well?"
    assert by[("u3", "why_text", "")]["answer"] == "It\nrepeated itself."
    assert by[("u1", "turn_note", "1")]["answer"] == "Too long."
    assert by[("u1", "turn_note", "1")]["speaker"] == "system"
    assert by[("u1", "overall_quality", "")]["explanation"] == REASON
    assert by[("u1", "overall_quality", "")]["answer"] == "4"
    assert by[("u2", "overall_quality", "")]["explanation"] == ""
    # "explanation" is a key beside the targets, never a turn of its own
    assert not any(r["turn_index"] not in ("", "1", "3") for r in rows)

    lines = io.StringIO()
    write_export(((r, BUCKETS) for r in _records()), "submissions", lines)
    stored = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert stored[0]["answers"]["k1"]["overall_quality"]["explanation"] == {"dialogue": REASON}


def test_analyze_counts_measures_and_lists_free_text():
    tables = add_records(Tables(), ((r, BUCKETS) for r in _records()))
    results = json_safe(compute_results(tables, load_behaviours(None),
                                        Settings(tasks=["t"], resamples=20)))
    texts = {(r["bucket"], r["kind"], r["bot"]): r for r in results["texts"]}
    alpha = texts[("why_text", "answer", "alpha")]
    assert (alpha["n"], alpha["answered"], alpha["missing"]) == (2, 1, 1)
    assert alpha["chars_mean"] == len("Clear and kind answers.") and alpha["words_mean"] == 4
    note = texts[("turn_note", "answer", "alpha")]
    assert (note["answered"], note["missing"], note["chars_max"]) == (1, 1, 9)
    why = texts[("overall_quality", "explanation", "alpha")]
    assert (why["n"], why["answered"]) == (1, 1)
    assert texts[("overall_quality", "explanation", "beta")]["chars_min"] == len("Too short.")
    listed = [(r["bucket"], r["kind"], r["bot"], r["turn"], r["text"])
              for r in results["text_appendix"]]
    assert listed == [
        ("overall_quality", "explanation", "alpha", None, REASON),
        ("overall_quality", "explanation", "beta", None, "Too short."),
        ("turn_note", "answer", "alpha", 1, "Too long."),
        ("why_text", "answer", "alpha", None, "Clear and kind answers."),
        ("why_text", "answer", "beta", None, "It\nrepeated itself."),
    ]
    # the ratings are read as before, beside their explanations
    assert {r["bot"]: r["n"] for r in results["likert"]} == {"alpha": 2, "beta": 1}
    assert not any("why_text" in n or "turn_note" in n for n in results["notes"])

    html = render_report(results)
    assert "Appendix: free text" in html and "Clear and kind answers." in html
    assert "&lt;b&gt;directly&lt;/b&gt; &amp; &quot;kindly&quot;" in html  # text, not markup
    assert "<b>directly</b>" not in html

"""The shared require table (tests/shared/require_cases.json) against the server's check; the
page runs the same table (frontend/tests/requireCases.test.ts), so the two cannot drift."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from collection_and_annotations.blueprints.static_annotation.answers import (
    DialogueView,
    check_bucket,
)
from collection_and_annotations.blueprints.static_annotation.buckets import parse_bucket

TABLE_PATH = Path(__file__).parent / "shared" / "require_cases.json"
TABLE = json.loads(TABLE_PATH.read_text(encoding="utf-8"))


def _bucket_spec(case: dict[str, Any]) -> Any:
    ref = case["bucket"]
    return TABLE["buckets"][ref] if isinstance(ref, str) else ref


@pytest.mark.parametrize("case", TABLE["cases"], ids=[c["name"] for c in TABLE["cases"]])
def test_require_case(case):
    bucket = parse_bucket("b", _bucket_spec(case), TABLE_PATH)
    speakers = case["speakers"]
    assert bucket.target_turns([[s] for s in speakers]) == case["targets"]
    result = check_bucket(DialogueView("d", speakers, ["b"]), bucket, case["answers"])
    missing = sorted({p.turn for p in result.missing}, key=lambda t: -1 if t is None else t)
    expected = case["expected"]
    assert (not result.missing, missing) == (expected["complete"], expected["missing"])
    assert (not result.invalid) == case.get("valid", True), result.invalid


def test_table_covers_every_config_and_require_level():
    specs = [_bucket_spec(c) for c in TABLE["cases"]]
    assert len(TABLE["cases"]) >= 40
    assert {s["config"] for s in specs} == {
        "button_flow", "nondetails_button_flow", "nondetails_nonhelp_button_flow", "multiselect",
        "likert-5-turn", "likert-5-dialogue", "foreach-5-select", "foreach-5-select-dialogue",
        "comparative", "text",
    }
    assert {(s.get("require") or {}).get("level") for s in specs} == {"turn", "dialogue", None}
    assert any(s.get("explain") for s in specs)

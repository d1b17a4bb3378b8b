"""Reading predictions and dialogues into segments, and the errors bad lines get."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collection_and_annotations.metrics.inputs import (
    InputError,
    declared_tag_keys,
    read_jsonl,
    segments_from_records,
    tag_values,
)


def write_lines(path: Path, lines: list[object]) -> Path:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        encoding="utf-8",
    )
    return path


def test_predictions_keep_text_references_tags_and_line_numbers(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "p.jsonl",
        [
            {"id": 1, "hypothesis": "hi", "references": ["hello", "hey"], "tags": {"bot": "a"}},
            "",
            {"id": 2, "hypothesis": "bye", "tags": {"bot": "b", "tasks": ["x", "y"]}},
        ],
    )
    segments = read_jsonl(path)
    assert segments.texts == ["hi", "bye"]
    assert segments.references == [["hello", "hey"], []]
    assert segments.lines == [1, 3]
    assert segments.where(1) == f"{path}, line 3"
    assert declared_tag_keys(segments) == ["bot", "tasks"]
    assert tag_values(segments.records[1], "tasks") == ("x", "y")
    assert tag_values(segments.records[1], "id") == ("2",)  # any field is a tag too
    assert tag_values(segments.records[0], "missing") == ()


def test_dialogues_in_data_lines_and_bare_give_their_system_turns(tmp_path: Path) -> None:
    dialogue = {
        "dialogue_id": "d1",
        "annotation_tasks": ["t1", "t2"],
        "bot": "blender",
        "turns": [["user", "Hi!"], ["system", "Hello."], ["user", "Bye"], ["system", "Bye!"]],
    }
    path = write_lines(tmp_path / "d.jsonl", [{"data": [dialogue, dialogue]}, dialogue])
    segments = read_jsonl(path)
    assert segments.texts == ["Hello.", "Bye!"] * 3
    assert segments.lines == [1, 1, 1, 1, 2, 2]
    assert tag_values(segments.records[0], "annotation_tasks") == ("t1", "t2")
    assert tag_values(segments.records[0], "bot") == ("blender",)


def test_comparative_items_tag_their_two_sides() -> None:
    item = {"turns": [["system", "one"]], "turns2": [["system", "two"]], "group_id": "g"}
    segments = segments_from_records([item])
    assert segments.texts == ["one", "two"]
    assert [tag_values(r, "side") for r in segments.records] == [("1",), ("2",)]
    assert tag_values(segments.records[1], "group_id") == ("g",)


def test_latency_from_numeric_and_iso_timestamps() -> None:
    dialogue = {
        "turns": [
            {"speaker": "user", "text": "hi", "timestamp": 100.0},
            {"speaker": "system", "text": "hello", "timestamp": 101.5},
            ["user", "how are you?", {"timestamp": "2026-11-21T10:00:00Z"}],
            ["system", "fine", {"timestamp": "2026-11-21T10:00:02.250+00:00"}, "extra"],
            ["system", "and you?", {"timestamp": "2026-11-21T10:00:03+00:00"}],
            ["user", "good"],
            ["system", "great", {"timestamp": 5}],
        ]
    }
    segments = segments_from_records([dialogue])
    assert segments.texts == ["hello", "fine", "and you?", "great"]
    # a system turn right after another system turn, or after an untimed user turn: no latency
    assert segments.latencies == [1.5, 2.25, None, None]


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ({"hypothesis": 3}, "'hypothesis' must be a string, got int"),
        ({"hypothesis": "x", "references": "y"}, "'references' must be a list of strings"),
        ({"hypothesis": "x", "tags": {"bot": {"a": 1}}}, "tag 'bot' must be a string"),
        ({"hypothesis": "x", "latency": -1}, "'latency' must be a number of seconds >= 0"),
        ({"turns": [["bot", "hi"]]}, "turns[0]: speaker must be 'user' or 'system', got 'bot'"),
        ({"turns": [["system"]]}, "a turn is [speaker, text, ...]"),
        ({"turns": "hi"}, "'turns' must be a list of turns"),
        ({"data": {"turns": []}}, "'data' must be a list of dialogues"),
        ({"text": "x"}, "not a prediction (needs 'hypothesis'), a dialogue (needs 'turns')"),
        (
            {"turns": [["user", "a", {"timestamp": 9}], ["system", "b", {"timestamp": 8}]]},
            "timestamp is 1.000 s earlier than the user turn before it",
        ),
        ({"turns": [["system", "b", {"timestamp": "yesterday"}]]}, "timestamp must be seconds"),
    ],
)
def test_malformed_records_are_named_with_their_line(record: dict, reason: str) -> None:
    with pytest.raises(InputError) as error:
        segments_from_records([{"hypothesis": "fine"}, record], source="in.jsonl")
    message = str(error.value)
    assert "in.jsonl: 1 malformed record(s)" in message
    assert "line 2: " in message
    assert reason in message


def test_every_bad_line_is_listed_then_skip_invalid_keeps_the_rest(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "bad.jsonl",
        [{"hypothesis": "ok"}, "{not json", '"a string"', {"hypothesis": "fine"}, "[1,"],
    )
    with pytest.raises(InputError) as error:
        read_jsonl(path)
    message = str(error.value)
    assert "3 malformed record(s)" in message
    assert "line 2: invalid JSON" in message
    assert "line 3: expected a JSON object, got str" in message
    assert "line 5: invalid JSON" in message
    assert "--skip-invalid" in message

    warnings: list[str] = []
    segments = read_jsonl(path, skip_invalid=True, warn=warnings.append)
    assert segments.texts == ["ok", "fine"]
    assert "line 2" in warnings[0] and "left out" in warnings[0]


def test_a_line_counts_whole_or_not_at_all(tmp_path: Path) -> None:
    good = {"turns": [["system", "kept"]]}
    bad = {"turns": [["system", "dropped"], ["robot", "?"]]}
    path = write_lines(tmp_path / "mixed.jsonl", [{"data": [good, bad]}, good])
    warnings: list[str] = []
    segments = read_jsonl(path, skip_invalid=True, warn=warnings.append)
    assert segments.texts == ["kept"] and segments.lines == [2]
    assert len(segments.records) == len(segments.fields) == len(segments.latencies) == 1
    assert "line 1: data[1], turns[1]: speaker must be 'user' or 'system'" in warnings[0]


def test_non_utf8_line_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"hypothesis": "ok"}\n{"hypothesis": "caf\xe9"}\n')
    with pytest.raises(InputError, match="line 2: not UTF-8"):
        read_jsonl(path)


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read .*nope.jsonl"):
        read_jsonl(tmp_path / "nope.jsonl")


def test_shared_task_data_files_read_unchanged(shared_dir: Path) -> None:
    files = sorted((shared_dir / "fixtures/cep/task_config/task_data").glob("*.jsonl"))
    assert files
    for path in files:
        segments = read_jsonl(path)
        dialogues = [
            dialogue
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()
            for dialogue in json.loads(line)["data"]
        ]
        system_turns = sum(
            1
            for dialogue in dialogues
            for key in ("turns", "turns2")
            for turn in dialogue.get(key, [])
            if turn[0] == "system"
        )
        assert len(segments) == system_turns, path.name

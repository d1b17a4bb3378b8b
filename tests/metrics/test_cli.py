"""`python -m collection_and_annotations evaluate`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import sacrebleu
from click.testing import CliRunner

from collection_and_annotations.cli.evaluate import evaluate

HYPOTHESES = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
REFERENCES = [
    ["The dog bit the man.", "The dog had bit the man."],
    ["It was not unexpected.", "No one was surprised."],
    ["The man bit him first.", "The man had bitten the dog."],
]


@pytest.fixture
def predictions(tmp_path: Path) -> Path:
    path = tmp_path / "predictions.jsonl"
    records = [
        {"id": i, "hypothesis": h, "references": r, "tags": {"bot": bot}}
        for i, (h, r, bot) in enumerate(zip(HYPOTHESES, REFERENCES, "aba", strict=True))
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(evaluate, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_evaluate_writes_value_signature_n_and_breakdown(predictions: Path, tmp_path: Path) -> None:
    output = tmp_path / "results.json"
    code, _, stderr = run(
        "--input", str(predictions), "--metrics", "bleu,chrf,richness", "--by", "bot",
        "--output", str(output),
    )  # fmt: skip
    assert code == 0, stderr
    results = json.loads(output.read_text(encoding="utf-8"))
    streams = [list(refs) for refs in zip(*REFERENCES, strict=True)]
    bleu = results["metrics"]["bleu"]
    assert bleu["value"] == pytest.approx(sacrebleu.corpus_bleu(HYPOTHESES, streams).score)
    assert (
        bleu["signature"]
        == f"nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:{sacrebleu.__version__}"
    )
    assert bleu["n"] == 3 and set(bleu["by_tag"]["bot"]["groups"]) == {"a", "b"}
    assert results["metrics"]["chrf"]["value"] == pytest.approx(59.7275178, abs=1e-6)
    assert results["metrics"]["richness"]["value"]["num_unigrams"] == 11
    assert results["perf_metric"] == "bleu"
    assert "bleu: 48.53 (n=3)" in stderr and f"results written to {output}" in stderr


def test_evaluate_prints_json_to_stdout_by_default(predictions: Path) -> None:
    code, stdout, _ = run("--input", str(predictions), "--metrics", "ter")
    assert code == 0
    assert json.loads(stdout)["metrics"]["ter"]["direction"] == "lower"


def test_malformed_lines_are_reported_with_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"hypothesis": "a", "references": ["a"]}\n{oops\n[]\n', encoding="utf-8")
    code, _, stderr = run("--input", str(path), "--metrics", "bleu")
    assert code == 1
    assert f"{path}: 2 malformed record(s)" in stderr
    assert "line 2: invalid JSON" in stderr and "line 3: expected a JSON object, got list" in stderr

    code, stdout, stderr = run("--input", str(path), "--metrics", "bleu", "--skip-invalid")
    assert code == 0
    assert "warning:" in stderr and "left out" in stderr
    assert json.loads(stdout)["metrics"]["bleu"]["n"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--metrics", "blue"], "unknown metric 'blue'; available: bleu,"),
        (["--metrics", "bleu", "--by", "model"], "no record has a tag or field 'model'"),
        (["--metrics", "bleu", "--external", "oops"], "expected NAME=COMMAND"),
        (["--metrics", "bleu", "--external", "bleu=cat"], "'bleu' is already registered"),
    ],
)
def test_bad_options_are_clear_errors(predictions: Path, args: list[str], message: str) -> None:
    code, _, stderr = run("--input", str(predictions), *args)
    assert code != 0
    assert message in stderr


def test_list_metrics() -> None:
    code, stdout, _ = run("--list-metrics")
    assert code == 0
    names = [line.split()[0] for line in stdout.splitlines()]
    assert {"bleu", "chrf", "ter", "richness", "latency", "dst", "simultaneous_latency"} <= set(
        names
    )
    assert "richness               responses        mixed" in stdout


def test_external_evaluator_from_the_command_line(
    predictions: Path, serve_command: list[str]
) -> None:
    code, stdout, stderr = run(
        "--input", str(predictions), "--metrics", "ext,bleu",
        "--external", "ext=" + " ".join(serve_command), "--by", "bot",
    )  # fmt: skip
    assert code == 0, stderr
    metrics = json.loads(stdout)["metrics"]
    assert metrics["ext"]["value"] == pytest.approx(metrics["bleu"]["value"] / 100, abs=1e-12)
    assert metrics["ext"]["direction"] == "higher"


def test_failing_external_evaluator_names_command_file_and_line(
    predictions: Path, tmp_path: Path
) -> None:
    script = tmp_path / "flaky.py"
    script.write_text(
        "import sys\nfor n, line in enumerate(sys.stdin):\n"
        "    print('7' if n == 0 else 'crash!', flush=True)\n",
        encoding="utf-8",
    )
    code, _, stderr = run(
        "--input", str(predictions), "--metrics", "flaky",
        "--external", f"flaky:lower={sys.executable} {script}",
    )  # fmt: skip
    assert code == 1
    assert f"external metric `{sys.executable} {script}` answered 'crash!'" in stderr
    assert f"request ({predictions}, line 2)" in stderr


def test_module_entry_point_on_shared_dialogues(shared_dir: Path, tmp_path: Path) -> None:
    data = shared_dir / "fixtures/cep/task_config/task_data/likert_turn.jsonl"
    output = tmp_path / "richness.json"
    command = [sys.executable, "-m", "collection_and_annotations", "evaluate", "--input", str(data)]
    command += ["--metrics", "richness", "--by", "annotation_tasks", "--output", str(output)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    results = json.loads(output.read_text(encoding="utf-8"))
    richness = results["metrics"]["richness"]
    dialogues = [
        dialogue
        for line in data.read_text(encoding="utf-8").splitlines()
        if line.strip()
        for dialogue in json.loads(line)["data"]
    ]
    assert richness["n"] == sum(
        1 for dialogue in dialogues for turn in dialogue["turns"] if turn[0] == "system"
    )
    tasks = {task for dialogue in dialogues for task in dialogue["annotation_tasks"]}
    assert set(richness["by_tag"]["annotation_tasks"]["groups"]) == tasks
    assert "perf_metric" not in results  # richness alone has no single value to rank by

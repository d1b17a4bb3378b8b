"""The mteval line protocol: the project's server and the external-evaluator client, both real
processes, plus evaluators that exit early, hang or print garbage."""

from __future__ import annotations

import selectors
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import sacrebleu

from collection_and_annotations.metrics import Direction, compute_metrics, default_registry
from collection_and_annotations.metrics.matching import ExactMatch
from collection_and_annotations.metrics.mteval import (
    ExternalMetric,
    ExternalMetricError,
    external_spec,
    score_request,
)
from collection_and_annotations.metrics.sacrebleu_metrics import Bleu
from collection_and_annotations.metrics.serve import ProtocolServer

HYPOTHESES = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
REFERENCES = [
    ["The dog bit the man.", "The dog had bit the man."],
    ["It was not unexpected.", "No one was surprised."],
    ["The man bit him first.", "The man had bitten the dog."],
]


def read_line(process: subprocess.Popen, timeout: float = 20.0) -> str:
    """One line of the process's stdout, failing (not hanging) if none comes in time."""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        assert selector.select(timeout), "no line: the server did not flush its answer"
    return process.stdout.readline().rstrip("\n")


def test_server_answers_and_flushes_each_line_as_it_comes(serve_command: list[str]) -> None:
    process = subprocess.Popen(
        serve_command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    )
    try:
        rows = []
        for hypothesis, references in zip(HYPOTHESES, REFERENCES, strict=True):
            process.stdin.write(score_request(hypothesis, references) + "\n")
            process.stdin.flush()
            rows.append([float(x) for x in read_line(process).split()])
        summed = [sum(column) for column in zip(*rows, strict=True)]
        assert summed == [14, 7, 5, 3, 17, 14, 11, 8, 17, 18]  # cdec layout
        process.stdin.write("EVAL ||| " + " ".join(f"{s:g}" for s in summed) + "\n")
        process.stdin.flush()
        streams = [list(refs) for refs in zip(*REFERENCES, strict=True)]
        expected = sacrebleu.corpus_bleu(HYPOTHESES, streams).score / 100
        assert float(read_line(process)) == pytest.approx(expected, abs=1e-12)
        process.stdin.write("HELLO\n")
        process.stdin.flush()
        assert read_line(process).startswith("ERROR unknown request 'HELLO'")
    finally:
        process.stdin.close()
        assert process.wait(timeout=20) == 0


def test_server_refuses_metrics_that_are_not_additive() -> None:
    command = [sys.executable, "-m", "collection_and_annotations.metrics.serve", "richness"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 2
    assert "'richness' cannot be served" in done.stderr and "bleu, ibm_bleu" in done.stderr


def test_client_over_the_server_equals_sacrebleu_overall_and_per_tag(
    serve_command: list[str],
) -> None:
    registry = default_registry()
    registry.add("served_bleu",
                 external_spec("served_bleu", serve_command, Direction.HIGHER, timeout=30))
    records = [
        {"hypothesis": h, "references": r, "tags": {"bot": bot}}
        for h, r, bot in zip(HYPOTHESES, REFERENCES, ["a", "b", "a"], strict=True)
    ]
    result = compute_metrics(records, ["served_bleu", "bleu"], registry=registry)
    served, bleu = result["metrics"]["served_bleu"], result["metrics"]["bleu"]
    assert served["signature"].startswith("mteval:") and served["signature"].endswith("serve bleu")
    assert served["value"] == pytest.approx(bleu["value"] / 100, abs=1e-12)
    for tag, group in bleu["by_tag"]["bot"]["groups"].items():
        assert served["by_tag"]["bot"]["groups"][tag]["value"] == pytest.approx(
            group["value"] / 100, abs=1e-12
        )


def evaluator(tmp_path: Path, body: str) -> list[str]:
    """A small evaluator script; `answer(line)` returns what it prints for a request."""
    script = tmp_path / "evaluator.py"
    script.write_text(
        "import sys, time\n"
        + textwrap.dedent(body)
        + textwrap.dedent(
            """
            for line in sys.stdin:
                print(answer(line.rstrip("\\n")), flush=True)
            """
        ),
        encoding="utf-8",
    )
    return [sys.executable, str(script)]


def score_with(command: list[str], timeout: float = 10.0) -> float:
    metric = ExternalMetric(command, timeout=timeout)
    try:
        return metric.corpus_score(HYPOTHESES, REFERENCES).value
    finally:
        metric.close()


def test_evaluator_that_exits_early(tmp_path: Path) -> None:
    command = evaluator(
        tmp_path,
        """
        def answer(line):
            if "surprising" in line:
                print("out of memory", file=sys.stderr, flush=True)
                sys.exit(3)
            return "1 1"
        """,
    )
    with pytest.raises(ExternalMetricError) as error:
        score_with(command)
    message = str(error.value)
    assert f"`{command[0]} {command[1]}` exited (status 3) without answering" in message
    assert "request (segment 2): " in message and "SCORE ||| It was not unexpected." in message
    assert "out of memory" in message


def test_evaluator_that_hangs_times_out(tmp_path: Path) -> None:
    command = evaluator(
        tmp_path,
        """
        def answer(line):
            time.sleep(600)
        """,
    )
    start = time.monotonic()
    with pytest.raises(
        ExternalMetricError, match=r"gave no answer within 0.5 s; request \(segment 1\)"
    ):
        score_with(command, timeout=0.5)
    assert time.monotonic() - start < 10


def test_evaluator_that_never_reads_its_input_times_out(tmp_path: Path) -> None:
    script = tmp_path / "deaf.py"
    script.write_text("import time\ntime.sleep(600)\n", encoding="utf-8")
    metric = ExternalMetric([sys.executable, str(script)], timeout=0.5)
    long_texts = ["word " * 20_000] * 20  # more than a pipe buffer: writing alone would block
    start = time.monotonic()
    with pytest.raises(ExternalMetricError, match="gave no answer within 0.5 s"):
        metric.corpus_score(long_texts, [["ref"]] * 20)
    metric.close()
    assert time.monotonic() - start < 10


GROWING = "n = 0\ndef answer(line):\n    global n\n    n += 1\n    return ' '.join(['1'] * n)\n"
BAD_EVAL = "def answer(line):\n    return 'oops' if line.startswith('EVAL') else '1 2'\n"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("def answer(line):\n    return 'hello world'\n", "answered 'hello world' instead of"),
        ("def answer(line):\n    return ''\n", "answered '' instead of space-separated numbers"),
        ("def answer(line):\n    return 'nan 1'\n", "answered 'nan 1' instead of space-sep"),
        (GROWING, "answered 2 statistics where earlier lines had 1"),
        (BAD_EVAL, "answered 'oops' instead of one number; request (EVAL): 'EVAL ||| 3 6'"),
    ],
    ids=["garbage", "empty", "nan", "width-changes", "bad-eval"],
)
def test_evaluator_that_prints_something_else(tmp_path: Path, body: str, problem: str) -> None:
    command = evaluator(tmp_path, body)
    with pytest.raises(ExternalMetricError) as error:
        score_with(command)
    assert problem in str(error.value)
    assert f"external metric `{command[0]} {command[1]}`" in str(error.value)


def test_missing_command_is_a_clear_error() -> None:
    with pytest.raises(ExternalMetricError, match="cannot start external metric `no-such-scorer"):
        score_with(["no-such-scorer-1b2c", "--flag"])


def test_requests_keep_one_line_per_segment() -> None:
    assert score_request("a\nb", ["r1", "r\r\n2"]) == "SCORE ||| r1 ||| r 2 ||| a b"
    with pytest.raises(ValueError, match="the mteval field separator"):
        score_request("a ||| b", ["r"])


def test_bleu_rows_sum_like_the_protocol_says() -> None:
    rows = Bleu().segment_statistics(HYPOTHESES, REFERENCES)
    assert rows.sum(axis=0).tolist() == [14, 7, 5, 3, 17, 14, 11, 8, 17, 18]


def test_any_additive_reference_metric_can_be_served() -> None:
    server = ProtocolServer(ExactMatch())
    assert server.answer("SCORE ||| yes ||| no ||| yes\n") == "1 1"
    assert server.answer("SCORE ||| yes ||| maybe") == "0 1"
    assert server.answer("EVAL ||| 1 2") == "0.5"
    assert server.answer("EVAL ||| 1 x").startswith("ERROR EVAL needs 2 numbers")

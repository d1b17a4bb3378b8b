"""Serve a metric over cdec's mteval line protocol on stdin/stdout.

    python -m collection_and_annotations.metrics.serve bleu

For each input line exactly one line is written and flushed:

- `SCORE ||| ref1 ||| ref2 ||| hyp` -> the segment's additive statistics, space-separated
  (BLEU: correct 1..4, total 1..4, hypothesis length, closest reference length);
- `EVAL ||| s1 s2 ...` -> the score of summed statistics on the 0-1 scale (for BLEU, the same as
  sacrebleu's corpus BLEU / 100 of the segments whose statistics were summed);
- anything else -> `ERROR <reason>`, and the server keeps serving.

The server exits when its input ends.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterable
from typing import TextIO

import click
import numpy as np

from collection_and_annotations.metrics.base import MetricError, ReferenceMetric
from collection_and_annotations.metrics.mteval import SEPARATOR, format_number, parse_numbers
from collection_and_annotations.metrics.registry import default_registry


class ProtocolServer:
    """Answers protocol lines for one additive reference-based metric."""

    def __init__(self, metric: ReferenceMetric) -> None:
        self.metric = metric
        self.width = metric.segment_statistics(["x"], [["x"]]).shape[1]

    def answer(self, line: str) -> str:
        """The one-line answer to one request line."""
        command, _, rest = line.rstrip("\r\n").partition(SEPARATOR)
        command = command.strip()
        try:
            if command == "SCORE":
                return self._score([field.strip() for field in rest.split(SEPARATOR)])
            if command == "EVAL":
                return self._evaluate(rest)
        except MetricError as exc:
            return f"ERROR {exc}"
        return f"ERROR unknown request {command[:40]!r}: expected SCORE or EVAL"

    def serve(self, lines: Iterable[str], out: TextIO) -> None:
        """Answer every line, flushing each answer."""
        for line in lines:
            out.write(self.answer(line) + "\n")
            out.flush()

    def _score(self, fields: list[str]) -> str:
        if len(fields) < 2:
            return "ERROR SCORE needs references and a hypothesis: SCORE ||| ref ||| hyp"
        row = self.metric.segment_statistics([fields[-1]], [fields[:-1]])[0]
        return " ".join(format_number(value) for value in row)

    def _evaluate(self, text: str) -> str:
        try:
            summed = np.array(parse_numbers(text))
        except ValueError:
            return f"ERROR EVAL needs {self.width} numbers: EVAL ||| s1 s2 ..."
        if len(summed) != self.width:
            return f"ERROR EVAL needs {self.width} numbers, got {len(summed)}"
        return repr(float(self.metric.score_from_sum(summed).value) / self.metric.eval_scale)


def servable_metrics() -> list[str]:
    """Names of the registered metrics the protocol can serve (additive, reference-based)."""
    return [spec.name for spec in default_registry() if isinstance(spec.factory(), ReferenceMetric)]


@click.command()
@click.argument("metric_name", metavar="METRIC")
def main(metric_name: str) -> None:
    """Serve METRIC (e.g. bleu, ibm_bleu, chrf, ter) over the mteval protocol on stdin/stdout."""
    registry = default_registry()
    if metric_name not in registry:
        raise click.UsageError(
            f"unknown metric {metric_name!r}; servable: {', '.join(servable_metrics())}"
        )
    metric = registry.get(metric_name).factory()
    if not isinstance(metric, ReferenceMetric):
        raise click.UsageError(
            f"{metric_name!r} cannot be served: the protocol needs additive reference-based "
            f"statistics; servable: {', '.join(servable_metrics())}"
        )
    lines = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8")
    ProtocolServer(metric).serve(lines, out)


if __name__ == "__main__":
    main()

"""External evaluators over cdec's mteval line protocol.

The platform starts the evaluator's command and, per segment, writes
`SCORE ||| ref1 ||| ref2 ||| hyp` and reads one line of space-separated additive statistics; it
sums them over the corpus (or over a tag's segments), writes `EVAL ||| s1 s2 ...` and reads one
float. Every line written is flushed; every answer is awaited with a timeout, and an evaluator
that exits, hangs or prints something else fails with an error naming the command and the line.
"""

from __future__ import annotations

import math
import queue
import shlex
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import IO, TYPE_CHECKING

import numpy as np

from collection_and_annotations.metrics.base import (
    Direction,
    Kind,
    MetricError,
    MetricSpec,
    Progress,
    ReferenceMetric,
    Score,
    Statistics,
)

if TYPE_CHECKING:
    from collection_and_annotations.metrics.inputs import Segments

SEPARATOR = "|||"
DEFAULT_TIMEOUT = 60.0
_QUOTE = 120  # characters of a request or answer quoted in errors
_STDERR_LINES = 10


class ExternalMetricError(MetricError):
    """An external evaluator failed or broke the protocol."""


def format_number(value: float) -> str:
    """A statistic as the protocol writes it: integers without a decimal point."""
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


def parse_numbers(text: str) -> list[float]:
    """Space-separated finite numbers; ValueError if anything else is there."""
    values = [float(field) for field in text.split()]
    if not values or not all(math.isfinite(v) for v in values):
        raise ValueError(text)
    return values


def score_request(hypothesis: str, references: Sequence[str]) -> str:
    """The SCORE line of one segment (line breaks inside a text become spaces)."""
    fields = [*references, hypothesis]
    if any(SEPARATOR in field for field in fields):
        raise MetricError(
            f"a text contains {SEPARATOR!r}, the mteval field separator: {fields[-1][:_QUOTE]!r}"
        )
    return " ||| ".join(["SCORE", *(" ".join(field.splitlines()) for field in fields)])


class MtevalProcess:
    """One running evaluator; answers are read by a thread so that waiting can time out."""

    def __init__(self, command: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> None:
        self.name = shlex.join(command)
        self.timeout = timeout
        try:
            self._process = subprocess.Popen(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
            )
        except OSError as exc:
            raise ExternalMetricError(f"cannot start external metric `{self.name}`: {exc}") from exc
        self._answers: queue.Queue[str | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        self._stderr_reader = _thread(self._stderr.extend, self._process.stderr)
        self._writer: threading.Thread | None = None
        _thread(self._read_answers, self._process.stdout)

    def score(
        self,
        requests: Sequence[str],
        where: Callable[[int], str],
        progress: Progress | None = None,
    ) -> np.ndarray:
        """Send every SCORE line (pipelined by a writer thread) and read one row per line."""
        self._writer = _thread(self._write, requests)
        rows: list[list[float]] = []
        for index, request in enumerate(requests):
            answer = self._answer(request, where(index))
            try:
                row = parse_numbers(answer)
            except ValueError:
                raise self._error(
                    f"answered {answer[:_QUOTE]!r} instead of space-separated numbers",
                    request,
                    where(index),
                ) from None
            if rows and len(row) != len(rows[0]):
                raise self._error(
                    f"answered {len(row)} statistics where earlier lines had {len(rows[0])}",
                    request,
                    where(index),
                )
            rows.append(row)
            if progress is not None:
                progress(1)
        return np.asarray(rows, dtype=np.float64)

    def evaluate(self, summed: Iterable[float]) -> float:
        """EVAL summed statistics and read the score."""
        request = " ".join(["EVAL", SEPARATOR, *(format_number(v) for v in summed)])
        if self._writer is not None:
            self._writer.join(self.timeout)
        self._writer = _thread(self._write, [request])
        answer = self._answer(request, "EVAL")
        try:
            (value,) = parse_numbers(answer)
        except ValueError:
            raise self._error(
                f"answered {answer[:_QUOTE]!r} instead of one number", request, "EVAL"
            ) from None
        return value

    def close(self) -> None:
        """Close stdin (the evaluator's cue to exit), then stop it if it lingers."""
        if self._process.poll() is None:
            try:
                self._process.stdin.close()
                self._process.wait(timeout=min(self.timeout, 5.0))
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()

    def _answer(self, request: str, where: str) -> str:
        try:
            answer = self._answers.get(timeout=self.timeout)
        except queue.Empty:
            raise self._error(f"gave no answer within {self.timeout:g} s", request, where) from None
        if answer is None:
            try:
                status = f"status {self._process.wait(timeout=5.0)}"
            except subprocess.TimeoutExpired:
                status = "closed its output"
            raise self._error(f"exited ({status}) without answering", request, where)
        return answer.rstrip("\r\n")

    def _error(self, problem: str, request: str, where: str) -> ExternalMetricError:
        """The error to raise; a broken evaluator is stopped first (its stderr then ends)."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        self._stderr_reader.join(1.0)
        stderr = "".join(self._stderr).strip()
        note = f"\nits stderr ended with:\n{stderr}" if stderr else ""
        return ExternalMetricError(
            f"external metric `{self.name}` {problem}; request ({where}): "
            f"{request[:_QUOTE]!r}{note}"
        )

    def _read_answers(self, stream: IO[str]) -> None:
        for line in stream:
            self._answers.put(line)
        self._answers.put(None)

    def _write(self, lines: Iterable[str]) -> None:
        try:
            for line in lines:
                self._process.stdin.write(line + "\n")
                self._process.stdin.flush()
        except (OSError, ValueError):
            pass  # the evaluator is gone or closed; the reader reports it with its status


def _thread(target: Callable[[object], object], argument: object) -> threading.Thread:
    """Run `target(argument)` in a daemon thread (the protocol's blocking pipe I/O)."""
    thread = threading.Thread(target=target, args=(argument,), daemon=True)
    thread.start()
    return thread


class ExternalMetric(ReferenceMetric):
    """A reference-based metric computed by an evaluator command over the mteval protocol.

    The process starts on first use and stays up for the EVAL of the corpus and of each tag.
    """

    def __init__(self, command: str | Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> None:
        self.command = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.command:
            raise MetricError("an external metric needs a command")
        self.timeout = timeout
        self._process: MtevalProcess | None = None

    @property
    def signature(self) -> str:
        return f"mteval:{shlex.join(self.command)}"

    def segment_statistics(
        self,
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        progress: Progress | None = None,
    ) -> np.ndarray:
        return self._rows(hypotheses, references, lambda i: f"segment {i + 1}", progress)

    def statistics(self, segments: Segments, progress: Progress | None = None) -> Statistics:
        rows = self._rows(segments.texts, segments.references, segments.where, progress)
        return Statistics.complete(rows)

    def score_from_sum(self, summed: np.ndarray) -> Score:
        return Score(self._evaluator().evaluate(summed))

    def close(self) -> None:
        if self._process is not None:
            self._process.close()
            self._process = None

    def _rows(
        self,
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        where: Callable[[int], str],
        progress: Progress | None,
    ) -> np.ndarray:
        if not hypotheses:
            raise MetricError("no hypotheses to score")
        requests = [score_request(h, r) for h, r in zip(hypotheses, references, strict=True)]
        return self._evaluator().score(requests, where, progress)

    def _evaluator(self) -> MtevalProcess:
        if self._process is None:
            self._process = MtevalProcess(self.command, self.timeout)
        return self._process


def external_spec(
    name: str,
    command: str | Sequence[str],
    direction: Direction = Direction.HIGHER,
    timeout: float = DEFAULT_TIMEOUT,
) -> MetricSpec:
    """A registry entry for an evaluator command (for `Registry.register`)."""
    shown = command if isinstance(command, str) else shlex.join(command)
    return MetricSpec(
        name,
        Kind.REFERENCE,
        f"External evaluator over the mteval protocol: `{shown}`.",
        direction,
        lambda: ExternalMetric(command, timeout),
    )

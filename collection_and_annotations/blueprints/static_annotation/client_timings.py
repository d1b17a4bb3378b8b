"""Per-step time from the page's timings, as stored (`submissions.timings.client`).

The page sends `steps: [{"dialogue": key, "bucket": name, "intervals": [[start_ms, end_ms],
...]}]` (docs/worker-api.md). It is the worker's browser speaking, so nothing here trusts the
shape: malformed entries are skipped, never an error, and an export never breaks on them.
"""

from __future__ import annotations

from typing import Any

MAX_STEPS = 10_000  # far more steps than any unit has; bounds the work on hostile input
# A time stamp beyond this (2^53 ms, ~285,000 years) is not a time: skipped, never converted
# (a 401-digit integer would overflow a float)
MAX_MS = 2**53


def _interval_ms(interval: Any) -> float | None:
    if not isinstance(interval, list | tuple) or len(interval) != 2:
        return None
    if not all(isinstance(t, int | float) and not isinstance(t, bool) for t in interval):
        return None
    try:  # an integer stored before the worker API bounded them may be past any float
        start, end = (float(t) for t in interval)
    except OverflowError:
        return None
    if not all(abs(t) < MAX_MS for t in (start, end)) or end < start:  # NaN fails too
        return None
    return float(end - start)


def step_seconds(client: Any) -> dict[tuple[str, str], float]:
    """Seconds spent per (dialogue key, bucket), summed over the step's valid intervals."""
    steps = client.get("steps") if isinstance(client, dict) else None
    if not isinstance(steps, list):
        return {}
    totals: dict[tuple[str, str], float] = {}
    for step in steps[:MAX_STEPS]:
        if not isinstance(step, dict):
            continue
        key, bucket, intervals = step.get("dialogue"), step.get("bucket"), step.get("intervals")
        if not isinstance(key, str) or not isinstance(bucket, str) or not isinstance(
            intervals, list
        ):
            continue
        spans = [ms for ms in map(_interval_ms, intervals[:MAX_STEPS]) if ms is not None]
        if spans:
            totals[(key, bucket)] = totals.get((key, bucket), 0.0) + sum(spans) / 1000
    return {k: round(v, 3) for k, v in totals.items()}

"""Quality figures from the submissions: screening pass rate, gold accuracy, time per unit, per
worker and overall, and which work the results "without flagged workers" leave out.

The exclusion rule (docs/analysis.md) uses only what the export records carry, so it gives the
same answer from the database and from an export file."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from typing import Any

import numpy as np

from collection_and_annotations.analysis.load import REJECTED, Tables
from collection_and_annotations.blueprints.base import GOLD_POOL, QUALITY_POOLS, SCREENING_POOL

EXCLUSION_RULE = (
    "every submission flagged for review is left out, and every submission of a worker who "
    "failed a screening unit or failed more than {max_failed_golds} gold unit(s) "
    "(quality_passed false); screening and gold units never count in the main figures"
)


def _scored(units: list[dict[str, Any]], pool: str) -> list[dict[str, Any]]:
    return [u for u in units if u["pool"] == pool and u["passed"] is not None]


def _pass_rate(units: list[dict[str, Any]]) -> dict[str, Any]:
    passed = sum(bool(u["passed"]) for u in units)
    return {"passed": passed, "scored": len(units),
            "rate": passed / len(units) if units else None}


def _gold_accuracy(units: list[dict[str, Any]]) -> dict[str, Any]:
    mistakes = [u["mistakes"] for u in units if isinstance(u["mistakes"], int)]
    return {**_pass_rate(units),
            "mean_mistakes": float(np.mean(mistakes)) if mistakes else None}


def _quantiles(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    q = np.percentile(values, [10, 50, 90])
    return {"p10": float(q[0]), "median": float(q[1]), "p90": float(q[2])}


def _seconds(units: list[dict[str, Any]]) -> list[float]:
    return [u["seconds"] for u in units if isinstance(u["seconds"], int | float)]


def exclusion_reason(units: list[dict[str, Any]], max_failed_golds: int) -> str | None:
    """Why all of a worker's work is left out (None: it is kept, unless flagged)."""
    if any(u["passed"] is False for u in units if u["pool"] == SCREENING_POOL):
        return "failed screening"
    failed = sum(u["passed"] is False for u in units if u["pool"] == GOLD_POOL)
    if failed > max_failed_golds:
        return f"failed {failed} gold unit(s)"
    return None


def _by_worker(tables: Tables) -> dict[str, list[dict[str, Any]]]:
    workers: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for unit in tables.units.values():
        workers[str(unit["worker"])].append(unit)
    return dict(sorted(workers.items()))


def worker_exclusions(tables: Tables, max_failed_golds: int) -> dict[str, str]:
    """Workers all of whose work the results without flagged workers leave out, and why."""
    reasons = {worker: exclusion_reason(units, max_failed_golds)
               for worker, units in _by_worker(tables).items()}
    return {worker: reason for worker, reason in reasons.items() if reason}


def excluded_units(tables: Tables, workers: Collection[str]) -> set[str]:
    """The work units left out: flagged for review, or done by one of `workers`."""
    return {unit for unit, u in tables.units.items() if u["pool"] not in QUALITY_POOLS
            and (u["flagged"] or str(u["worker"]) in workers)}


def quality(tables: Tables, max_failed_golds: int) -> dict[str, Any]:
    """Overall and per-worker quality figures; `seconds` are the server's time per unit."""
    work = [u for u in tables.units.values() if u["pool"] not in QUALITY_POOLS]
    per_worker = []
    for worker, units in _by_worker(tables).items():
        mine = [u for u in units if u["pool"] not in QUALITY_POOLS]
        seconds = _seconds(mine)
        screening = _pass_rate(_scored(units, SCREENING_POOL))
        gold = _gold_accuracy(_scored(units, GOLD_POOL))
        per_worker.append({
            "worker": worker, "units": len(mine),
            "median_seconds": float(np.median(seconds)) if seconds else None,
            "flagged_units": sum(u["flagged"] for u in mine),
            "rejected_units": sum(u["review"] in REJECTED for u in mine),
            "screening_scored": screening["scored"], "screening_passed": screening["passed"],
            "screening_pass_rate": screening["rate"],
            "gold_scored": gold["scored"], "gold_passed": gold["passed"],
            "gold_accuracy": gold["rate"], "gold_mean_mistakes": gold["mean_mistakes"],
            "excluded": exclusion_reason(units, max_failed_golds)
            or ("flagged units only" if any(u["flagged"] for u in mine) else None),
        })
    units = list(tables.units.values())
    pools: dict[str, int] = defaultdict(int)
    for unit in units:
        pools[unit["pool"]] += 1
    return {
        "units": len(work), "workers": len({str(u["worker"]) for u in work}),
        "units_by_pool": dict(sorted(pools.items())),
        "seconds_per_unit": _quantiles(_seconds(work)),
        "screening_pass_rate": _pass_rate(_scored(units, SCREENING_POOL)),
        "gold_accuracy": _gold_accuracy(_scored(units, GOLD_POOL)),
        "per_worker": per_worker,
    }
